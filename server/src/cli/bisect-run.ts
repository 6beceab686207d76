import {
  type AaResult,
  BISECT_METRICS,
  type BisectMetric,
  type RegressionResult,
  aaCheck,
  isBetter,
  judgeStep,
  regressionCheck,
} from './bisect-decide.ts';
import {
  type StartPoint,
  bisectMark,
  bisectStart,
  checkoutDetached,
  describeCommit,
  isAncestor,
  parentOf,
  preconditions,
  resolveCommit,
  restore,
} from './bisect-git.ts';
import { UsageError } from './flags.ts';

/**
 * The loop of `stagediff bisect`, with the measuring and the uploading passed in (bisect.ts gives the
 * live ones; tests give recorded figures): pre-flight A/A on the good commit, good against bad, then
 * `git bisect` driven step by step with good / bad / skip from adaptive runs; the repository back where
 * it started whatever happens.
 */

/** One run's figures and the files it wrote (uploaded as the commit's stage). */
export interface RunFigures {
  rps: number | null;
  p99: number | null;
  /** CPU µs per request over the run's profile window; absent when no CPU profile was taken. */
  'cpu-per-request'?: number | null;
  files: string[];
}

/** A commit's service, running: runs are taken one at a time while it is up. */
export interface CommitSession {
  run(k: number, signal: AbortSignal): Promise<RunFigures>;
  close(): Promise<void>;
}

export interface Measurer {
  /** Starts the commit checked out in the repository; a string says why it cannot (the commit is skipped). */
  open(commit: string, signal: AbortSignal): Promise<CommitSession | string>;
}

/** Where each measured commit becomes a stage of one comparison. */
export interface StageSink {
  add(stage: string, note: string, files: string[]): Promise<void>;
  /** A link to the comparison opening on base against target (stage names), or null without a server. */
  link(base: string, target: string): string | null;
}

export interface BisectOptions {
  repo: string;
  good: string;
  bad: string;
  metric: BisectMetric;
  minChange: number;
  /** Widest ± of the A/A median allowed (null: 4 × minChange). */
  maxSpread: number | null;
  /** Runs per side to begin with (each A/A set has this many). */
  runs: number;
  /** Most runs of one commit. */
  maxRuns: number;
  /** Most bisect steps (commits measured after the pre-flight). */
  maxSteps: number;
  /** Time budget in milliseconds (null: none). */
  budgetMs: number | null;
}

export interface CommitFigures {
  commit: string;
  stage: string;
  values: number[];
  answer?: 'good' | 'bad' | 'skip';
}

export type BisectEnd =
  | { kind: 'culprit'; commit: string; stage: string; parent: string | null; parentStage: string; link: string | null }
  | { kind: 'too-noisy'; aa: AaResult }
  | { kind: 'no-regression'; check: RegressionResult }
  | { kind: 'ambiguous'; candidates: string[] }
  | { kind: 'stopped'; reason: string; good: string; bad: string };

export type BisectResult = { steps: number; measured: CommitFigures[] } & BisectEnd;

class Stop extends Error {}

/** The name of a commit's stage: short id and subject, control characters dropped, bounded. */
export function stageName(short: string, subject: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: dropping them is the point
  const clean = subject.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  const name = `${short} ${clean}`.trim();
  return name.length > 120 ? `${name.slice(0, 119)}…` : name;
}

export async function runBisect(
  o: BisectOptions,
  measurer: Measurer,
  sink: StageSink,
  log: (line: string) => void,
  signal: AbortSignal,
): Promise<BisectResult> {
  const start: StartPoint = preconditions(o.repo);
  const good = resolveCommit(o.repo, o.good, '--good');
  const bad = resolveCommit(o.repo, o.bad, '--bad');
  if (good === bad) throw new UsageError('--good and --bad name the same commit');
  if (!isAncestor(o.repo, good, bad)) throw new UsageError(`--good ${o.good} is not an ancestor of --bad ${o.bad}`);
  const deadline = o.budgetMs === null ? null : Date.now() + o.budgetMs;
  const m = BISECT_METRICS[o.metric];
  const decide = {
    metric: o.metric,
    minChange: o.minChange,
    ...(o.maxSpread !== null ? { maxSpread: o.maxSpread } : {}),
  };
  const measured = new Map<string, CommitFigures>();
  const files = new Map<string, string[]>();
  let steps = 0;
  let lastGood = good;
  let lastBad = bad;

  const check = () => {
    if (signal.aborted) throw new Stop('interrupted');
    if (deadline !== null && Date.now() > deadline) throw new Stop('time budget used up');
  };
  const figures = (commit: string): CommitFigures => {
    let f = measured.get(commit);
    if (!f) {
      const d = describeCommit(o.repo, commit);
      f = { commit, stage: stageName(d.short, d.subject), values: [] };
      measured.set(commit, f);
      files.set(commit, []);
    }
    return f;
  };
  const fmt = (v: number) => (o.metric === 'rps' ? v.toFixed(0) : v.toFixed(2));

  /** Takes `count` more runs of the commit checked out (started once); false when it could not be started. */
  const session = async (
    commit: string,
  ): Promise<{ more: (n: number) => Promise<void>; close: () => Promise<void> } | string> => {
    check();
    const f = figures(commit);
    const s = await measurer.open(commit, signal);
    if (typeof s === 'string') return s;
    return {
      more: async (n: number) => {
        for (let i = 0; i < n; i++) {
          check();
          const k = f.values.length + 1;
          const r = await s.run(k, signal);
          const v = r[o.metric];
          const list = files.get(commit)!;
          for (const p of r.files) list.push(p);
          if (v == null || !Number.isFinite(v))
            throw new Error(
              `run ${k} of ${f.stage}: ${o.metric === 'cpu-per-request' ? 'no CPU per request (no CPU profile over the load, or no requests/s in its output)' : `the load output has no ${m.label}`}`,
            );
          f.values.push(v);
          log(`  ${f.stage}: run ${k}: ${fmt(v)} ${m.unit}`);
        }
      },
      close: () => s.close(),
    };
  };
  const upload = async (commit: string) => {
    const f = measured.get(commit);
    if (!f || f.values.length === 0) return;
    await sink.add(
      f.stage,
      `bisect: ${f.answer ?? 'measured'}; ${f.values.length} runs; commit ${commit}`,
      files.get(commit)!,
    );
  };
  const result = (r: BisectEnd): BisectResult => ({ ...r, steps, measured: [...measured.values()] });

  try {
    // Pre-flight 1: A/A on the good commit, two sets from two starts of the service.
    checkoutDetached(o.repo, good);
    log(`pre-flight: A/A on the good commit ${figures(good).stage} (${o.runs} + ${o.runs} runs)`);
    const sets: number[][] = [];
    for (let set = 0; set < 2; set++) {
      const s = await session(good);
      if (typeof s === 'string') throw new UsageError(`the good commit cannot be started: ${s}`);
      const before = figures(good).values.length;
      try {
        await s.more(o.runs);
      } finally {
        await s.close();
      }
      sets.push(figures(good).values.slice(before));
    }
    const aa = aaCheck(sets[0]!, sets[1]!, decide);
    figures(good).answer = 'good';
    await upload(good);
    if (!aa.ok) return result({ kind: 'too-noisy', aa });
    const goodValues = figures(good).values;

    // Pre-flight 2: the bad commit must be significantly worse.
    checkoutDetached(o.repo, bad);
    log(`pre-flight: good against the bad commit ${figures(bad).stage}`);
    const sb = await session(bad);
    if (typeof sb === 'string') throw new UsageError(`the bad commit cannot be started: ${sb}`);
    let reg: RegressionResult;
    try {
      await sb.more(o.runs);
      reg = regressionCheck(sets, figures(bad).values, decide);
      // More runs while not shown worse (up to the cap), unless the bad commit is already shown better.
      while (!reg.ok && !isBetter(reg.verdict, decide) && figures(bad).values.length < o.maxRuns) {
        await sb.more(1);
        reg = regressionCheck(sets, figures(bad).values, decide);
      }
    } finally {
      await sb.close();
    }
    figures(bad).answer = 'bad';
    await upload(bad);
    if (!reg.ok) return result({ kind: 'no-regression', check: reg });
    const badValues = figures(bad).values;

    // The bisect.
    let next = bisectStart(o.repo, bad, good);
    while (next.kind === 'next') {
      check();
      if (steps >= o.maxSteps) throw new Stop(`step limit (${o.maxSteps}) reached`);
      steps++;
      const commit = next.commit;
      const f = figures(commit);
      log(`step ${steps}: ${f.stage}`);
      const s = await session(commit);
      let answer: 'good' | 'bad' | 'skip';
      if (typeof s === 'string') {
        log(`  cannot start it (${s}): skip`);
        answer = 'skip';
      } else {
        try {
          await s.more(o.runs);
          let j = judgeStep(goodValues, badValues, f.values, decide);
          while (j.answer === 'undecided' && f.values.length < o.maxRuns) {
            await s.more(1);
            j = judgeStep(goodValues, badValues, f.values, decide);
          }
          answer = j.answer === 'undecided' ? 'skip' : j.answer;
          log(`  ${answer}: ${j.reason}`);
        } finally {
          await s.close();
        }
      }
      f.answer = answer;
      if (answer === 'good') lastGood = commit;
      if (answer === 'bad') lastBad = commit;
      await upload(commit);
      next = bisectMark(o.repo, answer, commit);
    }
    if (next.kind === 'only-skipped') return result({ kind: 'ambiguous', candidates: next.candidates });
    const culprit = next.commit;
    const parent = parentOf(o.repo, culprit);
    const parentStage = parent && measured.has(parent) ? measured.get(parent)!.stage : figures(good).stage;
    const stage = measured.get(culprit)?.stage ?? figures(culprit).stage;
    return result({
      kind: 'culprit',
      commit: culprit,
      stage,
      parent,
      parentStage,
      link: measured.get(culprit)?.values.length ? sink.link(parentStage, stage) : null,
    });
  } catch (e) {
    if (e instanceof Stop) return result({ kind: 'stopped', reason: e.message, good: lastGood, bad: lastBad });
    // A measurer stopped mid-run by the interrupt throws its own error: still an interrupt.
    if (signal.aborted) return result({ kind: 'stopped', reason: 'interrupted', good: lastGood, bad: lastBad });
    throw e;
  } finally {
    const problem = restore(o.repo, start);
    if (problem) log(`warning: ${problem}`);
  }
}
