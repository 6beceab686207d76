import type { ConditionKey } from '../api/conditions.ts';
import { termText } from '../api/untrusted-text.ts';
import type { PairData } from '../client/pair.ts';
import { conditionWarnings, failed, type Outcome, type RuleResult } from '../client/check-rules.ts';
import { maxOf } from '../analysis/extent.ts';

/** What `stagediff check` does with the rules' results (client/check-rules.ts): its exit code and its lines. */

/** Exit codes of `stagediff check` (usage errors exit 2, like every command). */
export const CHECK_EXIT = {
  passed: 0,
  /** A significant regression past a rule's threshold. */
  failed: 1,
  /** No rule failed, but a rule gates a figure the two stages cannot be compared on (different load). */
  notComparable: 3,
} as const;

/** The exit code: 1 for a regression, else 3 for a gated figure that cannot be compared, else 1/0 by `failed`. */
export function exitCode(results: RuleResult[], opts: { failUnjudged: boolean }): number {
  if (results.some((r) => r.outcome === 'fail')) return CHECK_EXIT.failed;
  if (results.some((r) => r.outcome === 'not-comparable')) return CHECK_EXIT.notComparable;
  return failed(results, opts) ? CHECK_EXIT.failed : CHECK_EXIT.passed;
}

/** The lines `check` prints, one per rule, then the conclusion. */
export function formatResults(
  results: RuleResult[],
  d: PairData,
  opts: { failUnjudged: boolean; allow?: readonly ConditionKey[] },
): string {
  const tag: Record<Outcome, string> = {
    fail: 'FAIL',
    'not-comparable': 'N/C',
    pass: 'pass',
    unjudged: opts.failUnjudged ? 'FAIL?' : '?',
    'no-data': opts.failUnjudged ? 'FAIL?' : '-',
  };
  // Names, titles and the figures' subjects come from the server (anyone's text): each is one line of
  // plain characters on the terminal, never an escape sequence, a carriage return or a bidi override.
  const t = termText;
  const width = maxOf(results.map((r) => t(r.rule.text).length));
  const lines = [`stagediff check: ${t(d.changes.base.name)} → ${t(d.changes.target.name)} (${t(d.comparison.title)})`];
  for (const w of conditionWarnings(d, opts.allow ?? []))
    lines.push(`warning: measured under different conditions: ${t(w)} (--allow-different KEY to accept)`);
  for (const r of results) lines.push(`${tag[r.outcome].padEnd(5)} ${t(r.rule.text).padEnd(width)}  ${t(r.message)}`);
  const nFail = results.filter((r) => r.outcome === 'fail').length;
  const nDiff = results.filter((r) => r.outcome === 'not-comparable').length;
  const nUnjudged = results.filter((r) => r.outcome === 'unjudged' || r.outcome === 'no-data').length;
  if (nDiff > 0)
    lines.push(
      `${nDiff} rule${nDiff > 1 ? 's' : ''} gate${nDiff > 1 ? '' : 's'} figures the stages cannot be compared on: the load differs (tool or settings). Record both stages with the same load, or pass --allow-different load to leave those rules unjudged.`,
    );
  if (failed(results, opts))
    lines.push(
      nFail > 0
        ? `${nFail} rule${nFail > 1 ? 's' : ''} failed: a significant regression past the threshold.`
        : nDiff > 0
          ? `failed: not comparable (exit ${CHECK_EXIT.notComparable}).`
          : `${nUnjudged} rule${nUnjudged > 1 ? 's' : ''} could not be judged (--too-few-runs fail).`,
    );
  else
    lines.push(
      nUnjudged > 0
        ? `passed; ${nUnjudged} rule${nUnjudged > 1 ? 's' : ''} could not be judged (record more runs per stage, or --too-few-runs fail to make that fail).`
        : 'passed: no significant regression past any rule.',
    );
  return `${lines.join('\n')}\n`;
}
