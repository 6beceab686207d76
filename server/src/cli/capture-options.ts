import { existsSync, statSync } from 'node:fs';
import { type LoadTool, detectTool, loadDurationSeconds } from './load-tools.ts';
import { shellJoin } from './command-line.ts';
import { findModuleRoot } from './capture-sources.ts';
import { UsageError, parseFlags, stringFlag } from './flags.ts';
import { BuildInfoError, readGoBuildInfo } from '../ingest/go-buildinfo.ts';
import type { CaptureBuild } from '../model/capture.ts';

/** `stagediff capture`'s options: its flags read and checked (a usage error names the flag), and the load to run. */

const PROFILE_TYPES = ['cpu', 'heap', 'allocs', 'mutex', 'block', 'goroutine'] as const;
export type ProfileType = (typeof PROFILE_TYPES)[number];
/** Profiles net/http/pprof can return as a delta over `?seconds=N` instead of since process start. */
export const DELTA_TYPES: ProfileType[] = ['allocs', 'mutex', 'block'];
/** Profiles taken once the window has closed: the state at its end. */
export const SNAPSHOT_TYPES: ProfileType[] = ['heap', 'goroutine'];

/** Longest execution trace taken without --force-trace: tracing costs the service while it runs. */
const MAX_TRACE_SECONDS = 5;
/** The metrics endpoint is scraped this often over the window. */
export const METRICS_INTERVAL_MS = 1000;

export interface Options {
  pprof: string | null;
  /** Seconds of execution trace to take inside the window, or null. */
  trace: number | null;
  /** Runtime-metrics endpoint to scrape over the window, or null. */
  metrics: string | null;
  stage: string;
  note: string;
  runs: number;
  profiles: ProfileType[];
  seconds: number;
  warmup: number;
  pause: number;
  /** Seconds to wait before each run for the machine to be quiet (0: do not wait, only warn). */
  waitQuiet: number;
  out: string | null;
  /** The module whose sources are kept with the stage (a folder in it), or null for none. */
  source: { dir: string; explicit: boolean } | null;
  /** `--binary PATH`: the service binary's build information, read once before the runs. */
  build: CaptureBuild | null;
  server: string | null;
  comparison: string | null;
  token: string | null;
  title: string | null;
  load:
    | { kind: 'command'; argv: string[]; tool: LoadTool | null }
    | { kind: 'built-in'; url: string; connections: number; duration: number; rate: number | null };
}

function positiveNumber(v: string | undefined, name: string, fallback: number | null): number | null {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--${name} must be a positive number, got "${v}"`);
  return n;
}

/** --source DIR, none, or by default the module of the current directory (when there is one). */
function sourceOption(v: string | undefined): Options['source'] {
  if (v === 'none') return null;
  if (v === undefined) return { dir: process.cwd(), explicit: false };
  if (!existsSync(v) || !statSync(v).isDirectory()) throw new UsageError(`--source ${v}: no such folder`);
  if (!findModuleRoot(v)) throw new UsageError(`--source ${v}: no go.mod in it or above it (not in a Go module)`);
  return { dir: v, explicit: true };
}

export function parseOptions(args: string[]): Options {
  const dd = args.indexOf('--');
  const own = dd >= 0 ? args.slice(0, dd) : args;
  const loadArgv = dd >= 0 ? args.slice(dd + 1) : [];
  const f = parseFlags(own, {
    pprof: 'string',
    stage: 'string',
    note: 'string',
    runs: 'string',
    profiles: 'string',
    seconds: 'string',
    warmup: 'string',
    pause: 'string',
    'wait-quiet': 'string',
    out: 'string',
    source: 'string',
    server: 'string',
    comparison: 'string',
    token: 'string',
    title: 'string',
    url: 'string',
    connections: 'string',
    duration: 'string',
    rate: 'string',
    trace: 'string',
    'force-trace': 'boolean',
    metrics: 'string',
    binary: 'string',
  });
  if (f.positionals.length > 0)
    throw new UsageError(`unexpected "${f.positionals[0]}": put the load command after "--"`);
  const stage = stringFlag(f, 'stage');
  if (!stage) throw new UsageError('capture needs --stage NAME');
  const runsText = stringFlag(f, 'runs') ?? '1';
  const runs = Number(runsText);
  if (!Number.isInteger(runs) || runs < 1 || runs > 100)
    throw new UsageError(`--runs must be an integer from 1 to 100, got "${runsText}"`);
  const profText = stringFlag(f, 'profiles') ?? PROFILE_TYPES.join(',');
  const profiles: ProfileType[] = [];
  if (profText !== 'none')
    for (const p of profText.split(',').map((s) => s.trim())) {
      if (!(PROFILE_TYPES as readonly string[]).includes(p))
        throw new UsageError(`--profiles: unknown profile "${p}" (known: ${PROFILE_TYPES.join(', ')}, or none)`);
      if (!profiles.includes(p as ProfileType)) profiles.push(p as ProfileType);
    }
  let pprof = stringFlag(f, 'pprof') ?? null;
  if (profiles.length > 0 && !pprof)
    throw new UsageError("capture needs --pprof URL (the service's net/http/pprof address), or --profiles none");
  if (pprof) {
    if (!/^https?:\/\//.test(pprof)) throw new UsageError(`--pprof must be an http(s) URL, got "${pprof}"`);
    pprof = pprof.replace(/\/+$/, '').replace(/\/debug\/pprof$/, '');
  }
  const trace = positiveNumber(stringFlag(f, 'trace'), 'trace', null);
  if (trace !== null) {
    if (!pprof) throw new UsageError('--trace needs --pprof URL (the trace comes from /debug/pprof/trace)');
    if (trace > MAX_TRACE_SECONDS && !f.values['force-trace'])
      throw new UsageError(
        `--trace ${trace}: a trace costs the service while it runs, so it is kept to ${MAX_TRACE_SECONDS} s; add --force-trace to take a longer one`,
      );
  } else if (f.values['force-trace']) throw new UsageError('--force-trace goes with --trace S');
  const metrics = stringFlag(f, 'metrics') ?? null;
  if (metrics !== null && !/^https?:\/\//.test(metrics))
    throw new UsageError(
      `--metrics must be an http(s) URL (a Prometheus text endpoint or /debug/vars), got "${metrics}"`,
    );
  const binary = stringFlag(f, 'binary');
  let build: CaptureBuild | null = null;
  if (binary !== undefined) {
    try {
      build = { binary, ...readGoBuildInfo(binary) };
    } catch (e) {
      const why = e instanceof BuildInfoError ? e.message : `cannot read it: ${(e as Error).message}`;
      throw new UsageError(`--binary ${why.startsWith(binary) ? why : `${binary}: ${why}`}`);
    }
  }
  const warmup = positiveNumber(stringFlag(f, 'warmup'), 'warmup', 1)!;
  const pause = stringFlag(f, 'pause') === '0' ? 0 : positiveNumber(stringFlag(f, 'pause'), 'pause', 1)!;
  const waitQuiet =
    stringFlag(f, 'wait-quiet') === '0' ? 0 : positiveNumber(stringFlag(f, 'wait-quiet'), 'wait-quiet', 0)!;
  let seconds = positiveNumber(stringFlag(f, 'seconds'), 'seconds', null);
  let load: Options['load'];
  if (loadArgv.length > 0) {
    for (const k of ['url', 'connections', 'duration', 'rate'])
      if (stringFlag(f, k) !== undefined)
        throw new UsageError(`--${k} is for the built-in generator; it does not apply to a load command`);
    const tool = detectTool(loadArgv);
    if (seconds === null) {
      const d = loadDurationSeconds(tool, loadArgv);
      if (d === null)
        throw new UsageError(
          `cannot tell how long "${shellJoin(loadArgv)}" runs: give --seconds S (the profile window, shorter than the load)`,
        );
      seconds = Math.floor(d - warmup - 1);
      if (seconds < 1)
        throw new UsageError(
          `the load runs ${d} s: too short for a ${warmup} s warm-up, a profile window and 1 s to spare`,
        );
    }
    load = { kind: 'command', argv: loadArgv, tool };
  } else {
    const url = stringFlag(f, 'url');
    if (!url) throw new UsageError('give a load command after "--", or --url URL for the built-in generator');
    if (!/^https?:\/\//.test(url)) throw new UsageError(`--url must be an http(s) URL, got "${url}"`);
    const connections = positiveNumber(stringFlag(f, 'connections'), 'connections', 32)!;
    if (!Number.isInteger(connections)) throw new UsageError('--connections must be an integer');
    const rate = positiveNumber(stringFlag(f, 'rate'), 'rate', null);
    const durText = stringFlag(f, 'duration');
    let duration = durText === undefined ? null : positiveNumber(durText, 'duration', null);
    if (seconds === null) seconds = duration === null ? 10 : Math.floor(duration - warmup - 1);
    if (duration === null) duration = warmup + seconds + 1;
    if (seconds < 1 || duration < warmup + seconds)
      throw new UsageError(
        `--duration ${duration} is too short for a ${warmup} s warm-up and a ${seconds} s profile window`,
      );
    load = { kind: 'built-in', url, connections, duration, rate };
  }
  const server = stringFlag(f, 'server') ?? null;
  const comparison = stringFlag(f, 'comparison') ?? null;
  const token = stringFlag(f, 'token') ?? process.env.STAGEDIFF_TOKEN ?? null;
  if (comparison && !server) throw new UsageError('--comparison needs --server URL');
  if (comparison && !token) throw new UsageError('--comparison needs --token (or STAGEDIFF_TOKEN) to add to it');
  if (trace !== null && trace > seconds!)
    throw new UsageError(`--trace ${trace} is longer than the ${seconds} s window it is taken in (--seconds)`);
  return {
    pprof,
    trace,
    metrics,
    stage,
    note: stringFlag(f, 'note') ?? '',
    runs,
    profiles,
    seconds: seconds!,
    warmup,
    pause,
    waitQuiet,
    out: stringFlag(f, 'out') ?? null,
    source: sourceOption(stringFlag(f, 'source')),
    build,
    server,
    comparison,
    token,
    title: stringFlag(f, 'title') ?? null,
    load,
  };
}
