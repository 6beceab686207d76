import type { RunEstimate, Verdict } from '../../../server/src/analysis/significance.ts';
import type { BenchmarkDiff, BenchmarkDiffRow } from './api-types.ts';
import { geomeanRow, higherIsBetter, pnText } from './benchstat-format.ts';
import { DASH, formatChange, formatRatio } from './format.ts';

export type { RunEstimate, Verdict };

/** p as benchstat prints it: three decimals ("p=0.008"). */
export function formatP(p: number): string {
  return `p=${p.toFixed(3)}`;
}

/** Both sides' run counts, always "n=5+5" so the reader sees each side. */
export function formatN(v: Pick<Verdict, 'nBase' | 'nTarget'>): string {
  return `n=${v.nBase}+${v.nTarget}`;
}

/**
 * The verdict of a change, or — for a row that came without one (results of an older server) — the
 * verdict of one run against one: shown, not judged.
 */
export function verdictOrSingle(ratio: number | null | undefined, v: Verdict | null | undefined): Verdict | null {
  if (v) return v;
  if (ratio === null || ratio === undefined) return null;
  return { status: 'single-run', significant: false, ratio, p: null, nBase: 1, nTarget: 1, alpha: 0.05, runsNeeded: 4 };
}

/** How a verdict reads: the text, whether it may be coloured, and a sentence for a tooltip. */
export interface VerdictText {
  /** e.g. "×2.38 (p=0.008, n=5+5)", "~ (p=0.151, n=5+5)", "1 run: no noise estimate". */
  text: string;
  /** The change as a bare figure ("×2.38", "−60 %"), or "~" when it is within the noise. */
  change: string;
  /** Only a significant change is a change: colour it. */
  significant: boolean;
  title: string;
}

/**
 * A stage-to-stage change of one figure with its benchstat verdict. `kind` picks the wording: QPS as a
 * ratio (×2.38), latency as a percentage (−60 %).
 */
export function verdictText(v: Verdict | null | undefined, kind: 'ratio' | 'percent'): VerdictText {
  if (!v || v.status === 'missing' || v.ratio === null)
    return { text: DASH, change: DASH, significant: false, title: 'no figure to compare' };
  const figure = kind === 'ratio' ? formatRatio(v.ratio) : formatChange(v.ratio);
  const pn = v.p !== null ? `${formatP(v.p)}, ${formatN(v)}` : formatN(v);
  switch (v.status) {
    case 'significant':
      return {
        text: `${figure} (${pn})`,
        change: figure,
        significant: true,
        title: `Significant: the Mann–Whitney U test of the runs gives ${formatP(v.p!)} ≤ ${v.alpha}.`,
      };
    case 'single-run': {
      const side = v.nBase <= 1 && v.nTarget <= 1 ? 'each stage' : v.nBase <= 1 ? 'the earlier stage' : 'this stage';
      return {
        text: `${figure} · 1 run: no noise estimate`,
        change: figure,
        significant: false,
        title: `${figure} between medians, but ${side} has a single run: nothing says how much one run varies from the next. Record several runs per stage (e.g. 5) to get a verdict.`,
      };
    }
    case 'need-more-runs':
      return {
        text: `~ (${pn}, need ≥ ${v.runsNeeded} runs)`,
        change: '~',
        significant: false,
        title: `${figure} between medians, within the noise: with fewer than ${v.runsNeeded} runs per stage no change can reach p ≤ ${v.alpha} (benchstat's rule).`,
      };
    default:
      return {
        text: `~ (${pn})`,
        change: '~',
        significant: false,
        title: `${figure} between medians, within the noise: ${formatP(v.p!)} > ${v.alpha}.`,
      };
  }
}

/** benchstat's ± for a median: "± 17 %", "± ∞" (too few runs for a 95 % interval); empty for one run. */
export function formatCi(e: RunEstimate | null | undefined): string {
  if (!e || e.n < 2) return '';
  if (e.ci === null) return '± ∞';
  return `± ${Math.round(e.ci * 100)} %`;
}

/** A tooltip for a median across runs: the runs, the interval and what it means. */
export function estimateTitle(e: RunEstimate | null | undefined, format: (v: number) => string): string {
  if (!e) return '';
  if (e.n < 2) return 'one run: no noise estimate';
  const range =
    e.lo !== null && e.hi !== null
      ? `95 % confidence interval of the median ${format(e.lo)} – ${format(e.hi)}`
      : `no 95 % confidence interval with ${e.n} runs (benchstat needs 6)`;
  return `median of ${e.n} runs (${e.values.map(format).join(', ')}); ${range}`;
}

/** benchstat's verdict on a stage's `go test -bench` results against another stage, one line per unit. */
export interface StageBenchVerdict {
  unit: string;
  /** "sec/op −12.34 % geomean, 2 of 3 significant" or, for one benchmark, "sec/op −12.34 % (p=0.002, n=6)". */
  text: string;
  /** True when some benchmark of the unit changed significantly. */
  significant: boolean;
  /** Whether the (geomean) change went the good way for the unit; null for no change. */
  better: boolean | null;
  title: string;
}

const UNIT_ORDER = ['sec/op', 'B/op', 'allocs/op'];

function signedPercent(d: number | null): string {
  if (d === null || !Number.isFinite(d)) return '?';
  if (d === 0) return '±0 %';
  return `${d < 0 ? '−' : '+'}${Math.abs(d).toFixed(2)} %`;
}

/**
 * The stage table's benchmark lines: per unit (sec/op, B/op, allocs/op first; at most `limit`), benchstat's
 * geomean change across the benchmarks both stages ran and how many changed significantly. A unit
 * where nothing changed significantly reads "~".
 */
export function benchVerdicts(diff: BenchmarkDiff, limit = 3): StageBenchVerdict[] {
  const byUnit = new Map<string, BenchmarkDiffRow[]>();
  for (const r of diff.rows) byUnit.set(r.unit, [...(byUnit.get(r.unit) ?? []), r]);
  const units = [...byUnit.keys()].sort((a, b) => {
    const ra = UNIT_ORDER.indexOf(a);
    const rb = UNIT_ORDER.indexOf(b);
    return (ra < 0 ? 99 : ra) - (rb < 0 ? 99 : rb);
  });
  return units.slice(0, limit).map((unit) => {
    const rows = byUnit.get(unit)!;
    const sig = rows.filter((r) => r.significant).length;
    const delta = rows.length === 1 ? rows[0]!.deltaPercent : (geomeanRow(rows)?.deltaPercent ?? null);
    const better = delta === null || delta === 0 ? null : higherIsBetter(unit) ? delta > 0 : delta < 0;
    if (rows.length === 1) {
      const r = rows[0]!;
      return {
        unit,
        text: r.significant ? `${unit} ${signedPercent(delta)} (${pnText(r)})` : `${unit} ~ (${pnText(r)})`,
        significant: r.significant,
        better,
        title: `${r.name}: benchstat ${r.significant ? 'significant' : '~'} (${pnText(r)})`,
      };
    }
    return {
      unit,
      text:
        sig > 0
          ? `${unit} ${signedPercent(delta)} geomean, ${sig} of ${rows.length} significant`
          : `${unit} ~ (${rows.length} benchmarks, none significant)`,
      significant: sig > 0,
      better,
      title: `benchstat geomean of ${rows.length} benchmarks: ${signedPercent(delta)}; ${sig} significant at p ≤ ${diff.alpha}`,
    };
  });
}
