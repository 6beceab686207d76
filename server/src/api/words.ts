import type { Change, FunctionChange, FunctionChanges, TailChange, Verdict } from './changes.ts';
import { DASH, formatChange, formatRatio, formatSignedValue, formatValue } from './format.ts';

/*
 * How a verdict reads, in one place: the page, the images, `stagediff report` and `stagediff check`
 * word every change through these functions. Only a significant change is worded as a change.
 */

/** p as a verdict prints it: three decimals, and "p<0.001" below that (never a bare "p=0.000"). */
export function formatP(p: number | null): string {
  if (p === null) return '';
  return p < 0.001 ? 'p<0.001' : `p=${p.toFixed(3)}`;
}

/** Both sides' run counts, always "n=5+5" so the reader sees each side. */
export function formatN(v: Pick<Verdict, 'nBase' | 'nTarget'>): string {
  return `n=${v.nBase}+${v.nTarget}`;
}

/** "q=0.004" (a Benjamini–Hochberg adjusted p), or "q<0.001". */
export function formatQ(q: number): string {
  return q < 0.001 ? 'q<0.001' : `q=${q.toFixed(3)}`;
}

/**
 * "p=0.008, n=5+5", or "n=1+5" without a p; a function judged among many in one diff adds its
 * adjusted p, the figure compared with alpha: "p=0.002, q=0.004, n=6+6".
 */
export function formatPN(v: Pick<Verdict, 'p' | 'nBase' | 'nTarget' | 'q'>): string {
  if (v.p === null) return formatN(v);
  return v.q != null ? `${formatP(v.p)}, ${formatQ(v.q)}, ${formatN(v)}` : `${formatP(v.p)}, ${formatN(v)}`;
}

/** Why a change has no verdict: "2+2 runs: too few to test — record at least 4 per stage", … */
export function noVerdictReason(v: Verdict): string {
  switch (v.status) {
    case 'too-few-runs':
      return `${v.nBase}+${v.nTarget} runs: too few to test — record at least ${v.runsNeeded} per stage`;
    case 'single-run':
      return '1 run: no noise estimate';
    case 'not-comparable':
      return `not comparable: ${v.reason ?? 'different load'}`;
    case 'missing':
      return v.nBase === 0 && v.nTarget === 0
        ? 'not measured'
        : `not measured on the ${v.nBase === 0 ? 'base' : 'target'} side`;
    default:
      return '';
  }
}

/** How a change reads: the text, whether it may be coloured, and a sentence for a tooltip. */
export interface VerdictText {
  /** e.g. "×2.38 (p=0.008, n=5+5)", "~ (p=0.151, n=5+5)", "×1.03 · 1 run: no noise estimate". */
  text: string;
  /** The change as a bare figure ("×2.38", "−60 %"), or "~" when it is within the noise. */
  change: string;
  /** Only a significant change is a change: colour it. */
  significant: boolean;
  title: string;
}

/** Whether a figure's change reads as a ratio (QPS ×2.38) or a percentage (P99 −60 %). */
export type ChangeStyle = 'ratio' | 'percent';

/** A stage-to-stage change of one figure with its verdict (the stage table's cells). */
export function verdictText(v: Verdict | null | undefined, style: ChangeStyle): VerdictText {
  if (v?.status === 'not-comparable')
    return {
      text: 'not comparable',
      change: 'not comparable',
      significant: false,
      title: `No verdict: ${noVerdictReason(v).replace(/^not comparable: /, '')}. Figures of different load tools or settings measure different things.`,
    };
  if (!v || v.status === 'missing' || v.ratio === null)
    return { text: DASH, change: DASH, significant: false, title: 'no figure to compare' };
  const figure = style === 'ratio' ? formatRatio(v.ratio) : formatChange(v.ratio);
  const pn = formatPN(v);
  switch (v.status) {
    case 'significant':
      return {
        text: `${figure} (${pn})`,
        change: figure,
        significant: true,
        title: `Significant: the Mann–Whitney U test of the runs gives ${formatP(v.p)} ≤ ${v.alpha}.`,
      };
    case 'single-run': {
      const side = v.nBase <= 1 && v.nTarget <= 1 ? 'each stage' : v.nBase <= 1 ? 'the earlier stage' : 'this stage';
      return {
        text: `${figure} · 1 run: no noise estimate`,
        change: figure,
        significant: false,
        title: `${figure} between medians, but ${side} has a single run: nothing says how much one run varies from the next. Record several runs per stage (at least ${v.runsNeeded}) to get a verdict.`,
      };
    }
    case 'too-few-runs':
      return {
        text: `${figure} · ${v.nBase}+${v.nTarget} runs: too few to test`,
        change: figure,
        significant: false,
        title: `${figure} between medians, unjudged: with ${v.nBase}+${v.nTarget} runs even the most extreme ordering gives p = ${v.minP?.toFixed(3)} > ${v.alpha}, so no change could be significant. Record at least ${v.runsNeeded} runs per stage.`,
      };
    default:
      return {
        text: `~ (${pn})`,
        change: '~',
        significant: false,
        title: `${figure} between medians, within the noise: ${formatP(v.p)} > ${v.alpha}.`,
      };
  }
}

/** A verdict in words: "significant (p=0.002, n=6+6)", "~ within the noise (p=0.818, n=6+6)", … */
export function verdictWords(v: Verdict, { noiseMark = true } = {}): string {
  switch (v.status) {
    case 'significant':
      return `significant (${formatPN(v)})`;
    case 'no-change':
      return `${noiseMark ? '~ ' : ''}within the noise (${formatPN(v)})`;
    case 'too-few-runs':
    case 'single-run':
      return `not judged (${noVerdictReason(v)})`;
    default:
      return noVerdictReason(v);
  }
}

/** Load-test throughput reads as a ratio; latencies, costs and rates as a percentage. */
export function changeStyle(c: Pick<Change, 'metric'>): ChangeStyle {
  return c.metric === 'rps' ? 'ratio' : 'percent';
}

/**
 * One "what changed" clause for a figure: "QPS ×2.05 (p=0.002, n=6+6)", "P99 ~ within the noise
 * (p=0.937, n=6+6)", "CPU per request −65 % (2+2 runs: too few to test — record at least 4 per stage)".
 * A figure missing on a side says nothing.
 */
export function changeHeadline(c: Change): string[] {
  const v = c.verdict;
  if (v.status === 'missing' || v.ratio === null) return [];
  const style = changeStyle(c);
  const figure = style === 'ratio' ? formatRatio(v.ratio) : formatChange(v.ratio);
  const values =
    c.base && c.target && style === 'percent'
      ? ` (${formatValue(c.base.median, c.unit)} → ${formatValue(c.target.median, c.unit)})`
      : '';
  switch (v.status) {
    case 'significant':
      return [`${c.label} ${figure}${values.replace(/\)$/, `, ${formatPN(v)})`) || ` (${formatPN(v)})`}`];
    case 'no-change':
      return [`${c.label} ~ within the noise (${formatPN(v)})`];
    default:
      return [`${c.label} ${figure} (${noVerdictReason(v)})`];
  }
}

/** A function's change in words: "Removed net/http.(*Transport).dialConnFor: 41.3 µs/req → 0 (p=0.002, n=6+6)". */
export function functionSentence(f: FunctionChange, fc: Pick<FunctionChanges, 'unit'>): string {
  const v = f.verdict;
  const base = formatValue(f.base, fc.unit);
  const target = formatValue(f.target, fc.unit);
  const how =
    v.status === 'significant' || v.status === 'no-change'
      ? v.status === 'significant'
        ? formatPN(v)
        : `~ within the noise, ${formatPN(v)}`
      : noVerdictReason(v);
  switch (f.change) {
    case 'removed':
      return `Removed ${f.name}: ${base} → 0 (${how})`;
    case 'added':
      return `Added ${f.name}: 0 → ${target} (${how})`;
    default: {
      const delta = `${f.change === 'grew' ? '+' : '−'}${formatValue(Math.abs(f.delta), fc.unit)}`;
      // The named change is the path's own part; when callees named elsewhere moved too, the whole
      // call's figures differ from it and are said to be the whole call's.
      const whole = f.target - f.base;
      if (Math.abs(whole - f.delta) <= 0.005 * Math.max(Math.abs(whole), Math.abs(f.delta)))
        return `${f.name} ${delta} (${base} → ${target}; ${how})`;
      return `${f.name} ${delta} in its own code and small callees (whole call ${base} → ${target}; ${how})`;
    }
  }
}

/**
 * What a trace's derived profiles (net, sync, syscall, sched) are equal to, for a trace written by Go
 * `goVersion` ("1.24"): Go 1.26's `go tool trace`. Releases before 1.26 leave out events that carry no
 * stack (golang/go#74850), so their own tool can print other figures for the same trace.
 */
export function traceReferenceNote(goVersion: string | null | undefined): string {
  const v = goVersion ? `go ${goVersion}` : 'an unknown Go release';
  return `trace written by ${v}: its net, sync, syscall and sched profiles equal Go 1.26's go tool trace -pprof; earlier releases of the tool drop stackless events (golang/go#74850) and can show other figures`;
}

/** A traced request's parts in words (the `request-tail-PART` rows' labels, the tail's sentence). */
export { REQUEST_PART_WORDS } from './request-parts.ts';

/** What a goroutine the standard library starts is doing, by its entry function (null: not one we know). */
const GOROUTINE_WORDS: [RegExp, string][] = [
  [/^net\/http\.\(\*Transport\)\.(startDialConnFor|dialConnFor|queueForDial)/, "a new connection's dial"],
  [/^net\/http\.\(\*persistConn\)\.readLoop$/, "the HTTP client connection's reader"],
  [/^net\/http\.\(\*persistConn\)\.writeLoop$/, "the HTTP client connection's writer"],
  [/^net\/http\.\(\*conn\)\.serve$/, 'another server connection'],
  [/^runtime\.gcBgMarkWorker$/, 'a GC mark worker'],
];

/** A goroutine of a critical path in words: "a new connection's dial (net/http.(*Transport)…func1)". */
export function goroutineWords(entry: string): string {
  const known = GOROUTINE_WORDS.find(([re]) => re.test(entry));
  if (!entry) return 'a goroutine whose entry the trace did not show';
  return known ? `${known[1]} (${entry})` : `the goroutine ${entry}`;
}

/** One row of the tail in words: "scheduler wait −5.75 ms (p=0.002, n=6+6)", removed and added said so. */
function tailClause(c: Change, what: string): string {
  const b = c.base?.median ?? null;
  const t = c.target?.median ?? null;
  const v = c.verdict;
  const delta = b === null || t === null ? '' : t === b ? '±0' : formatSignedValue(t - b, c.unit);
  const how = b !== null && t !== null && b > 0 && t === 0 ? ', gone' : b === 0 && t !== null && t > 0 ? ', new' : '';
  if (v.status === 'significant') return `${what} ${delta}${how} (${formatPN(v)})`;
  if (v.status === 'no-change') return `${what} ${delta} ~ within the noise (${formatPN(v)})`;
  return `${what} ${delta} (${noVerdictReason(v)})`;
}

/**
 * The tail's sentence: "The tail of traced requests: P99 −62 % (17.3 ms → 6.3 ms, p=0.002, n=6+6); of the
 * slowest 1 %, scheduler wait −5.75 ms (p=0.002, n=6+6), …; within the noise: …; on goroutines the
 * critical path went through, the largest change: a new connection's dial (…) −3.02 ms, gone (p=0.002,
 * n=6+6)". Only significant changes are named as changes; parts are in the order given (largest first).
 */
export function tailSentence(
  t: Pick<TailChange, 'p99' | 'parts' | 'goroutines'>,
  partWords: (c: Change) => string,
): string {
  const p99 = changeHeadline({ ...t.p99, label: 'P99' })[0] ?? 'P99 not measured on a side';
  const changed = t.parts.filter((c) => c.verdict.status === 'significant');
  const rest = t.parts.filter((c) => c.verdict.status !== 'significant');
  const out = [`The tail of traced requests: ${p99}`];
  const of: string[] = [];
  if (changed.length > 0) of.push(changed.map((c) => tailClause(c, partWords(c))).join(', '));
  else of.push('no part changed significantly');
  if (rest.length > 0) of.push(rest.map((c) => tailClause(c, partWords(c))).join(', '));
  out.push(`of the slowest 1 %, ${of.join('; ')}`);
  const g = t.goroutines.find((c) => c.verdict.status === 'significant');
  if (g)
    out.push(
      `on goroutines the critical path went through, the largest change: ${tailClause(g, goroutineWords(g.subject ?? ''))}`,
    );
  else if (t.goroutines.length > 0)
    out.push(
      `on goroutines the critical path went through, no significant change (largest: ${tailClause(t.goroutines[0]!, goroutineWords(t.goroutines[0]!.subject ?? ''))})`,
    );
  return out.join('; ');
}
