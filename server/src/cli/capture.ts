import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { copyFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, availableParallelism, platform, tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ingest } from '../ingest/detect.ts';
import { BuildInfoError, readGoBuildInfo } from '../ingest/go-buildinfo.ts';
import '../ingest/registry.ts';
import {
  type CaptureBuild,
  type CaptureFile,
  type CaptureLoad,
  type CaptureRecord,
  type CaptureRun,
  type CaptureSummary,
  uploadedFiles,
} from '../model/capture.ts';
import {
  type LoadTool,
  detectTool,
  extraOutputFiles,
  isVegetaAttack,
  loadDurationSeconds,
  loadOutputName,
  perRequestHint,
  toolVersion,
} from './load-tools.ts';
import { redactHeaders, redactSecrets, shellJoin } from './command-line.ts';
import { machineIdentity, sampleMachine } from './machine.ts';
import { SOURCES_ARCHIVE, collectSources, findModuleRoot, profileFrames, sourcesArchive } from './capture-sources.ts';
import { SOURCE_LIMITS } from '../config.ts';
import { UsageError, parseFlags, stringFlag } from './flags.ts';
import { postCapture, uploadToStage } from './upload.ts';
import { MetricsRecorder, parseScrape } from '../ingest/metrics/index.ts';
import { maxOf } from '../analysis/extent.ts';

const PROFILE_TYPES = ['cpu', 'heap', 'allocs', 'mutex', 'block', 'goroutine'] as const;
type ProfileType = (typeof PROFILE_TYPES)[number];
/** Profiles net/http/pprof can return as a delta over `?seconds=N` instead of since process start. */
const DELTA_TYPES: ProfileType[] = ['allocs', 'mutex', 'block'];
/** Profiles taken once the window has closed: the state at its end. */
const SNAPSHOT_TYPES: ProfileType[] = ['heap', 'goroutine'];

const requireHere = createRequire(import.meta.url);

/** Longest execution trace taken without --force-trace: tracing costs the service while it runs. */
const MAX_TRACE_SECONDS = 5;
/** The metrics endpoint is scraped this often over the window. */
const METRICS_INTERVAL_MS = 1000;

interface Options {
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

function parseOptions(args: string[]): Options {
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

/** Terminal progress on stderr: permanent lines for each step, and a live countdown on a TTY. */
class Progress {
  private status = '';
  private timer: NodeJS.Timeout | null = null;
  private readonly tty = Boolean(process.stderr.isTTY);

  line(text: string): void {
    this.clear();
    process.stderr.write(`${text}\n`);
    this.draw();
  }
  /** A live status line, e.g. "run 1/3: profiles (4 s left)"; `until` is when the step ends (ms epoch). */
  countdown(label: string, until: number): void {
    if (!this.tty) return;
    this.stopCountdown();
    const tick = () => {
      const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
      this.clear();
      this.status = `${label} (${left} s left)`;
      this.draw();
    };
    tick();
    this.timer = setInterval(tick, 250);
  }
  stopCountdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
    this.status = '';
  }
  private clear(): void {
    if (this.tty && this.status) process.stderr.write('\r\x1b[K');
  }
  private draw(): void {
    if (this.tty && this.status) process.stderr.write(this.status);
  }
}

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

function fileEntry(dir: string, rel: string, role: CaptureFile['role'], extra: Partial<CaptureFile> = {}): CaptureFile {
  const p = join(dir, rel);
  return { path: rel, role, size: statSync(p).size, sha256: sha256File(p), ...extra };
}

function errorText(e: unknown): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  const c = err?.cause;
  if (c?.code === 'ECONNREFUSED') return 'connection refused';
  if (c?.code) return `${c.code}${c.message ? ` (${c.message})` : ''}`;
  return err?.message ?? String(e);
}

class FetchError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** GETs one pprof endpoint into `file`; a non-profile answer (HTML, text, an error page) is an error. */
/** Aborted on SIGINT/SIGTERM, so a profile that still has seconds to run does not hold up the exit. */
const interrupt = new AbortController();

/**
 * Go runs one CPU profile at a time: net/http/pprof answers 500 "cpu profiling already in use" while
 * another is running — in practice a continuous profiler (Parca, Pyroscope, an agent) scraping the
 * service. Said as what it is and what to do, not as an HTTP error.
 */
function cpuInUse(url: string): string {
  return `${url}: the service's CPU profiler is already in use — another profiler (a continuous profiler such as Parca or Pyroscope, or an agent) is taking CPU profiles of it, and Go runs one at a time. Pause that profiler's CPU scrapes while capturing, or capture without cpu (--profiles heap,allocs,mutex,block,goroutine) and take the CPU profile of the same window from that profiler`;
}

async function fetchProfile(url: string, file: string, timeoutMs: number): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), interrupt.signal]) });
  } catch (e) {
    if (interrupt.signal.aborted) throw new FetchError(`${url}: interrupted`, null);
    throw new FetchError(`cannot reach ${url}: ${errorText(e)}`, null);
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) {
    const text = body.toString('utf8').trim().split('\n')[0]?.slice(0, 200) ?? '';
    if (res.status === 500 && /cpu profiling already in use/i.test(text)) throw new FetchError(cpuInUse(url), 500);
    const hint = res.status === 404 ? ' (is net/http/pprof registered on this address?)' : '';
    throw new FetchError(`${url}: HTTP ${res.status}${text ? `: ${text}` : ''}${hint}`, res.status);
  }
  if (body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b)
    throw new FetchError(`${url}: the answer is not a gzipped pprof profile (${body.length} bytes)`, 200);
  writeFileSync(file, body);
}

function profileUrl(base: string, type: ProfileType, seconds: number | null): string {
  const name = type === 'cpu' ? 'profile' : type;
  return `${base}/debug/pprof/${name}${seconds !== null ? `?seconds=${seconds}` : ''}`;
}

function iso(ms = Date.now()): string {
  return new Date(ms).toISOString();
}

/** The running load: an external process or the in-process generator. */
interface RunningLoad {
  done: Promise<{ exitCode: number | null; signal: string | null; error: string | null }>;
  stop(): void;
  outputs: { rel: string; stream: 'stdout' | 'stderr' | 'generator' }[];
  /** Side streams kept as raw files when not empty (stderr, or stdout when the result is on stderr). */
  sideRels: string[];
  stderrRel: string | null;
}

function startCommand(o: Options & { load: { kind: 'command' } }, dir: string, prefix: string): RunningLoad {
  const { argv, tool } = o.load;
  const out = loadOutputName(tool, argv);
  const outRel = `${prefix}${out.name}`;
  const errRel = out.stream === 'stderr' ? outRel : `${prefix}load.stderr.txt`;
  const stdoutFile = out.stream === 'stdout' ? outRel : `${prefix}load.stdout.txt`;
  const so = createWriteStream(join(dir, stdoutFile));
  const se = createWriteStream(join(dir, errRel));
  let child: ChildProcess;
  const done = new Promise<{ exitCode: number | null; signal: string | null; error: string | null }>((res) => {
    child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let spawnError: string | null = null;
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError =
        e.code === 'ENOENT'
          ? `load tool "${argv[0]}" is not installed (not found on PATH)`
          : `cannot start "${argv[0]}": ${e.message}`;
    });
    child.stdout!.pipe(so);
    child.stderr!.pipe(se);
    let streams = 2;
    let code: number | null = null;
    let sig: string | null = null;
    let exited = false;
    const finish = () => {
      if (exited && streams === 0) res({ exitCode: code, signal: sig, error: spawnError });
    };
    so.on('close', () => {
      streams--;
      finish();
    });
    se.on('close', () => {
      streams--;
      finish();
    });
    child.on('close', (c, s) => {
      code = c;
      sig = s;
      exited = true;
      finish();
    });
  });
  return {
    done,
    stop: () => child?.kill('SIGTERM'),
    outputs: [{ rel: outRel, stream: out.stream }],
    sideRels: [out.stream === 'stderr' ? stdoutFile : errRel],
    stderrRel: errRel,
  };
}

interface AutocannonInstance {
  stop(): void;
}
type Autocannon = (
  opts: Record<string, unknown>,
  cb: (err: Error | null, result: unknown) => void,
) => AutocannonInstance;

function autocannonVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(requireHere.resolve('autocannon/package.json'), 'utf8')) as { version: string };
    return `autocannon ${pkg.version}`;
  } catch {
    return 'autocannon';
  }
}

function startGenerator(o: Options & { load: { kind: 'built-in' } }, dir: string, prefix: string): RunningLoad {
  const rel = `${prefix}autocannon.json`;
  let inst: AutocannonInstance | null = null;
  const done = (async () => {
    const autocannon = requireHere('autocannon') as Autocannon;
    return await new Promise<{ exitCode: number | null; signal: string | null; error: string | null }>((res) => {
      inst = autocannon(
        {
          url: o.load.url,
          connections: o.load.connections,
          duration: o.load.duration,
          ...(o.load.rate !== null ? { overallRate: o.load.rate } : {}),
        },
        (err, result) => {
          if (err) return res({ exitCode: 1, signal: null, error: `built-in generator failed: ${err.message}` });
          // Exactly what `autocannon --json` prints for the same run.
          writeFileSync(join(dir, rel), `${JSON.stringify(result)}\n`);
          res({ exitCode: 0, signal: null, error: null });
        },
      );
    });
  })();
  return {
    done,
    stop: () => (inst as AutocannonInstance | null)?.stop(),
    outputs: [{ rel, stream: 'generator' }],
    sideRels: [],
    stderrRel: null,
  };
}

/** Reads a load-test file the way the server will; null (with the reason) when it cannot. */
async function readLoad(
  path: string,
): Promise<{ rps: number | null; requests: number | null; errors: number | null; p99: number | null } | string> {
  try {
    const p = await ingest({ name: basename(path), path });
    if (p.kind !== 'loadtest') return `read as a ${p.kind}, not a load test`;
    if (p.runs.length !== 1) return `read as ${p.runs.length} runs, not one`;
    const s = p.runs[0]!.summary;
    return { rps: s.rps, requests: s.requests, errors: s.errors, p99: s.latencyMs.p99 };
  } catch (e) {
    return (e as Error).message;
  }
}

async function readCpu(path: string): Promise<{ cpuSeconds: number; durationSeconds: number } | null> {
  try {
    const p = await ingest({ name: basename(path), path });
    if (p.kind !== 'profile') return null;
    const idx = p.profile.sampleTypes.findIndex((t) => t.type === 'cpu');
    if (idx < 0) return null;
    const unit = p.profile.sampleTypes[idx]!.unit;
    let total = 0;
    for (const v of p.profile.values[idx]!) total += v;
    const scale = unit === 'nanoseconds' ? 1e-9 : unit === 'microseconds' ? 1e-6 : unit === 'milliseconds' ? 1e-3 : 1;
    return { cpuSeconds: total * scale, durationSeconds: p.profile.durationNanos / 1e9 };
  } catch {
    return null;
  }
}

async function sampleCount(path: string): Promise<number | null> {
  try {
    const p = await ingest({ name: basename(path), path });
    return p.kind === 'profile' ? p.profile.sampleStack.length : null;
  } catch {
    return null;
  }
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function summaryLine(run: CaptureRun, total: number): string {
  const head = `run ${run.run}/${total}:`;
  const s = run.summary;
  const parts: string[] = [];
  if (s?.rps != null) parts.push(`${fmt(s.rps, 1)} req/s`);
  if (s?.p99Ms != null) parts.push(`p99 ${fmt(s.p99Ms, 2)} ms`);
  if (s?.errors != null) parts.push(`${fmt(s.errors)} errors`);
  if (s?.cpuSeconds != null && s.profileSeconds)
    parts.push(
      `CPU ${fmt(s.cpuSeconds, 2)} s in ${fmt(s.profileSeconds, 1)} s (${fmt((100 * s.cpuSeconds) / s.profileSeconds)} %)`,
    );
  if (s?.cpuMicrosPerRequest != null) parts.push(`${fmt(s.cpuMicrosPerRequest, 1)} µs CPU/request`);
  parts.push(`${run.machine.cpuIdlePercent}% idle before${run.machine.busy ? ' (BUSY)' : ''}`);
  if (run.error) parts.push(`FAILED: ${run.error}`);
  else if (run.warnings.length) parts.push(`${run.warnings.length} warning${run.warnings.length > 1 ? 's' : ''}`);
  return `${head} ${parts.join(', ')}`;
}

function stagediffVersion(): string {
  // src/cli/capture.ts (a checkout) and dist/<chunk>.mjs (the compiled build) sit at different depths.
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'stagediff' && pkg.version) return pkg.version;
    } catch {
      // not there at this depth
    }
  }
  return 'unknown';
}

/**
 * Writes the module's source files the profiles name to DIR/sources.tar.gz; returns its path, or null
 * when there is no module (only an explicit --source makes that a warning) or nothing matched.
 */
function keepSources(o: Options, record: CaptureRecord, dir: string, progress: Progress): string | null {
  if (!o.source) return null;
  const root = findModuleRoot(o.source.dir);
  if (!root) return null;
  const profiles = record.runs.flatMap((r) =>
    r.files.filter((f) => f.role === 'profile').map((f) => join(dir, f.path)),
  );
  const collected = collectSources(root, profileFrames(profiles), SOURCE_LIMITS);
  for (const s of collected.skipped) progress.line(`note: source ${s}: not kept`);
  if (collected.files.size <= 1) {
    progress.line(`note: the profiles name no source file of the module in ${root}; no sources kept`);
    return null;
  }
  const path = join(dir, SOURCES_ARCHIVE);
  writeFileSync(path, sourcesArchive(collected));
  progress.line(
    `sources: ${collected.files.size} files of ${collected.modulePath || root}${collected.revision ? ` at ${collected.revision.slice(0, 12)}${collected.dirty ? ' (dirty)' : ''}` : ''} in ${SOURCES_ARCHIVE}`,
  );
  return path;
}

/**
 * `stagediff capture`: records one stage. Per run: start the load, wait for the warm-up, take the CPU
 * profile and the allocs/mutex/block deltas over one window, heap and goroutine at its end, wait for
 * the load to finish, then read back what was captured. Writes capture.json after every run, so a
 * failure keeps everything captured so far; uploads only when every run succeeded.
 */
export async function captureCommand(args: string[]): Promise<number> {
  const o = parseOptions(args);
  const progress = new Progress();
  const dir = resolve(
    o.out ?? mkdtempSync(join(tmpdir(), `stagediff-capture-${o.stage.replace(/[^A-Za-z0-9_-]/g, '_')}-`)),
  );
  mkdirSync(dir, { recursive: true });
  const tool = o.load.kind === 'command' ? o.load.tool : null;
  const load: CaptureLoad =
    o.load.kind === 'command'
      ? {
          kind: 'command',
          command: redactHeaders(shellJoin(o.load.argv)),
          tool,
          version: toolVersion(tool, o.load.argv),
        }
      : {
          kind: 'built-in',
          generator: autocannonVersion(),
          url: o.load.url,
          connections: o.load.connections,
          durationSeconds: o.load.duration,
          rate: o.load.rate,
          equivalentCommand: shellJoin([
            'autocannon',
            '-c',
            String(o.load.connections),
            '-d',
            String(o.load.duration),
            ...(o.load.rate !== null ? ['-R', String(o.load.rate)] : []),
            '--json',
            o.load.url,
          ]),
        };
  const record: CaptureRecord = {
    schema: 'stagediff-capture/1',
    stage: o.stage,
    note: o.note,
    command: shellJoin(['stagediff', 'capture', ...redactSecrets(args)]),
    pprof: o.pprof,
    profiles: [...o.profiles],
    traceSeconds: o.trace,
    metrics: o.metrics,
    load,
    build: o.build,
    host: {
      os: platform(),
      arch: arch(),
      cores: availableParallelism(),
      node: process.version,
      stagediff: stagediffVersion(),
      ...machineIdentity(),
    },
    startedAt: iso(),
    endedAt: null,
    runs: [],
    warnings: [],
    error: null,
  };
  const manifestPath = join(dir, 'capture.json');
  const save = () => writeFileSync(manifestPath, `${JSON.stringify(record, null, 2)}\n`);
  if (o.load.kind === 'command') {
    const hint = perRequestHint(tool, o.load.argv);
    if (hint) progress.line(`note: ${hint}`);
    if (!tool)
      progress.line(`note: "${o.load.argv[0]}" is not a load tool stagediff knows; its stdout is kept as load.txt`);
  }
  progress.line(
    `capturing stage "${o.stage}": ${o.runs} run${o.runs > 1 ? 's' : ''}, profile window ${o.seconds} s after ${o.warmup} s of warm-up; files in ${dir}`,
  );

  let interrupted = false;
  let current: RunningLoad | null = null;
  const onSignal = () => {
    interrupted = true;
    interrupt.abort();
    current?.stop();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    for (let k = 1; k <= o.runs && !record.error && !interrupted; k++) {
      if (k > 1 && o.pause > 0) await sleep(o.pause * 1000);
      const run = await captureRun(o, load, k, dir, progress, (r) => {
        current = r;
      });
      record.runs.push(run);
      if (run.machine.busy) record.warnings.push(`run ${k}: ${run.warnings.find((w) => w.startsWith('machine busy'))}`);
      if (interrupted) run.error = 'interrupted: the load was stopped and the profiles in progress abandoned';
      if (run.error) record.error = `run ${k}: ${run.error}`;
      save();
      progress.line(summaryLine(run, o.runs));
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    progress.stopCountdown();
  }
  record.endedAt = iso();
  save();

  const files = uploadedFiles(record);
  const sourceArchive = record.error ? null : keepSources(o, record, dir, progress);
  if (record.error) {
    const kept = record.runs.flatMap((r) => r.files.map((f) => f.path));
    process.stderr.write(
      `stagediff: capture of stage "${o.stage}" failed: ${record.error}\n` +
        `  kept in ${dir}: capture.json${kept.length ? `, ${kept.join(', ')}` : ' (no other file was captured)'}\n` +
        (o.server ? '  nothing was uploaded; fix the cause and capture again\n' : ''),
    );
    return 1;
  }
  if (o.server) {
    const r = await uploadToStage({
      server: o.server,
      ...(o.comparison ? { comparison: o.comparison } : {}),
      ...(o.token ? { token: o.token } : {}),
      ...(o.title ? { title: o.title } : {}),
      stage: o.stage,
      ...(o.note ? { note: o.note } : {}),
      files: files.map((f) => ({ path: join(dir, f.path), name: f.name })),
      ...(sourceArchive ? { source: sourceArchive } : {}),
    });
    await postCapture(o.server, r, record);
    const failed = r.results.filter((x) => !x.ok);
    for (const x of failed) process.stderr.write(`stagediff: upload: ${x.error?.message ?? x.filename}\n`);
    if (r.created)
      process.stderr.write(
        `edit token (keep it secret; pass it with --comparison ${r.id} --token ... to add stages): ${r.token}\n`,
      );
    process.stdout.write(`${r.url}\n`);
    if (!o.out) rmSync(dir, { recursive: true, force: true });
    return failed.length > 0 ? 1 : 0;
  }
  process.stdout.write(`${manifestPath}\n`);
  return 0;
}

/** GETs `url` as text within `timeoutMs` (or the interrupt); the error says why when it fails. */
async function getText(url: string, timeoutMs: number): Promise<{ body: string } | { error: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), interrupt.signal]) });
    const body = await res.text();
    if (res.status !== 200) return { error: `HTTP ${res.status}: ${body.trim().split('\n')[0]?.slice(0, 200) ?? ''}` };
    return { body };
  } catch (e) {
    return { error: interrupt.signal.aborted ? 'interrupted' : errorText(e) };
  }
}

/** Checks, before any load runs, that the metrics endpoint answers with metrics. */
async function checkMetricsEndpoint(url: string): Promise<string | null> {
  const r = await getText(url, 5000);
  if ('error' in r) return `metrics endpoint ${url} is unreachable: ${r.error}`;
  try {
    const s = parseScrape(r.body);
    if (s.series.length === 0) return `metrics endpoint ${url} answered with no metric`;
  } catch (e) {
    return `metrics endpoint ${url} answered with something that is neither Prometheus text nor expvar JSON: ${(e as Error).message}`;
  }
  return null;
}

/**
 * Scrapes the metrics endpoint at the window's start and every second after it, up to its end, into
 * `file` (a MetricsFile). Returns how many scrapes failed and the first failure.
 */
async function scrapeMetrics(
  url: string,
  w0: number,
  seconds: number,
  file: string,
): Promise<{ scrapes: number; failed: number; firstError: string | null; to: number }> {
  const rec = new MetricsRecorder(url, METRICS_INTERVAL_MS, w0);
  const offsets: number[] = [];
  for (let i = 0; i * METRICS_INTERVAL_MS <= seconds * 1000; i++) offsets.push(i * METRICS_INTERVAL_MS);
  if (offsets[offsets.length - 1]! < seconds * 1000) offsets.push(seconds * 1000);
  let failed = 0;
  let firstError: string | null = null;
  for (const off of offsets) {
    const wait = w0 + off - Date.now();
    if (wait > 0) await sleep(wait, undefined, { signal: interrupt.signal }).catch(() => undefined);
    if (interrupt.signal.aborted) break;
    const at = Date.now();
    const r = await getText(url, METRICS_INTERVAL_MS - 100);
    const before = rec.file().scrapes.length;
    rec.add(at - w0, Date.now() - at, 'body' in r ? r.body : null, 'error' in r ? r.error : null);
    const scrape = rec.file().scrapes[before]!;
    if (scrape.error !== null) {
      failed++;
      firstError ??= scrape.error;
    }
  }
  const f = rec.file();
  writeFileSync(file, `${JSON.stringify(f)}\n`);
  return { scrapes: f.scrapes.length, failed, firstError, to: Date.now() };
}

/** Takes `seconds` of execution trace, centred in the window that opened at `w0`, into `file`. */
async function takeTrace(
  pprof: string,
  seconds: number,
  windowSeconds: number,
  w0: number,
  file: string,
): Promise<{ url: string; from: number; to: number; error: string | null }> {
  const url = `${pprof}/debug/pprof/trace?seconds=${seconds}`;
  const wait = w0 + ((windowSeconds - seconds) / 2) * 1000 - Date.now();
  if (wait > 0) await sleep(wait, undefined, { signal: interrupt.signal }).catch(() => undefined);
  const from = Date.now();
  if (interrupt.signal.aborted) return { url, from, to: from, error: `${url}: interrupted` };
  try {
    const res = await fetch(url, {
      signal: AbortSignal.any([AbortSignal.timeout((seconds + 30) * 1000), interrupt.signal]),
    });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) {
      const text = body.toString('utf8').trim().split('\n')[0]?.slice(0, 200) ?? '';
      return { url, from, to: Date.now(), error: `${url}: HTTP ${res.status}${text ? `: ${text}` : ''}` };
    }
    if (!body.subarray(0, 5).equals(Buffer.from('go 1.')))
      return {
        url,
        from,
        to: Date.now(),
        error: `${url}: the answer is not a Go execution trace (${body.length} bytes)`,
      };
    writeFileSync(file, body);
    return { url, from, to: Date.now(), error: null };
  } catch (e) {
    return { url, from, to: Date.now(), error: `${url}: ${interrupt.signal.aborted ? 'interrupted' : errorText(e)}` };
  }
}

async function captureRun(
  o: Options,
  load: CaptureLoad,
  k: number,
  dir: string,
  progress: Progress,
  setCurrent: (r: RunningLoad | null) => void,
): Promise<CaptureRun> {
  const tag = `run ${k}/${o.runs}`;
  const prefix = o.runs > 1 ? `run-${k}/` : '';
  if (prefix) mkdirSync(join(dir, prefix), { recursive: true });
  progress.line(`${tag}: checking the machine is quiet (1 s)`);
  let m = await sampleMachine();
  const waitUntil = Date.now() + o.waitQuiet * 1000;
  const waitFrom = Date.now();
  if (m.busy && o.waitQuiet > 0) {
    progress.line(
      `${tag}: machine busy (${m.cpuIdlePercent}% idle); waiting up to ${o.waitQuiet} s for it to calm down`,
    );
    progress.countdown(`${tag}: waiting for a quiet machine`, waitUntil);
    while (m.busy && Date.now() < waitUntil && !interrupt.signal.aborted) m = await sampleMachine();
    progress.stopCountdown();
  }
  const waited = Math.round((Date.now() - waitFrom) / 100) / 10;
  const run: CaptureRun = {
    run: k,
    startedAt: iso(),
    endedAt: null,
    window: null,
    machine: {
      loadAverage: m.loadAverage,
      cpuIdlePercent: m.cpuIdlePercent,
      busy: m.busy,
      ...(o.waitQuiet > 0 ? { waitedForQuietSeconds: waited } : {}),
    },
    load: { startedAt: iso(), endedAt: null, exitCode: null, signal: null },
    files: [],
    summary: null,
    warnings: [],
    error: null,
  };
  if (m.reason) {
    run.warnings.push(m.reason);
    progress.line(`${tag}: WARNING: ${m.reason}`);
  }
  if (interrupt.signal.aborted) {
    run.endedAt = iso();
    return run;
  }
  // An unreachable or disabled pprof endpoint is found before any load runs.
  if (o.pprof && o.profiles.length > 0) {
    const index = `${o.pprof}/debug/pprof/`;
    try {
      const res = await fetch(index, { signal: AbortSignal.timeout(5000) });
      await res.arrayBuffer();
      if (res.status === 404) throw new Error(`HTTP 404: net/http/pprof is not served there`);
    } catch (e) {
      run.error = `pprof endpoint ${index} is unreachable: ${e instanceof Error && e.message.startsWith('HTTP') ? e.message : errorText(e)}; the load was not started`;
      run.endedAt = iso();
      return run;
    }
  }

  if (o.metrics) {
    const problem = await checkMetricsEndpoint(o.metrics);
    if (problem) {
      run.error = `${problem}; the load was not started`;
      run.endedAt = iso();
      return run;
    }
  }

  const t0 = Date.now();
  run.load.startedAt = iso(t0);
  const loadLabel =
    o.load.kind === 'command'
      ? shellJoin(o.load.argv)
      : `built-in generator (${o.load.connections} connections${o.load.rate ? `, ${o.load.rate} req/s` : ''}, ${o.load.duration} s) → ${o.load.url}`;
  progress.line(`${tag}: load started: ${loadLabel}`);
  const running =
    o.load.kind === 'command'
      ? startCommand(o as Options & { load: { kind: 'command' } }, dir, prefix)
      : startGenerator(o as Options & { load: { kind: 'built-in' } }, dir, prefix);
  setCurrent(running);
  let loadEnd: number | null = null;
  const loadDone = running.done.then((r) => {
    loadEnd = Date.now();
    return r;
  });

  // Warm-up; the load must still be running when the window opens.
  progress.countdown(`${tag}: warm-up`, t0 + o.warmup * 1000);
  await Promise.race([sleep(o.warmup * 1000), loadDone]);
  progress.stopCountdown();
  const profileErrors: string[] = [];
  const wantWindow = (o.pprof !== null && o.profiles.length > 0) || o.trace !== null || o.metrics !== null;
  if (loadEnd === null && wantWindow) {
    const inWindow = o.profiles.filter((p) => p === 'cpu' || DELTA_TYPES.includes(p));
    const w0 = Date.now();
    const taken = [
      ...inWindow,
      ...(o.trace !== null ? [`a ${o.trace} s execution trace`] : []),
      ...(o.metrics !== null ? ['runtime metrics every second'] : []),
    ];
    progress.line(`${tag}: profile window open: ${taken.join(', ') || 'no interval profile'} over ${o.seconds} s`);
    progress.countdown(`${tag}: profiling`, w0 + o.seconds * 1000);
    const timeout = (o.seconds + 30) * 1000;
    const traceRel = `${prefix}trace.out`;
    const metricsRel = `${prefix}metrics.json`;
    const [fetched, traced, scraped] = await Promise.all([
      Promise.all(
        inWindow.map(async (type) => {
          const url = profileUrl(o.pprof!, type, o.seconds);
          const rel = `${prefix}${type}.pb.gz`;
          const from = Date.now();
          try {
            await fetchProfile(url, join(dir, rel), timeout);
            const to = Date.now();
            // A server that ignores ?seconds= answers at once with the cumulative profile.
            const span: CaptureFile['span'] =
              type === 'cpu' ? 'interval' : to - from < o.seconds * 500 ? 'cumulative' : 'delta';
            return { type, rel, url, from, to, span, error: null as string | null, status: 200 as number | null };
          } catch (e) {
            const fe = e as FetchError;
            return { type, rel, url, from, to: Date.now(), span: null, error: fe.message, status: fe.status ?? null };
          }
        }),
      ),
      o.trace !== null ? takeTrace(o.pprof!, o.trace, o.seconds, w0, join(dir, traceRel)) : null,
      o.metrics !== null ? scrapeMetrics(o.metrics, w0, o.seconds, join(dir, metricsRel)) : null,
    ]);
    progress.stopCountdown();
    const w1 = maxOf([w0, traced?.to ?? w0, scraped?.to ?? w0, ...fetched.map((f) => f.to)]);
    run.window = { start: iso(w0), end: iso(w1), seconds: o.seconds };
    if (traced) {
      if (traced.error) profileErrors.push(`trace: ${traced.error}`);
      else
        run.files.push(
          fileEntry(dir, traceRel, 'trace', {
            span: 'interval',
            url: traced.url,
            fetchedFrom: iso(traced.from),
            fetchedTo: iso(traced.to),
          }),
        );
    }
    if (scraped) {
      run.files.push(
        fileEntry(dir, metricsRel, 'metrics', { url: o.metrics!, fetchedFrom: iso(w0), fetchedTo: iso(scraped.to) }),
      );
      if (scraped.failed === scraped.scrapes)
        profileErrors.push(`metrics: every scrape failed (${scraped.firstError})`);
      else if (scraped.failed > 0)
        run.warnings.push(
          `metrics: ${scraped.failed} of ${scraped.scrapes} scrapes failed (first: ${scraped.firstError})`,
        );
    }
    for (const f of fetched) {
      if (f.error && f.type !== 'cpu' && f.status !== null && f.status >= 400 && f.status < 500 && f.status !== 404) {
        // The endpoint refuses ?seconds= for this profile: take the cumulative one and say so.
        const url = profileUrl(o.pprof!, f.type, null);
        try {
          await fetchProfile(url, join(dir, f.rel), 30_000);
          run.warnings.push(
            `${f.type}: the endpoint refused a ${o.seconds} s delta (${f.error}); kept the profile cumulative since the process started`,
          );
          run.files.push(
            fileEntry(dir, f.rel, 'profile', {
              profileType: f.type,
              span: 'cumulative',
              url,
              fetchedFrom: iso(f.to),
              fetchedTo: iso(),
            }),
          );
          continue;
        } catch (e) {
          f.error = `${f.error}; cumulative fallback: ${(e as Error).message}`;
        }
      }
      if (f.error) {
        profileErrors.push(`${f.type} profile: ${f.error}`);
        continue;
      }
      if (f.span === 'cumulative')
        run.warnings.push(
          `${f.type}: the endpoint ignored ?seconds= (answered at once): the profile is cumulative since the process started`,
        );
      run.files.push(
        fileEntry(dir, f.rel, 'profile', {
          profileType: f.type,
          span: f.span!,
          url: f.url,
          fetchedFrom: iso(f.from),
          fetchedTo: iso(f.to),
        }),
      );
    }
    for (const type of o.profiles.filter((p) => SNAPSHOT_TYPES.includes(p))) {
      const url = profileUrl(o.pprof!, type, null);
      const rel = `${prefix}${type}.pb.gz`;
      const from = Date.now();
      try {
        await fetchProfile(url, join(dir, rel), 30_000);
        run.files.push(
          fileEntry(dir, rel, 'profile', {
            profileType: type,
            span: 'snapshot',
            url,
            fetchedFrom: iso(from),
            fetchedTo: iso(),
          }),
        );
      } catch (e) {
        profileErrors.push(`${type} profile: ${(e as Error).message}`);
      }
    }
    for (const f of run.files)
      if ((f.profileType === 'mutex' || f.profileType === 'block') && (await sampleCount(join(dir, f.path))) === 0)
        run.warnings.push(
          `${f.profileType} profile has no samples: the service may not enable it (runtime.${f.profileType === 'mutex' ? 'SetMutexProfileFraction' : 'SetBlockProfileRate'})`,
        );
    if (loadEnd !== null && loadEnd < w1)
      run.warnings.push(
        `the load ended ${((w1 - loadEnd) / 1000).toFixed(1)} s before the profile window closed: the profiles include time without load (use a longer load or a shorter --seconds)`,
      );
    progress.line(`${tag}: profiles taken; waiting for the load to finish`);
  }
  const loadUntil = o.load.kind === 'built-in' ? t0 + o.load.duration * 1000 : null;
  if (loadUntil && loadEnd === null) progress.countdown(`${tag}: load finishing`, loadUntil);
  const result = await loadDone;
  progress.stopCountdown();
  setCurrent(null);
  run.load.endedAt = iso(loadEnd ?? Date.now());
  run.load.exitCode = result.exitCode;
  run.load.signal = result.signal;

  // The load's files, then what it printed, read back as the server will read it.
  let loadFigures: Awaited<ReturnType<typeof readLoad>> | null = null;
  for (const out of running.outputs) {
    const p = join(dir, out.rel);
    if (!existsSync(p)) continue;
    if (statSync(p).size === 0) {
      rmSync(p);
      continue;
    }
    if (o.load.kind === 'command' && isVegetaAttack(o.load.argv) && result.exitCode === 0) {
      run.files.push(fileEntry(dir, out.rel, 'raw', { command: load.kind === 'command' ? load.command : '' }));
      const jsonl = `${prefix}vegeta.jsonl`;
      const exe = o.load.argv[0] && basename(o.load.argv[0]) === 'vegeta' ? o.load.argv[0] : 'vegeta';
      const enc = spawnSync(exe, ['encode', '-to=json', p], { maxBuffer: 1 << 30 });
      if (enc.status === 0) {
        writeFileSync(join(dir, jsonl), enc.stdout);
        loadFigures = await readLoad(join(dir, jsonl));
        run.files.push(
          fileEntry(dir, jsonl, typeof loadFigures === 'string' ? 'raw' : 'loadtest', {
            command: `vegeta encode -to=json ${basename(out.rel)} > vegeta.jsonl`,
          }),
        );
      } else run.warnings.push(`vegeta encode failed: ${String(enc.stderr).trim().slice(0, 200)}`);
      continue;
    }
    const figures = await readLoad(p);
    const command = load.kind === 'command' ? load.command : load.equivalentCommand;
    run.files.push(fileEntry(dir, out.rel, typeof figures === 'string' ? 'raw' : 'loadtest', { command }));
    if (typeof figures === 'string') {
      if (result.exitCode === 0)
        run.warnings.push(`${out.rel}: stagediff cannot read it (${figures}); kept, not uploaded`);
    } else loadFigures ??= figures;
  }
  if (o.load.kind === 'command')
    for (const extra of extraOutputFiles(o.load.tool, o.load.argv)) {
      if (!existsSync(extra)) {
        run.warnings.push(`${extra}: the load command should have written it, but it is not there`);
        continue;
      }
      const rel = `${prefix}${basename(extra)}`;
      copyFileSync(extra, join(dir, rel));
      const figures = await readLoad(join(dir, rel));
      run.files.push(fileEntry(dir, rel, typeof figures === 'string' ? 'raw' : 'loadtest'));
    }
  for (const rel of running.sideRels) {
    const p = join(dir, rel);
    if (existsSync(p) && statSync(p).size > 0) run.files.push(fileEntry(dir, rel, 'raw'));
    else if (existsSync(p)) rmSync(p);
  }

  // Failures of the load come first: its exit status is what the user must fix.
  if (result.error) run.error = result.error;
  else if (result.exitCode !== 0 || result.signal) {
    const tail =
      running.stderrRel && existsSync(join(dir, running.stderrRel))
        ? readFileSync(join(dir, running.stderrRel), 'utf8').trim().split('\n').slice(-3).join(' | ').slice(0, 300)
        : '';
    const name = o.load.kind === 'command' ? (o.load.tool ?? o.load.argv[0]) : 'generator';
    const when = run.window ? '' : ' before the profile window opened';
    run.error = `${name} ${result.signal ? `was killed by ${result.signal}` : `exited with status ${result.exitCode}`}${when}${tail ? `: ${tail}` : ''}`;
    if (profileErrors.length > 0) run.error += `; ${profileErrors.join('; ')}`;
  } else if (!run.window && o.profiles.length > 0)
    run.error = `the load finished within the ${o.warmup} s warm-up: no profile window (the load must run longer than --warmup + --seconds)`;
  else if (profileErrors.length > 0) run.error = profileErrors.join('; ');
  else if (loadFigures === null || typeof loadFigures === 'string')
    run.error = `the load's output cannot be read as a load test${typeof loadFigures === 'string' ? ` (${loadFigures})` : ''}`;
  if (!run.error && profileErrors.length > 0) run.error = profileErrors.join('; ');

  const cpuFile = run.files.find((f) => f.profileType === 'cpu');
  const cpu = cpuFile ? await readCpu(join(dir, cpuFile.path)) : null;
  const lf = loadFigures && typeof loadFigures !== 'string' ? loadFigures : null;
  const summary: CaptureSummary = {
    rps: lf?.rps ?? null,
    requests: lf?.requests ?? null,
    errors: lf?.errors ?? null,
    p99Ms: lf?.p99 ?? null,
    cpuSeconds: cpu?.cpuSeconds ?? null,
    profileSeconds: cpu?.durationSeconds ?? null,
    cpuMicrosPerRequest:
      cpu && lf?.rps && cpu.durationSeconds > 0 ? (cpu.cpuSeconds * 1e6) / (lf.rps * cpu.durationSeconds) : null,
  };
  run.summary = summary;
  if (lf?.errors) run.warnings.push(`the load saw ${lf.errors} errors`);
  run.endedAt = iso();
  return run;
}
