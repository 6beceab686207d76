/** Formats a value in a pprof unit for terminal output (the exact integer stays in --json). */
export function formatValue(v: number, unit: string): string {
  const a = Math.abs(v);
  if (unit === 'nanoseconds') {
    if (a >= 1e9) return `${(v / 1e9).toFixed(2)}s`;
    if (a >= 1e6) return `${(v / 1e6).toFixed(2)}ms`;
    if (a >= 1e3) return `${(v / 1e3).toFixed(2)}us`;
    return `${v}ns`;
  }
  if (unit === 'microseconds') return formatValue(v * 1000, 'nanoseconds');
  if (unit === 'bytes') {
    if (a >= 2 ** 30) return `${(v / 2 ** 30).toFixed(2)}GB`;
    if (a >= 2 ** 20) return `${(v / 2 ** 20).toFixed(2)}MB`;
    if (a >= 2 ** 10) return `${(v / 2 ** 10).toFixed(2)}kB`;
    return `${v}B`;
  }
  return String(v);
}

/** Right-aligns every column but the last. */
export function table(head: string[], rows: string[][]): string {
  const all = [head, ...rows];
  const widths = head.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  return all
    .map((r) => r.map((cell, c) => (c === r.length - 1 ? cell : cell.padStart(widths[c]!))).join('  '))
    .join('\n');
}
