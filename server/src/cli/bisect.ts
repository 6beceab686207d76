import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { termLines } from '../api/untrusted-text.ts';
import { BISECT_METRICS, isBisectMetric } from './bisect-decide.ts';
import { describeCommit } from './bisect-git.ts';
import {
  type BisectResult,
  type CommitSession,
  type Measurer,
  type RunFigures,
  type StageSink,
  runBisect,
} from './bisect-run.ts';
import { readLoad } from './capture-load.ts';
import { cpuMicrosPerRequest, fetchProfile, interrupt, profileUrl, readCpu } from './capture-profiles.ts';
import { UsageError, parseFlags, stringFlag } from './flags.ts';
import { detectTool, loadDurationSeconds, loadOutputName, parseDurationSeconds } from './load-tools.ts';
import { uploadToStage } from './upload.ts';

/**
 * `stagediff bisect`: the live side of the loop in bisect-run.ts. At each commit the recipe (the words
 * after `--`, run in the repository) builds and starts the service; once --ready answers 2xx, each run
 * is the --load command (run by `sh -c`), its output read as `capture` reads it; then the recipe's
 * process group is stopped. Every measured commit becomes a stage (its load outputs uploaded as
 * `run-N-…`) of one comparison on --server, and the end is a link opening on the culprit's parent
 * against the culprit. With --pprof each run also takes a CPU profile over the load's window (after
 * --warmup, for --seconds, as `capture` does), uploaded with the run; `--metric cpu-per-request`
 * follows its CPU total over the requests served in that window.
 */

const SPEC = {
  good: 'string',
  bad: 'string',
  metric: 'string',
  'min-change': 'string',
  'max-spread': 'string',
  runs: 'string',
  'max-runs': 'string',
  'max-steps': 'string',
  budget: 'string',
  ready: 'string',
  'ready-timeout': 'string',
  load: 'string',
  pprof: 'string',
  warmup: 'string',
  seconds: 'string',
  repo: 'string',
  out: 'string',
  server: 'string',
  comparison: 'string',
  token: 'string',
  title: 'string',
} as const;

function intFlag(v: string | undefined, name: string, dflt: number, min: number, max: number): number {
  if (v === undefined) return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new UsageError(`--${name} ${v}: a whole number from ${min} to ${max}`);
  return n;
}

export async function bisectCommand(args: string[]): Promise<number> {
  const f = parseFlags(args, SPEC);
  const s = (n: keyof typeof SPEC) => stringFlag(f, n);
  const good = s('good');
  const bad = s('bad');
  if (!good || !bad) throw new UsageError('bisect needs --good REV and --bad REV');
  const metric = s('metric') ?? 'p99';
  if (!isBisectMetric(metric))
    throw new UsageError(
      `--metric ${metric}: one of ${Object.keys(BISECT_METRICS).join(', ')} (read from the load output)`,
    );
  const minText = (s('min-change') ?? '5').replace(/%$/, '');
  const minChange = Number(minText) / 100;
  if (!Number.isFinite(minChange) || minChange <= 0 || minChange >= 10)
    throw new UsageError(`--min-change ${s('min-change')}: a percentage above 0, e.g. 5 or 5%`);
  const spreadText = s('max-spread')?.replace(/%$/, '');
  const maxSpread = spreadText === undefined ? null : Number(spreadText) / 100;
  if (maxSpread !== null && !(Number.isFinite(maxSpread) && maxSpread > 0))
    throw new UsageError(`--max-spread ${s('max-spread')}: a percentage above 0, e.g. 20 or 20%`);
  const runs = intFlag(s('runs'), 'runs', 5, 2, 50);
  const maxRuns = intFlag(s('max-runs'), 'max-runs', Math.max(10, runs), runs, 100);
  const maxSteps = intFlag(s('max-steps'), 'max-steps', 20, 1, 1000);
  const budgetText = s('budget');
  const budgetSeconds = budgetText === undefined ? null : parseDurationSeconds(budgetText);
  if (budgetText !== undefined && (budgetSeconds === null || budgetSeconds <= 0))
    throw new UsageError(`--budget ${budgetText}: a duration such as 30m or 1h30m`);
  const ready = s('ready');
  if (!ready || !/^https?:\/\//.test(ready))
    throw new UsageError('bisect needs --ready URL (http://…): answers 2xx once the service is up');
  const readyTimeout = parseDurationSeconds(s('ready-timeout') ?? '180');
  if (readyTimeout === null || readyTimeout <= 0)
    throw new UsageError(`--ready-timeout ${s('ready-timeout')}: a duration`);
  const load = s('load');
  if (!load)
    throw new UsageError("bisect needs --load 'COMMAND' (e.g. 'wrk -t1 -c8 -d5s --latency URL'), run by sh -c");
  const profile = profileWindow(load, s('pprof'), s('warmup'), s('seconds'), metric);
  const recipe = f.positionals;
  if (recipe.length === 0)
    throw new UsageError('bisect needs the recipe after --: the command that builds and starts the service');
  if (s('comparison') && !s('token')) throw new UsageError('--comparison needs --token');
  const repo = resolve(s('repo') ?? '.');
  const out = resolve(s('out') ?? mkdtempSync(join(tmpdir(), 'stagediff-bisect-')));
  mkdirSync(out, { recursive: true });

  const log = (line: string) => process.stderr.write(termLines(`${line}\n`));
  const measurer = liveMeasurer({ repo, out, recipe, ready, readyMs: readyTimeout * 1000, load, profile });
  const sink = serverSink(s('server'), s('comparison'), s('token'), s('title') ?? `bisect ${good}..${bad} (${metric})`);
  const ac = new AbortController();
  const onSignal = () => {
    log('interrupted: stopping the service and resetting the bisect');
    ac.abort();
    interrupt.abort();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  log(
    `bisect ${good}..${bad} on ${BISECT_METRICS[metric].label}: ${runs} runs per side, up to ${maxRuns}; files in ${out}`,
  );
  let r: BisectResult;
  try {
    r = await runBisect(
      {
        repo,
        good,
        bad,
        metric,
        minChange,
        maxSpread,
        runs,
        maxRuns,
        maxSteps,
        budgetMs: budgetSeconds === null ? null : budgetSeconds * 1000,
      },
      measurer,
      sink,
      log,
      ac.signal,
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
  process.stdout.write(termLines(`${summary(r, repo, metric)}\n`));
  switch (r.kind) {
    case 'culprit':
      return 0;
    case 'stopped':
      return r.reason === 'interrupted' ? 130 : 3;
    default:
      return 3;
  }
}

function summary(r: BisectResult, repo: string, metric: keyof typeof BISECT_METRICS): string {
  const m = BISECT_METRICS[metric];
  const steps = `${r.steps} step${r.steps === 1 ? '' : 's'}`;
  switch (r.kind) {
    case 'culprit': {
      const lines = [`first bad commit: ${r.commit} (${r.stage}) after ${steps}`, `its parent: ${r.parentStage}`];
      if (r.link) lines.push(`comparison (parent against culprit): ${r.link}`);
      return lines.join('\n');
    }
    case 'too-noisy': {
      const e = r.aa.spread?.estimate;
      const spread = e
        ? `; ${e.n} runs of the good commit: median ${e.median.toFixed(2)} ${m.unit}${e.ci === null ? ' ± ∞' : ` ± ${(e.ci * 100).toFixed(1)} %`}, range ${(r.aa.spread!.range * 100).toFixed(1)} % of the median`
        : '';
      return `the machine is too noisy to bisect: ${r.aa.reason}${spread}. No commit named.`;
    }
    case 'no-regression': {
      const v = r.check.verdict;
      const ratio = v.ratio === null ? '?' : `${((v.ratio - 1) * 100).toFixed(1)} %`;
      const sets = r.check.perSet
        .map(
          (s, i) =>
            `A/A set ${i + 1}: ${s.ratio === null ? '?' : `${((s.ratio - 1) * 100).toFixed(1)} %`}, p=${s.p === null ? '–' : s.p.toFixed(3)}`,
        )
        .join('; ');
      return `no regression between good and bad in ${m.label} (bad against good: ${ratio}, p=${v.p === null ? '–' : v.p.toFixed(3)}, ${v.nBase}+${v.nTarget} runs, ${v.status}; ${sets}). No commit named.`;
    }
    case 'ambiguous':
      return `only skipped commits are left: the first bad commit is one of\n${r.candidates.map((c) => `  ${c} (${describeCommit(repo, c).subject})`).join('\n')}`;
    case 'stopped':
      return `stopped (${r.reason}) after ${steps}: the first bad commit is after ${r.good} and at or before ${r.bad}. No commit named.`;
  }
}

/** Where and when each run's CPU profile is taken: --pprof's base, after `warmup` s of load, for `seconds`. */
export interface ProfileWindow {
  pprof: string;
  warmup: number;
  seconds: number;
}

/**
 * The profile window from --pprof, --warmup and --seconds (by default the load's own duration less the
 * warm-up and 1 s to spare, as `capture` places it); null without --pprof, which
 * `--metric cpu-per-request` refuses.
 */
export function profileWindow(
  load: string,
  pprofFlag: string | undefined,
  warmupFlag: string | undefined,
  secondsFlag: string | undefined,
  metric: string,
): ProfileWindow | null {
  if (!pprofFlag) {
    if (metric === 'cpu-per-request')
      throw new UsageError(
        "--metric cpu-per-request needs --pprof URL (the service's net/http/pprof address): each run's CPU per request comes from a CPU profile over its load",
      );
    for (const k of ['warmup', 'seconds'] as const)
      if ((k === 'warmup' ? warmupFlag : secondsFlag) !== undefined)
        throw new UsageError(`--${k} places the CPU profile in each run: it needs --pprof URL`);
    return null;
  }
  if (!/^https?:\/\//.test(pprofFlag)) throw new UsageError(`--pprof must be an http(s) URL, got "${pprofFlag}"`);
  const pprof = pprofFlag.replace(/\/+$/, '').replace(/\/debug\/pprof$/, '');
  const warmup = warmupFlag === undefined ? 1 : parseDurationSeconds(warmupFlag);
  if (warmup === null || warmup < 0) throw new UsageError(`--warmup ${warmupFlag}: a duration such as 1 or 500ms`);
  let seconds: number | null;
  if (secondsFlag !== undefined) {
    seconds = parseDurationSeconds(secondsFlag);
    if (seconds === null || !Number.isInteger(seconds) || seconds < 1)
      throw new UsageError(`--seconds ${secondsFlag}: a whole number of seconds, at least 1 (the profile window)`);
  } else {
    const argv = ['sh', '-c', load];
    const d = loadDurationSeconds(detectTool(argv), argv);
    if (d === null)
      throw new UsageError(
        `cannot tell how long --load '${load}' runs: give --seconds S (the profile window, shorter than the load)`,
      );
    seconds = Math.floor(d - warmup - 1);
    if (seconds < 1)
      throw new UsageError(
        `--load runs ${d} s: too short for a ${warmup} s warm-up, a 1 s profile window and 1 s to spare (a longer load, or --warmup/--seconds)`,
      );
  }
  return { pprof, warmup, seconds };
}

interface LiveSetup {
  repo: string;
  out: string;
  recipe: string[];
  ready: string;
  readyMs: number;
  load: string;
  profile: ProfileWindow | null;
}

async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

function waitExit(child: ChildProcess): Promise<void> {
  return new Promise((res) => {
    if (child.exitCode !== null || child.signalCode !== null) return res();
    child.once('exit', () => res());
  });
}

function stopGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  try {
    if (child.pid) process.kill(-child.pid, sig);
  } catch {
    // already gone
  }
}

function tail(path: string): string {
  try {
    const t = readFileSync(path, 'utf8').trim().split('\n');
    return t.slice(-5).join(' | ');
  } catch {
    return '';
  }
}

/** Starts the recipe at a commit, waits for --ready, runs --load per run, stops the recipe's process group. */
export function liveMeasurer(o: LiveSetup): Measurer {
  let starts = 0;
  return {
    async open(commit, signal): Promise<CommitSession | string> {
      if (await answers(o.ready))
        throw new UsageError(`something already answers at --ready ${o.ready} before the recipe starts: stop it first`);
      const { short } = describeCommit(o.repo, commit);
      const dir = join(o.out, short);
      mkdirSync(dir, { recursive: true });
      const logPath = join(dir, `recipe-${++starts}.log`);
      const fd = openSync(logPath, 'w');
      const child = spawn(o.recipe[0]!, o.recipe.slice(1), {
        cwd: o.repo,
        detached: true,
        stdio: ['ignore', fd, fd],
        env: { ...process.env, STAGEDIFF_BISECT_COMMIT: commit },
      });
      closeSync(fd);
      let spawnError: string | null = null;
      child.on('error', (e) => {
        spawnError = e.message;
      });
      const exited = waitExit(child);
      const close = async () => {
        stopGroup(child, 'SIGTERM');
        const t = setTimeout(() => stopGroup(child, 'SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
        // The group may outlive its leader (a `sh -c` that did not exec): make sure none is left.
        stopGroup(child, 'SIGKILL');
      };
      const until = Date.now() + o.readyMs;
      for (;;) {
        if (signal.aborted) {
          await close();
          throw new Error('interrupted');
        }
        if (spawnError) return `the recipe cannot start: ${spawnError}`;
        if (child.exitCode !== null || child.signalCode !== null) {
          // Whatever it started (a build's workers) goes with it.
          await close();
          return `the recipe exited (${child.exitCode ?? child.signalCode}) before ${o.ready} answered: ${tail(logPath)}`;
        }
        if (await answers(o.ready)) break;
        if (Date.now() > until) {
          await close();
          return `${o.ready} did not answer within ${o.readyMs / 1000} s`;
        }
        await sleep(250);
      }
      return {
        run: (k) => measureRun(o.load, join(dir, `run-${k}`), o.profile, signal, `run ${k} at ${short}`),
        close,
      };
    },
  };
}

/** Uploads each commit's runs as a stage of one comparison on --server; without one, keeps them in --out only. */
export function serverSink(
  server: string | undefined,
  comparison: string | undefined,
  token: string | undefined,
  title: string,
): StageSink {
  const ids = new Map<string, string>();
  let cmp = comparison;
  let tok = token;
  let url: string | null = null;
  return {
    async add(stage, note, files) {
      if (!server) return;
      const r = await uploadToStage({
        server,
        ...(cmp ? { comparison: cmp, token: tok! } : { title }),
        stage,
        note,
        files: files.map((path) => ({ path })),
      });
      const failed = r.results.flatMap((x) => (x.ok ? [] : [`${x.filename}: ${x.error.message}`]));
      if (failed.length > 0) throw new Error(`upload of stage "${stage}": ${failed.join('; ')}`);
      cmp = r.id;
      tok = r.token;
      url = r.url;
      ids.set(stage, r.stageId);
    },
    link(base, target) {
      const b = ids.get(base);
      const t = ids.get(target);
      if (!url || !b || !t) return null;
      const u = new URL(url);
      u.searchParams.set('base', b);
      u.searchParams.set('target', t);
      return u.href;
    },
  };
}

/**
 * One run: the --load command (by `sh -c`) into `runDir`, and with a profile window a CPU profile
 * fetched from --pprof while the load runs (after its warm-up, as `capture` does); its figures read back
 * the way `capture` reads them (load output; CPU per request by the same formula).
 */
export async function measureRun(
  load: string,
  runDir: string,
  profile: ProfileWindow | null,
  signal: AbortSignal,
  what: string,
): Promise<RunFigures> {
  mkdirSync(runDir, { recursive: true });
  const argv = ['sh', '-c', load];
  const outName = loadOutputName(detectTool(argv), argv);
  const path = join(runDir, outName.name);
  const ofd = openSync(path, 'w');
  const efd = openSync(join(runDir, 'load.log'), 'w');
  const lc = spawn('sh', ['-c', load], {
    stdio: ['ignore', outName.stream === 'stdout' ? ofd : efd, outName.stream === 'stdout' ? efd : ofd],
  });
  closeSync(ofd);
  closeSync(efd);
  const onAbort = () => lc.kill('SIGTERM');
  signal.addEventListener('abort', onAbort, { once: true });
  let ended = false;
  const done = new Promise<number | null>((res) => {
    lc.on('error', () => res(-1));
    lc.on('close', (c) => res(c));
  }).then((c) => {
    ended = true;
    return c;
  });
  let cpuPath: string | null = null;
  let profileError: string | null = null;
  if (profile) {
    await Promise.race([sleep(profile.warmup * 1000, undefined, { signal }).catch(() => undefined), done]);
    if (ended) profileError = `the load ended within the ${profile.warmup} s warm-up: no CPU profile`;
    else if (!signal.aborted) {
      const url = profileUrl(profile.pprof, 'cpu', profile.seconds);
      const file = join(runDir, 'cpu.pb.gz');
      try {
        await fetchProfile(url, file, (profile.seconds + 30) * 1000);
        cpuPath = file;
        if (ended) profileError = `the load ended before the ${profile.seconds} s profile window closed`;
      } catch (e) {
        profileError = (e as Error).message;
      }
    }
  }
  const code = await done;
  signal.removeEventListener('abort', onAbort);
  if (signal.aborted) throw new Error('interrupted');
  if (code !== 0) throw new Error(`--load exited with status ${code} (${what}): ${tail(join(runDir, 'load.log'))}`);
  if (profileError) throw new Error(`${what}: ${profileError}`);
  const figures = await readLoad(path);
  if (typeof figures === 'string') throw new Error(`${what}: ${path}: ${figures}`);
  const cpu = cpuPath ? await readCpu(cpuPath) : null;
  if (cpuPath && !cpu) throw new Error(`${what}: ${cpuPath} cannot be read as a CPU profile`);
  return {
    rps: figures.rps,
    p99: figures.p99,
    ...(profile ? { 'cpu-per-request': cpuMicrosPerRequest(cpu, figures.rps) } : {}),
    files: cpuPath ? [path, cpuPath] : [path],
  };
}
