/**
 * The bisect loop on real git repositories (scratch ones built here) with figures from a recorded-style
 * measurer: each commit's service "measures" the value written in its tree (speed.txt) times a seeded
 * noise, so the decisions and the git handling are tested without timing anything.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type BisectOptions, type Measurer, type StageSink, runBisect, stageName } from '../../src/cli/bisect-run.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function git(repo: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** 16 commits; speed.txt holds the P99 each one "has": `slow` from commit k on (1-based), else 10. */
function scratchRepo(k: number | null, slow = 13): { repo: string; commits: string[] } {
  const repo = mkdtempSync(join(tmpdir(), 'stagediff-bisect-run-'));
  dirs.push(repo);
  git(repo, 'init', '-q', '-b', 'main');
  git(repo, 'config', 'user.name', 'test');
  git(repo, 'config', 'user.email', 'test@example.invalid');
  git(repo, 'config', 'commit.gpgsign', 'false');
  const commits: string[] = [];
  for (let i = 1; i <= 16; i++) {
    writeFileSync(join(repo, 'speed.txt'), `${k !== null && i >= k ? slow : 10}\n`);
    writeFileSync(join(repo, 'notes.txt'), `change ${i}\n`);
    git(repo, 'add', '.');
    git(repo, 'commit', '-q', '-m', i === k ? `commit ${i}: the slow one` : `commit ${i}`);
    commits.push(git(repo, 'rev-parse', 'HEAD'));
  }
  return { repo, commits };
}

/** A seeded generator (mulberry32), so every run of the test sees the same noise. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function fakeMeasurer(
  repo: string,
  noise: number,
  opts: { unstartable?: (commit: string) => boolean; opened?: string[] } = {},
): Measurer {
  const r = rng(42);
  return {
    async open(commit) {
      opts.opened?.push(commit);
      if (git(repo, 'rev-parse', 'HEAD') !== commit) throw new Error('measured a commit that is not checked out');
      if (opts.unstartable?.(commit)) return 'exit status 1 before ready';
      const base = Number(readFileSync(join(repo, 'speed.txt'), 'utf8'));
      return {
        async run() {
          const p99 = base * (1 + (r() * 2 - 1) * noise);
          return { p99, rps: 1000 / p99, files: [] };
        },
        async close() {},
      };
    },
  };
}

function memorySink(): StageSink & { stages: string[] } {
  const stages: string[] = [];
  return {
    stages,
    async add(stage) {
      stages.push(stage);
    },
    link: (base, target) =>
      `http://example.invalid/c/1?base=${encodeURIComponent(base)}&target=${encodeURIComponent(target)}`,
  };
}

const options = (repo: string, commits: string[], extra: Partial<BisectOptions> = {}): BisectOptions => ({
  repo,
  good: commits[0]!,
  bad: commits[15]!,
  metric: 'p99',
  minChange: 0.05,
  maxSpread: null,
  runs: 5,
  maxRuns: 10,
  maxSteps: 20,
  budgetMs: null,
  ...extra,
});

const never = new AbortController().signal;

describe('stagediff bisect: the loop on a scratch repository', () => {
  it.each([2, 5, 9, 16])(
    'names the planted slowdown at commit %i within ⌈log2 16⌉ + 2 steps and restores HEAD',
    async (k) => {
      const { repo, commits } = scratchRepo(k);
      const before = git(repo, 'rev-parse', 'HEAD');
      const sink = memorySink();
      const lines: string[] = [];
      const r = await runBisect(options(repo, commits), fakeMeasurer(repo, 0.02), sink, (l) => lines.push(l), never);
      expect(r.kind).toBe('culprit');
      if (r.kind !== 'culprit') return;
      expect(r.commit).toBe(commits[k - 1]);
      expect(r.parent).toBe(commits[k - 2]);
      expect(r.steps).toBeLessThanOrEqual(Math.ceil(Math.log2(16)) + 2);
      expect(r.stage).toMatch(new RegExp(`^[0-9a-f]{7} commit ${k}: the slow one$`));
      // The link's pair is the culprit's parent against the culprit.
      const link = new URL(r.link!);
      expect(link.searchParams.get('target')).toBe(r.stage);
      expect(link.searchParams.get('base')).toBe(r.parentStage);
      expect(r.parentStage).toMatch(new RegExp(`^[0-9a-f]{7} commit ${k - 1}$`));
      expect(sink.stages).toContain(r.parentStage);
      // Back on main, at the same commit, no bisect left behind.
      expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
      expect(git(repo, 'rev-parse', 'HEAD')).toBe(before);
      expect(existsSync(join(repo, '.git', 'BISECT_START'))).toBe(false);
    },
  );

  it('with the slowdown removed: "no regression", no commit named, no bisect step', async () => {
    const { repo, commits } = scratchRepo(null);
    const opened: string[] = [];
    const r = await runBisect(
      options(repo, commits),
      fakeMeasurer(repo, 0.02, { opened }),
      memorySink(),
      () => {},
      never,
    );
    expect(r.kind).toBe('no-regression');
    expect(r.steps).toBe(0);
    expect(new Set(opened)).toEqual(new Set([commits[0], commits[15]]));
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
  });

  it('on a noisy machine: stops at the A/A pre-flight with the spread, before any other commit', async () => {
    const { repo, commits } = scratchRepo(7);
    const opened: string[] = [];
    const r = await runBisect(
      options(repo, commits),
      fakeMeasurer(repo, 0.4, { opened }),
      memorySink(),
      () => {},
      never,
    );
    expect(r.kind).toBe('too-noisy');
    if (r.kind !== 'too-noisy') return;
    expect(r.aa.reason).toMatch(/known only to ±\d+\.\d %|differ by/);
    expect(new Set(opened)).toEqual(new Set([commits[0]]));
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(commits[15]);
  });

  it('a commit that cannot start is skipped and the culprit still found', async () => {
    const { repo, commits } = scratchRepo(4);
    // The first commit the bisect itself picks (the middle, far from commit 4) cannot be started (a broken build).
    let refused: string | null = null;
    const unstartable = (c: string) => {
      if (c === commits[0] || c === commits[15]) return false;
      refused ??= c;
      return c === refused;
    };
    const r = await runBisect(
      options(repo, commits),
      fakeMeasurer(repo, 0.02, { unstartable }),
      memorySink(),
      () => {},
      never,
    );
    expect(r.kind).toBe('culprit');
    if (r.kind === 'culprit') expect(r.commit).toBe(commits[3]);
    expect(r.measured.find((f) => f.commit === refused)?.answer).toBe('skip');
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
  });

  it('refuses a dirty working tree and leaves it as it was', async () => {
    const { repo, commits } = scratchRepo(9);
    writeFileSync(join(repo, 'notes.txt'), 'edited\n');
    await expect(
      runBisect(options(repo, commits), fakeMeasurer(repo, 0.02), memorySink(), () => {}, never),
    ).rejects.toThrow(/uncommitted changes/);
    expect(readFileSync(join(repo, 'notes.txt'), 'utf8')).toBe('edited\n');
    expect(existsSync(join(repo, '.git', 'BISECT_START'))).toBe(false);
  });

  it('an interrupt, the step limit and the budget each stop cleanly: bisect reset, back on the starting branch', async () => {
    const { repo, commits } = scratchRepo(9);
    git(repo, 'checkout', '-q', '-b', 'work', commits[15]!);
    const ac = new AbortController();
    let runs = 0;
    const inner = fakeMeasurer(repo, 0.02);
    const interrupting: Measurer = {
      async open(c, s) {
        const sess = await inner.open(c, s);
        if (typeof sess === 'string') return sess;
        return {
          run: async (k, sig) => {
            if (++runs === 25) ac.abort();
            return sess.run(k, sig);
          },
          close: () => sess.close(),
        };
      },
    };
    const r1 = await runBisect(options(repo, commits), interrupting, memorySink(), () => {}, ac.signal);
    expect(r1).toMatchObject({ kind: 'stopped', reason: 'interrupted' });
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('work');
    expect(existsSync(join(repo, '.git', 'BISECT_START'))).toBe(false);

    const r2 = await runBisect(
      options(repo, commits, { maxSteps: 1 }),
      fakeMeasurer(repo, 0.02),
      memorySink(),
      () => {},
      never,
    );
    expect(r2).toMatchObject({ kind: 'stopped', steps: 1 });
    if (r2.kind === 'stopped') expect(r2.reason).toMatch(/step limit/);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('work');

    const r3 = await runBisect(
      options(repo, commits, { budgetMs: 0 }),
      fakeMeasurer(repo, 0.02),
      memorySink(),
      () => {},
      never,
    );
    expect(r3).toMatchObject({ kind: 'stopped', reason: 'time budget used up' });
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(commits[15]);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('work');
  });

  it('stage names carry no control characters and stay bounded', () => {
    expect(stageName('abc1234', 'fix\u001b[31m red\ttab')).toBe('abc1234 fix [31m red tab');
    expect(stageName('abc1234', 'x'.repeat(500)).length).toBe(120);
  });
});
