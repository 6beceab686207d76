/** Comparing a trace's derived profiles and summary with Go's answers (tests only). */
import { flatCum, percentageBase } from '../../src/analysis/flat-cum.ts';
import type { Profile } from '../../src/model/profile.ts';
import { parseTopAll } from './pprof-text.ts';

/** The total pprof reports ("… of X total"), in the unit the report was asked for. */
export function reportTotal(text: string): number {
  const m = /of (-?[\d.]+)\w* total/.exec(text);
  if (!m) throw new Error(`no total in:\n${text.slice(0, 400)}`);
  return Number(m[1]);
}

/**
 * Every number of `ours` within 0.1 % of `ref` (and every string, boolean and null equal, every
 * array as long); returns how many figures were compared.
 */
export function compareWithin(ours: unknown, ref: unknown, path: string, mismatches: string[]): number {
  if (typeof ref === 'number' && typeof ours === 'number') {
    const tol = Math.max(Math.abs(ref), Math.abs(ours)) * 1e-3;
    if (Math.abs(ref - ours) > tol) mismatches.push(`${path}: ${ours} vs ${ref}`);
    return 1;
  }
  if (Array.isArray(ref)) {
    if (!Array.isArray(ours) || ours.length !== ref.length) {
      mismatches.push(`${path}: length ${Array.isArray(ours) ? ours.length : typeof ours} vs ${ref.length}`);
      return 1;
    }
    return ref.reduce<number>((n, r, i) => n + compareWithin(ours[i], r, `${path}[${i}]`, mismatches), 0);
  }
  if (ref !== null && typeof ref === 'object') {
    if (ours === null || typeof ours !== 'object') {
      mismatches.push(`${path}: ${JSON.stringify(ours)} vs an object`);
      return 1;
    }
    const keys = new Set([...Object.keys(ref), ...Object.keys(ours as object)]);
    let n = 0;
    for (const k of keys)
      n += compareWithin(
        (ours as Record<string, unknown>)[k],
        (ref as Record<string, unknown>)[k],
        `${path}.${k}`,
        mismatches,
      );
    return n;
  }
  if (ours !== ref) mismatches.push(`${path}: ${JSON.stringify(ours)} vs ${JSON.stringify(ref)}`);
  return 1;
}

/**
 * The differences between a derived profile and `go tool pprof -top -nodecount=0` texts of the same
 * profile for its two sample types (contentions, delay): total, and every function's flat and cum.
 * Returns the differences (none when equal) and how many figures were compared.
 */
export function compareWithTop(
  p: Profile,
  texts: { contentions: string; delay: string },
): { diffs: string[]; figures: number } {
  const diffs: string[] = [];
  let figures = 0;
  for (const [index, type] of [
    [0, 'contentions'],
    [1, 'delay'],
  ] as const) {
    const text = texts[type];
    figures++;
    if (percentageBase(p, index) !== reportTotal(text))
      diffs.push(`${type} total ${percentageBase(p, index)} vs ${reportTotal(text)}`);
    const ref = text.includes('flat%') ? parseTopAll(text) : new Map<string, [number, number]>();
    const ours = new Map(
      flatCum(p, index)
        .filter((r) => r.flat !== 0 || r.cum !== 0)
        .map((r) => [r.name, [r.flat, r.cum] as [number, number]]),
    );
    for (const [fn, v] of ref) {
      figures += 2;
      const o = ours.get(fn);
      if (!o || o[0] !== v[0] || o[1] !== v[1])
        diffs.push(`${type} ${fn}: ${JSON.stringify(o)} vs ${JSON.stringify(v)}`);
    }
    for (const fn of ours.keys()) if (!ref.has(fn)) diffs.push(`${type} ${fn}: not in go tool pprof's report`);
  }
  return { diffs, figures };
}
