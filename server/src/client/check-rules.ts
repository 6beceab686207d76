import type { Change } from '../api/changes.ts';
import { CONDITION_KEYS, type ConditionKey } from '../api/conditions.ts';
import { METRICS, REQUEST_METRICS, RUNTIME_METRICS, TRACE_METRICS, isOneOf } from '../api/options.ts';
import { formatChange, formatRatio, formatValue } from '../api/format.ts';
import { verdictWords } from '../api/words.ts';
import type { PairData } from './pair.ts';

/**
 * `stagediff check` rules: `METRIC:+N%` fails when METRIC rises by more than N %, `METRIC:-N%` when it
 * falls by more than N %, and only when the server judges the change significant. METRIC is `rps`
 * (or `qps`), `p50`, `p95`, `p99`, `cpu-per-request`, or `bench:UNIT` (every benchmark in that unit,
 * e.g. `bench:sec/op`, `bench:B/op`, `bench:allocs/op`), or a runtime row (options.ts TRACE_METRICS, RUNTIME_METRICS, REQUEST_METRICS).
 * A runtime row is gated only by a rule that names it, by the same test: its percentage is the change of
 * the row as the engine normalised it (per request, else per second of window, for both stages alike).
 */
export interface Rule {
  text: string;
  metric: string;
  /** +1: fail on a rise past the threshold; −1: on a fall. */
  sign: 1 | -1;
  percent: number;
}

/** The figures, runtime rows included, that a rule may name (options.ts METRICS). */
const KNOWN: readonly string[] = METRICS;

export function parseRule(text: string): Rule {
  const m = /^(.+):([+-])(\d+(?:\.\d+)?)%$/.exec(text.trim());
  if (!m)
    throw new Error(
      `--fail-on "${text}": expected METRIC:+N% or METRIC:-N% (e.g. p99:+5%, rps:-3%, cpu-per-request:+5%, bench:sec/op:+2%)`,
    );
  // Metric names are matched without regard to case (`P99`, `request-tail-gcwait`), and kept as declared.
  let metric = m[1]!.trim().toLowerCase();
  if (metric === 'qps') metric = 'rps';
  const known = KNOWN.find((k) => k.toLowerCase() === metric);
  if (known) metric = known;
  if (metric.startsWith('bench:')) metric = `bench:${m[1]!.trim().slice(6)}`;
  else if (!known)
    throw new Error(`--fail-on "${text}": unknown metric "${m[1]}" (known: ${KNOWN.join(', ')}, bench:UNIT)`);
  if (metric === 'bench:') throw new Error(`--fail-on "${text}": bench: needs a unit, e.g. bench:sec/op`);
  return { text: text.trim(), metric, sign: m[2] === '+' ? 1 : -1, percent: Number(m[3]) };
}

/** `--allow-different KEY`: a condition key (api/conditions.ts), checked. */
export function parseAllowDifferent(values: readonly string[]): ConditionKey[] {
  return values.map((v) => {
    const k = v.trim().toLowerCase();
    if (!(CONDITION_KEYS as readonly string[]).includes(k))
      throw new Error(`--allow-different "${v}": unknown condition (known: ${CONDITION_KEYS.join(', ')})`);
    return k as ConditionKey;
  });
}

/**
 * - `fail`: a significant change past the threshold in the rule's direction;
 * - `not-comparable`: the figure has no verdict because the stages ran different load (tool or
 *   settings); fails the check (exit 3) unless `--allow-different load`, which makes it `no-data`;
 * - `pass`: not past the threshold, or past it but within the noise;
 * - `unjudged`: past the threshold but too few runs (or no verdict) to tell it from noise;
 * - `no-data`: the comparison has no such figure for these stages.
 */
export type Outcome = 'fail' | 'not-comparable' | 'pass' | 'unjudged' | 'no-data';

export interface RuleResult {
  rule: Rule;
  outcome: Outcome;
  /** The figure behind the outcome (for bench: the benchmark that decided it). */
  change: Change | null;
  /** One line in words with the figures. */
  message: string;
}

function describe(c: Change): string {
  const who = c.subject ? `${c.subject} ${c.label}` : c.label;
  return `${who} ${formatValue(c.base?.median ?? null, c.unit)} → ${formatValue(c.target?.median ?? null, c.unit)} (${formatChange(c.verdict.ratio)}, ${formatRatio(c.verdict.ratio)})`;
}

function judgeOne(rule: Rule, c: Change, allow: readonly ConditionKey[]): RuleResult {
  if (c.verdict.status === 'not-comparable') {
    const why = c.verdict.reason ?? 'different load';
    return allow.includes('load')
      ? { rule, outcome: 'no-data', change: c, message: `${c.label}: not judged, ${why} (--allow-different load)` }
      : {
          rule,
          outcome: 'not-comparable',
          change: c,
          message: `${c.label}: not comparable, ${why}`,
        };
  }
  if (c.deltaPercent === null || c.verdict.status === 'missing')
    return { rule, outcome: 'no-data', change: c, message: `${c.label}: not measured on both stages` };
  const past = rule.sign > 0 ? c.deltaPercent > rule.percent : c.deltaPercent < -rule.percent;
  const line = `${describe(c)}, ${verdictWords(c.verdict, { noiseMark: false })}`;
  if (!past)
    return {
      rule,
      outcome: 'pass',
      change: c,
      message: `${line}; within the ${rule.sign > 0 ? '+' : '−'}${rule.percent} % allowed`,
    };
  if (c.verdict.status === 'significant') return { rule, outcome: 'fail', change: c, message: line };
  if (c.verdict.status === 'no-change')
    return { rule, outcome: 'pass', change: c, message: `${line}; past the threshold but inside the noise` };
  return { rule, outcome: 'unjudged', change: c, message: `${line}; past the threshold but cannot be judged` };
}

const SEVERITY: Record<Outcome, number> = { fail: 4, 'not-comparable': 3, unjudged: 2, pass: 1, 'no-data': 0 };

/** Evaluates every rule on a pair; for bench: rules, the worst benchmark decides. */
export function evaluate(rules: Rule[], d: PairData, allow: readonly ConditionKey[] = []): RuleResult[] {
  const changes = [...d.changes.figures, ...(d.changes.benchmarks?.rows ?? []), ...(d.changes.runtime?.figures ?? [])];
  return rules.map((rule) => {
    const matching = changes.filter((c) => c.metric === rule.metric);
    if (matching.length === 0)
      return {
        rule,
        outcome: 'no-data',
        change: null,
        message: rule.metric.startsWith('bench:')
          ? `no go test -bench output in ${rule.metric.slice(6)} on both stages`
          : isOneOf(REQUEST_METRICS, rule.metric)
            ? 'needs execution traces with requests in both stages (stagediff capture --trace S; tasks or net/http connections)'
            : isOneOf(TRACE_METRICS, rule.metric)
              ? 'needs an execution trace in both stages (stagediff capture --trace S)'
              : isOneOf(RUNTIME_METRICS, rule.metric)
                ? 'needs runtime metrics in both stages (stagediff capture --metrics URL)'
                : rule.metric === 'cpu-per-request' || rule.metric === 'alloc-per-request'
                  ? `needs ${rule.metric === 'cpu-per-request' ? 'CPU' : 'allocs (window)'} profiles and a load test in both stages`
                  : 'needs a load test in both stages',
      };
    const results = matching.map((c) => judgeOne(rule, c, allow));
    // Worst outcome first; among equals, the largest move in the rule's direction.
    results.sort(
      (a, b) =>
        SEVERITY[b.outcome] - SEVERITY[a.outcome] ||
        rule.sign * ((b.change?.deltaPercent ?? 0) - (a.change?.deltaPercent ?? 0)),
    );
    return results[0]!;
  });
}

/** Whether the build fails: any `fail` or `not-comparable`, and `unjudged`/`no-data` only when asked to. */
export function failed(results: RuleResult[], opts: { failUnjudged: boolean }): boolean {
  return results.some(
    (r) =>
      r.outcome === 'fail' ||
      r.outcome === 'not-comparable' ||
      (opts.failUnjudged && (r.outcome === 'unjudged' || r.outcome === 'no-data')),
  );
}

/** The pair's other condition differences (Go version, GOMAXPROCS, machine, build) not allowed, in words. */
export function conditionWarnings(d: PairData, allow: readonly ConditionKey[]): string[] {
  return (d.changes.conditions?.differences ?? [])
    .filter((x) => x.key !== 'load' && !allow.includes(x.key))
    .map((x) => x.text);
}
