import { maxOf } from '../analysis/extent.ts';

/** Right-aligns every column but the last. */
export function table(head: string[], rows: string[][]): string {
  const all = [head, ...rows];
  const widths = head.map((_, c) => maxOf(all.map((r) => (r[c] ?? '').length)));
  return all
    .map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padStart(widths[c]!))).join('  '))
    .join('\n');
}
