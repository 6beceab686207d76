/**
 * benchstat's way of writing numbers, so the Benchmarks tab reads like `benchstat old.txt new.txt`:
 * one scale per row chosen by the value closest to zero (at least three significant digits for every
 * value, golang.org/x/perf/benchunit), "± 3%" confidence intervals, "-70.01%" changes, "~" when the
 * change is not significant, "?" when it cannot be expressed in %, "p=0.000 n=10".
 * Every function also has a display form with a real unit ("680.5 ns" for benchstat's "680.5n" sec/op).
 */
import type { BenchmarkDiffRow } from '../model/benchmark.ts';

export type UnitClass = 'decimal' | 'binary';

/** A common scale: digits after the point, the factor one prefix stands for, the prefix ("n", "Ki"). */
export interface Scaler {
  prec: number;
  factor: number;
  prefix: string;
}

/** Binary (powers of 1024) when the unit has bytes in its numerator (B/op, B/s), else decimal — as benchunit.ClassOf. */
export function unitClass(unit: string): UnitClass {
  let denom = false;
  for (const tok of unit.split(/([*/])/)) {
    if (tok === '*') denom = false;
    else if (tok === '/') denom = true;
    else {
      const word = tok.replace(/^[-\s]+|[-\s]+$/g, '');
      if (!denom && (word === 'B' || word === 'MB' || word === 'bytes')) return 'binary';
    }
  }
  return 'decimal';
}

interface Factor extends Scaler {
  /** Smallest values printed as 100.0, 10.00 and 1.000 with this prefix. */
  t100: number;
  t10: number;
  t1: number;
}

const SI: Factor[] = ['T', 'G', 'M', 'k', '', 'm', 'µ', 'n'].map((prefix, i) => {
  const exp = 12 - 3 * i;
  return {
    prec: 0,
    factor: 10 ** exp,
    prefix,
    t100: Number(`99.995e${exp}`),
    t10: Number(`9.9995e${exp}`),
    t1: Number(`.99995e${exp}`),
  };
});

const IEC: Factor[] = ['Ti', 'Gi', 'Mi', 'Ki', ''].map((prefix, i) => {
  const f = 2 ** (40 - 10 * i);
  return { prec: 0, factor: f, prefix, t100: 99.995 * f, t10: 9.9995 * f, t1: 0.99995 * f };
});

/** The scale benchstat applies to a row of values (benchunit.CommonScale). */
export function commonScale(values: readonly number[], cls: UnitClass): Scaler {
  let min = 0;
  for (const v of values) {
    const a = Math.abs(v);
    if (Number.isFinite(a) && a !== 0 && (min === 0 || a < min)) min = a;
  }
  if (min === 0) return { prec: 3, factor: 1, prefix: '' };
  const factors = cls === 'binary' ? IEC : SI;
  for (const f of factors) {
    if (min >= f.t100) return { prec: 1, factor: f.factor, prefix: f.prefix };
    if (min >= f.t10) return { prec: 2, factor: f.factor, prefix: f.prefix };
    if (min >= f.t1) return { prec: 3, factor: f.factor, prefix: f.prefix };
  }
  // Below the smallest prefix: more digits after the point (up to 10).
  const last = factors[factors.length - 1]!;
  const v = min / last.factor;
  for (let i = 0; i < 8; i++)
    if (v >= Number(`9.9995e${-1 - i}`) || i === 7) return { prec: i + 3, factor: last.factor, prefix: last.prefix };
  return { prec: 10, factor: last.factor, prefix: last.prefix };
}

/**
 * Go's `strconv.FormatFloat(x, 'f', prec, 64)`: the exact decimal value of the double, rounded half to
 * even (JavaScript's toFixed rounds exact halves up: 0.125 → "0.13" where Go prints "0.12").
 */
export function goFixed(x: number, prec: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  const neg = x < 0 || Object.is(x, -0);
  const a = Math.abs(x);
  if (a >= 1e21) return (neg ? '-' : '') + BigInt(a).toString() + (prec > 0 ? `.${'0'.repeat(prec)}` : '');
  const exact = a.toFixed(100); // exact for every double ≥ 2^-47
  const dot = exact.indexOf('.');
  const intPart = exact.slice(0, dot);
  const frac = exact.slice(dot + 1);
  const keep = intPart + frac.slice(0, prec);
  const rest = frac.slice(prec);
  const half = rest[0] === '5' && /^0*$/.test(rest.slice(1));
  const up = rest[0]! > '5' || (rest[0] === '5' && !half) || (half && Number(keep[keep.length - 1]) % 2 === 1);
  let digits = up ? (BigInt(keep) + 1n).toString().padStart(keep.length, '0') : keep;
  if (digits.length < prec + 1) digits = digits.padStart(prec + 1, '0');
  const i = digits.length - prec;
  const text = prec > 0 ? `${digits.slice(0, i)}.${digits.slice(i)}` : digits;
  return (neg ? '-' : '') + text;
}

/** A value as benchstat prints it with a scale: "680.5n", "1.125Ki", "9473.000". */
export function scaleText(v: number, s: Scaler): string {
  return goFixed(v / s.factor, s.prec) + s.prefix;
}

/** A value with a readable unit: sec/op "680.5 ns", B/op "1.125 KiB", B/s "316.7 MiB/s", allocs/op "1.000". */
export function displayText(v: number, s: Scaler, unit: string): string {
  const n = goFixed(v / s.factor, s.prec);
  if (unit === 'sec/op') return `${n} ${s.prefix}s`;
  if (unit === 'B/op') return `${n} ${s.prefix}B`;
  if (unit === 'B/s') return `${n} ${s.prefix}B/s`;
  return n + s.prefix;
}

/** The unit a benchstat table names in its header, readable: sec/op → "time/op". */
export function unitHeading(unit: string): string {
  const names: Record<string, string> = {
    'sec/op': 'time per op (sec/op)',
    'B/op': 'memory per op (B/op)',
    'allocs/op': 'allocations per op (allocs/op)',
    'B/s': 'throughput (B/s)',
  };
  return names[unit] ?? unit;
}

/** "± 3%" (the 95 % interval as a share of the median, rounded as Go's %.0f), "± ∞" when unknown. */
export function ciText(ci: number | null): string {
  return ci === null || !Number.isFinite(ci) ? '± ∞' : `± ${goFixed(100 * ci, 0)}%`;
}

/** benchstat's "vs base" cell: "-70.01%", "~" (not significant), "?" (no percentage: base median 0). */
export function deltaText(row: Pick<BenchmarkDiffRow, 'deltaPercent' | 'significant'>): string {
  if (!row.significant) return '~';
  if (row.deltaPercent === null || !Number.isFinite(row.deltaPercent)) return '?';
  const t = goFixed(row.deltaPercent, 2);
  return t.startsWith('-') ? `${t}%` : `+${t}%`;
}

/** "(p=0.000 n=10)" without the parentheses. */
export function pnText(row: Pick<BenchmarkDiffRow, 'p' | 'n'>): string {
  return `p=${goFixed(row.p, 3)} n=${row.n}`;
}

/** Whether a change is good news: lower is better except for throughput (B/s) and custom "…/s" rates. */
export function higherIsBetter(unit: string): boolean {
  return /\/s$/.test(unit) && unit !== 'sec/op';
}

/** One formatted row in both syntaxes (benchstat's, for checking against it, and a readable one). */
export interface BenchRowText {
  base: { benchstat: string; display: string; ci: string };
  target: { benchstat: string; display: string; ci: string };
  delta: string;
  pn: string;
  /** "better" | "worse" | "same" (not significant) for colouring. */
  verdict: 'better' | 'worse' | 'same';
}

export function formatBenchRow(row: BenchmarkDiffRow): BenchRowText {
  const s = commonScale([row.base.median, row.target.median], unitClass(row.unit));
  const side = (x: BenchmarkDiffRow['base']) => ({
    benchstat: scaleText(x.median, s),
    display: displayText(x.median, s, row.unit),
    ci: ciText(x.ci),
  });
  const up = row.target.median > row.base.median;
  const verdict =
    !row.significant || row.target.median === row.base.median
      ? 'same'
      : up === higherIsBetter(row.unit)
        ? 'better'
        : 'worse';
  return { base: side(row.base), target: side(row.target), delta: deltaText(row), pn: pnText(row), verdict };
}

/** One benchstat table: the rows of one package and unit, in the order the API lists them. */
export interface BenchTable {
  pkg: string;
  unit: string;
  rows: BenchmarkDiffRow[];
}

export function groupBenchRows(rows: readonly BenchmarkDiffRow[]): BenchTable[] {
  const tables: BenchTable[] = [];
  for (const r of rows) {
    let t = tables.find((x) => x.pkg === r.pkg && x.unit === r.unit);
    if (!t) {
      t = { pkg: r.pkg, unit: r.unit, rows: [] };
      tables.push(t);
    }
    t.rows.push(r);
  }
  return tables;
}

/**
 * benchstat's geomean row (tables of two or more rows): the geometric mean of each side's medians and of
 * the per-benchmark ratios; null where a value is ≤ 0 (benchstat leaves the cell empty or prints "?").
 */
export function geomeanRow(
  rows: readonly BenchmarkDiffRow[],
): { base: number | null; target: number | null; deltaPercent: number | null } | null {
  if (rows.length < 2) return null;
  const gm = (xs: number[]) =>
    xs.every((x) => x > 0) ? Math.exp(xs.reduce((a, x) => a + Math.log(x), 0) / xs.length) : null;
  const base = gm(rows.map((r) => r.base.median));
  const target = gm(rows.map((r) => r.target.median));
  // A benchmark that stayed at 0 (e.g. 0 allocs/op on both sides) counts as ratio 1, as in benchstat.
  const ratios = rows.map((r) =>
    r.base.median === r.target.median ? 1 : r.base.median > 0 ? r.target.median / r.base.median : -1,
  );
  const ratio = gm(ratios);
  return { base, target, deltaPercent: ratio === null ? null : (ratio - 1) * 100 };
}

/** A geomean cell: each value on its own scale, as benchstat prints them ("339.0Mi", "1.149Gi"). */
export function geomeanText(v: number | null, unit: string): { benchstat: string; display: string } {
  if (v === null) return { benchstat: '', display: '' };
  const s = commonScale([v], unitClass(unit));
  return { benchstat: scaleText(v, s), display: displayText(v, s, unit) };
}

/** The key that identifies one benchmark series across stages. */
export function benchKey(r: Pick<BenchmarkDiffRow, 'pkg' | 'name' | 'unit'>): string {
  return `${r.pkg}\u0000${r.name}\u0000${r.unit}`;
}

/**
 * Each benchmark's median at every stage (null where a stage lacks it), from one self-comparison per
 * stage (a stage compared with itself lists all its benchmarks; `null` = the stage has none).
 */
export function mediansAcrossStages(
  perStage: readonly (readonly BenchmarkDiffRow[] | null)[],
): Map<string, (number | null)[]> {
  const out = new Map<string, (number | null)[]>();
  perStage.forEach((rows, i) => {
    for (const r of rows ?? []) {
      const k = benchKey(r);
      if (!out.has(k))
        out.set(
          k,
          perStage.map(() => null),
        );
      out.get(k)![i] = r.base.median;
    }
  });
  return out;
}
