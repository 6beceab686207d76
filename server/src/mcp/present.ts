import type { Change, Estimate, FunctionChange, FunctionChanges, Verdict } from '../api/changes.ts';
import { formatChange, formatRatio, formatValue } from '../api/format.ts';
import { changeStyle, formatPN, noVerdictReason } from '../api/words.ts';

/*
 * How the agent surface words a figure. The rule that makes an overstatement impossible: a ratio never
 * travels alone. Every figure carries its verdict's status, p and run counts, and a `reading` sentence
 * that says "significant" only when the engine's test said so; anything else reads "not measurable"
 * (within the noise, too few runs, a single run) or "not compared" with the engine's reason.
 */

/** A stage's figure across its runs, as an agent reads it. */
export interface McpEstimate {
  median: number;
  lo: number | null;
  hi: number | null;
  n: number;
}

/** One judged figure: the numbers, the verdict, and the only sentence an agent should repeat. */
export interface McpFigure {
  metric: string;
  label: string;
  subject: string | null;
  unit: string;
  better: 'higher' | 'lower';
  base: McpEstimate | null;
  target: McpEstimate | null;
  /** The engine's verdict status (significant, no-change, too-few-runs, single-run, missing, …). */
  status: string;
  /** Whether the change may be reported as a change at all. */
  significant: boolean;
  p: number | null;
  nBase: number;
  nTarget: number;
  /** target median / base median; read it only together with `status` and `reading`. */
  ratio: number | null;
  deltaPercent: number | null;
  direction: 'improvement' | 'regression' | null;
  /** In words, with p and n: "QPS ×2.05 — significant improvement (p=0.002, n=6+6)", "QPS: not measurable — …". */
  reading: string;
  /** The pair's conditions differ (Go version, GOMAXPROCS, machine…): the verdict stands, with this caveat. */
  warning: string | null;
}

export function estimate(e: Estimate | null): McpEstimate | null {
  return e ? { median: e.median, lo: e.lo, hi: e.hi, n: e.n } : null;
}

/** "not measurable — within the noise (p=0.818, n=6+6)" and the like, for a verdict that is no change. */
export function unjudgedWords(v: Verdict, reason: string | null): string {
  switch (v.status) {
    case 'no-change':
      return `not measurable — within the noise (${formatPN(v)})`;
    case 'too-few-runs':
    case 'single-run':
      return `not measurable — ${noVerdictReason(v)}`;
    case 'missing':
      return noVerdictReason(v);
    default:
      return `not compared — ${reason ?? v.status} (${formatPN(v)})`;
  }
}

export function figure(c: Change): McpFigure {
  const v = c.verdict;
  const moved = v.ratio === null ? '' : ` ${changeStyle(c) === 'ratio' ? formatRatio(v.ratio) : formatChange(v.ratio)}`;
  const values =
    c.base && c.target ? ` (${formatValue(c.base.median, c.unit)} → ${formatValue(c.target.median, c.unit)})` : '';
  const who = c.subject ? `${c.subject} ${c.label}` : c.label;
  const significant = v.status === 'significant';
  const warning = c.warning ?? null;
  const caveat = warning ? ` — measured under different conditions: ${warning}` : '';
  const reading = significant
    ? `${who}${moved}${values} — significant ${c.direction ?? 'change'} (${formatPN(v)})${caveat}`
    : v.status === 'not-comparable'
      ? `${who}: not compared — ${v.reason ?? c.reason ?? 'the stages were measured differently'}`
      : `${who}${values}: ${unjudgedWords(v, c.reason)}${caveat}`;
  return {
    metric: c.metric,
    label: c.label,
    subject: c.subject,
    unit: c.unit,
    better: c.better,
    base: estimate(c.base),
    target: estimate(c.target),
    status: v.status,
    significant,
    p: v.p,
    nBase: v.nBase,
    nTarget: v.nTarget,
    ratio: v.ratio,
    deltaPercent: c.deltaPercent,
    direction: c.direction,
    reading,
    warning,
  };
}

/** A function named by "what changed", as an agent reads it. */
export interface McpFunction {
  name: string;
  change: FunctionChange['change'];
  base: number;
  target: number;
  delta: number;
  unit: string;
  status: string;
  significant: boolean;
  p: number | null;
  nBase: number;
  nTarget: number;
  reading: string;
}

export function functionChange(f: FunctionChange, fc: Pick<FunctionChanges, 'unit'>): McpFunction {
  const v = f.verdict;
  const significant = v.status === 'significant';
  const what =
    f.change === 'removed'
      ? `removed (${formatValue(f.base, fc.unit)} → 0)`
      : f.change === 'added'
        ? `added (0 → ${formatValue(f.target, fc.unit)})`
        : `${f.change} by ${formatValue(Math.abs(f.delta), fc.unit)} (${formatValue(f.base, fc.unit)} → ${formatValue(f.target, fc.unit)})`;
  return {
    name: f.name,
    change: f.change,
    base: f.base,
    target: f.target,
    delta: f.delta,
    unit: fc.unit,
    status: v.status,
    significant,
    p: v.p,
    nBase: v.nBase,
    nTarget: v.nTarget,
    reading: significant
      ? `${f.name} ${what} — significant (${formatPN(v)})`
      : `${f.name} ${what}: ${unjudgedWords(v, null)}`,
  };
}
