import { maxOf } from '../analysis/extent.ts';
import { termText } from '../api/untrusted-text.ts';

/** Right-aligns every column but the last. Cells are untrusted text (function names): printed as termText. */
export function table(head: string[], rows: string[][]): string {
  const all = [head, ...rows].map((r) => r.map((cell) => termText(cell)));
  const widths = head.map((_, c) => maxOf(all.map((r) => (r[c] ?? '').length)));
  return all
    .map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padStart(widths[c]!))).join('  '))
    .join('\n');
}
