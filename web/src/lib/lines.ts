import type { DiffRow, Granularity } from './api.ts';

/** A Go regular expression matching exactly `s`. */
export function goQuote(s: string): string {
  return s.replace(/[\\.+*?()|[\]{}^$]/g, '\\$&');
}

/** The function a focused frame stands for: a line node (`fn file:line`) names its function first. */
export function functionOf(fn: string, granularity: Granularity): string {
  return granularity === 'lines' ? fn.replace(/ \S*:\d+$/, '') : fn;
}

/** One source line of a function: where it is (parsed from the contract's row name), and the row itself. */
export interface LineRow {
  file: string;
  line: number;
  row: DiffRow;
}

/** The rows of one function's source lines out of a diff at line granularity, by file and line. */
export function functionLines(rows: readonly DiffRow[], fn: string): LineRow[] {
  const out: LineRow[] = [];
  for (const row of rows) {
    if (!row.name.startsWith(`${fn} `)) continue;
    const m = /^(.*):(\d+)$/.exec(row.name.slice(fn.length + 1));
    if (m) out.push({ file: m[1]!, line: Number(m[2]), row });
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}
