const PCT = String.raw`-?[\d.]+(?:e[-+]?\d+)?%`;
const ROW = new RegExp(String.raw`^\s*(-?[\d.]+)[a-zA-Z]*\s+${PCT}\s+${PCT}\s+(-?[\d.]+)[a-zA-Z]*\s+${PCT}\s+(.*)$`);

/**
 * Reads `go tool pprof -top -nodecount=0 -unit=<unit>` text: exact integer flat/cum per function.
 * Every row of the table must parse: a row it cannot read is an error, never silently skipped.
 */
export function parseTopAll(text: string): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  let inTable = false;
  for (const line of text.split('\n')) {
    if (/^\s+flat\s+flat%/.test(line)) {
      inTable = true;
      continue;
    }
    if (!inTable || line.trim() === '') continue;
    const m = ROW.exec(line);
    if (!m) throw new Error(`unreadable pprof -top row: ${line}`);
    const name = m[3]!.replace(/ \((partial-)?inline\)$/, '');
    out.set(name, [Number(m[1]), Number(m[2])]);
  }
  return out;
}

/**
 * Reads the kept total from `go tool pprof -top -nodecount=0 -nodefraction=0` text: "Showing nodes
 * accounting for X, …", the sum of every function's flat once the filters applied. X must carry no
 * unit beyond a suffix (pass -unit=<the sample type's unit>), or be 0.
 */
export function parseTopShown(text: string): number {
  const m = /^Showing nodes accounting for (-?[\d.]+(?:e[-+]?\d+)?)[a-zA-Z]*, /m.exec(text);
  if (!m) throw new Error(`no "Showing nodes accounting for" line in pprof output:\n${text.slice(0, 2000)}`);
  return Number(m[1]);
}

/**
 * Every row of `go tool pprof -top -nodecount=0 -unit=<unit>` text as [name, flat, cum], in the order
 * printed, the "(inline)" mark dropped. Unlike parseTopAll, rows of the same name stay apart (pprof's
 * -files prints a file once per function starting in it).
 */
export function parseTopRows(text: string): [string, number, number][] {
  const out: [string, number, number][] = [];
  let inTable = false;
  for (const line of text.split('\n')) {
    if (/^\s+flat\s+flat%/.test(line)) {
      inTable = true;
      continue;
    }
    if (!inTable || line.trim() === '') continue;
    const m = ROW.exec(line);
    if (!m) throw new Error(`unreadable pprof -top row: ${line}`);
    out.push([m[3]!.replace(/ \((partial-)?inline\)$/, ''), Number(m[1]), Number(m[2])]);
  }
  return out;
}

/** One source line of `go tool pprof -unit=ns -list`: its flat and cum ("." is 0) and its text. */
export interface ListLine {
  line: number;
  flat: number;
  cum: number;
  text: string;
}

/** `go tool pprof -unit=ns -list` output: each source line with its flat and cum. */
export function parseList(text: string): ListLine[] {
  const out: ListLine[] = [];
  for (const l of text.split('\n')) {
    const m = /^\s*(\S+)\s+(\S+)\s+(\d+):(.*)$/.exec(l);
    if (!m) continue;
    const num = (s: string) => (s === '.' ? 0 : Number(s.replace(/ns$/, '')));
    out.push({ line: Number(m[3]), flat: num(m[1]!), cum: num(m[2]!), text: m[4]! });
  }
  return out;
}
