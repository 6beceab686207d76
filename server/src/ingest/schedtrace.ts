import { IngestError } from './errors.ts';
import * as gctrace from './gctrace.ts';
import type {
  SchedGoroutines,
  SchedProc,
  SchedSample,
  SchedStat,
  SchedTrace,
  SchedTraceSummary,
} from '../model/schedtrace.ts';
import { headUtf8 } from './head-text.ts';
import { maxOf } from '../analysis/extent.ts';

/**
 * Importer for Go scheduler traces: the lines the runtime writes to stderr under
 * `GODEBUG=schedtrace=N[,scheddetail=1]`,
 *
 *   SCHED 2007ms: gomaxprocs=2 idleprocs=0 threads=10 spinningthreads=0 needspinning=1 idlethreads=2
 *     runqueue=1 [ 2 16 ] schedticks=[ 8558 6652 ]
 *
 * (one line; Go 1.22–1.25 print `[2 16]` and no schedticks; `needspinning` appeared in Go 1.21). With
 * scheddetail=1 the line ends in `gcwaiting=… nmidlelocked=… stopwait=… sysmonwait=…` and is followed
 * by indented `P`, `M` and `G` lines. Everything else in the log (the program's output) is ignored,
 * except `gc N @…` lines (GODEBUG=gctrace=1 in the same log), which are read as a GC trace beside it.
 * A line may carry a prefix (a log collector's timestamp) before `SCHED`.
 */

export const SCHEDTRACE_LIMITS = {
  maxBytes: 256 * 1024 * 1024,
  maxSamples: 1_000_000,
};

const SCHED_START = /(?:^|\s)SCHED \d+ms:/;
const SCHED_LINE = new RegExp(
  String.raw`SCHED (\d+)ms: gomaxprocs=(\d+) idleprocs=(\d+) threads=(\d+) spinningthreads=(\d+)` +
    String.raw`(?: needspinning=(\d+))? idlethreads=(\d+) runqueue=(\d+)` +
    String.raw`(?: gcwaiting=(true|false|0|1) nmidlelocked=(\d+) stopwait=(\d+) sysmonwait=(true|false|0|1)` +
    String.raw`| \[ ?([\d ]*?) ?\](?: schedticks=\[ ([\d ]*)\])?)\s*$`,
);
const P_LINE =
  /^\s+P(\d+): status=(\d+) schedtick=(\d+) syscalltick=(\d+) m=(nil|-?\d+) runqsize=(\d+) gfreecnt=(\d+)(?: timerslen=(\d+))?\s*$/;
const M_LINE = /^\s+M(\d+): p=(nil|-?\d+) curg=(nil|\d+) .*\bspinning=(true|false|0|1) blocked=(true|false|0|1)\b/;
const G_LINE = /^\s+G(\d+): status=(\d+)\((.*)\) m=(nil|-?\d+) lockedm=(nil|-?\d+)\s*$/;

const G_STATUS = [
  'idle',
  'runnable',
  'running',
  'syscall',
  'waiting',
  'moribund',
  'dead',
  'enqueue',
  'copystack',
  'preempted',
  'leaked',
  'deadextra',
];

/** Confidence that `head` is a scheduler trace (a log with SCHED lines). Works without the file name. */
export function detect(head: Buffer, _fileName?: string): number {
  const text = headUtf8(head, 256 * 1024);
  let full = 0;
  let started = 0;
  for (const l of text.split('\n').slice(0, 4000)) {
    const m = SCHED_START.exec(l);
    if (!m) continue;
    started++;
    if (SCHED_LINE.test(l.slice(m.index).trimStart().replace(/\r$/, ''))) full++;
  }
  // above gctrace's 0.95: a log with both is one scheduler trace that carries its GC trace
  if (full > 0) return 0.97;
  if (started > 0) return 0.6;
  return 0;
}

const truthy = (s: string) => s === 'true' || s === '1';
const nums = (s: string | undefined) =>
  s === undefined ? [] : s.trim() === '' ? [] : s.trim().split(/\s+/).map(Number);

/** Parses a scheduler trace. Throws IngestError: `empty`, `no-run` (no SCHED lines), `malformed`, `too-large`. */
export function parse(bytes: Buffer, _fileName?: string): SchedTrace {
  if (bytes.length > SCHEDTRACE_LIMITS.maxBytes)
    throw new IngestError('too-large', `scheduler trace is larger than ${SCHEDTRACE_LIMITS.maxBytes} bytes`);
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  if (text.includes('\u0000')) throw new IngestError('malformed', 'binary data, not a GODEBUG=schedtrace log');
  const lines = text.split('\n');
  const samples: SchedSample[] = [];
  let cur: SchedSample | null = null;
  let gs: SchedGoroutines | null = null;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    const start = SCHED_START.exec(raw);
    if (start) {
      const m = SCHED_LINE.exec(raw.slice(start.index).trimStart());
      if (!m)
        throw new IngestError('malformed', 'a "SCHED …ms:" line does not follow the GODEBUG=schedtrace format', i + 1);
      if (samples.length >= SCHEDTRACE_LIMITS.maxSamples)
        throw new IngestError('too-large', `more than ${SCHEDTRACE_LIMITS.maxSamples} SCHED lines`, i + 1);
      const detailed = m[9] !== undefined;
      gs = detailed ? { total: 0, byStatus: {}, byWaitReason: {} } : null;
      cur = {
        atMs: Number(m[1]),
        gomaxprocs: Number(m[2]),
        idleProcs: Number(m[3]),
        threads: Number(m[4]),
        spinningThreads: Number(m[5]),
        needSpinning: m[6] === undefined ? null : Number(m[6]),
        idleThreads: Number(m[7]),
        globalRunqueue: Number(m[8]),
        localRunqueues: detailed ? [] : nums(m[13]),
        schedticks: detailed ? [] : m[14] === undefined ? null : nums(m[14]),
        detail: detailed
          ? {
              gcWaiting: truthy(m[9]!),
              idleLockedThreads: Number(m[10]),
              stopWait: Number(m[11]),
              sysmonWait: truthy(m[12]!),
              procs: [],
              threads: { total: 0, withP: 0, spinning: 0, blocked: 0 },
              goroutines: gs!,
            }
          : null,
      };
      samples.push(cur);
      continue;
    }
    // the detail lines belong to the SCHED line above them
    if (!cur?.detail || !/^\s+[PMG]\d+: /.test(raw)) continue;
    const d = cur.detail;
    let m = P_LINE.exec(raw);
    if (m) {
      const p: SchedProc = {
        id: Number(m[1]),
        status: Number(m[2]),
        schedtick: Number(m[3]),
        syscalltick: Number(m[4]),
        m: m[5] === 'nil' ? null : Number(m[5]),
        runqsize: Number(m[6]),
        gfreecnt: Number(m[7]),
        timerslen: m[8] === undefined ? null : Number(m[8]),
      };
      d.procs.push(p);
      cur.localRunqueues.push(p.runqsize);
      cur.schedticks!.push(p.schedtick);
      continue;
    }
    m = M_LINE.exec(raw);
    if (m) {
      d.threads.total++;
      if (m[2] !== 'nil') d.threads.withP++;
      if (truthy(m[4]!)) d.threads.spinning++;
      if (truthy(m[5]!)) d.threads.blocked++;
      continue;
    }
    m = G_LINE.exec(raw);
    if (m && gs) {
      const status = Number(m[2]) & ~0x1000; // without the GC's scan bit
      const name = G_STATUS[status] ?? `status ${status}`;
      gs.total++;
      gs.byStatus[name] = (gs.byStatus[name] ?? 0) + 1;
      if (name === 'waiting' && m[3] !== '') gs.byWaitReason[m[3]!] = (gs.byWaitReason[m[3]!] ?? 0) + 1;
      continue;
    }
    throw new IngestError('malformed', 'a scheddetail line (P, M or G) does not follow the runtime’s format', i + 1);
  }
  if (samples.length === 0)
    throw new IngestError('no-run', 'no "SCHED …ms:" lines: not a GODEBUG=schedtrace log (the trace goes to stderr)');
  let gc = null;
  try {
    gc = gctrace.parse(bytes);
  } catch (e) {
    if (!(e instanceof IngestError) || e.code !== 'no-run') throw e;
  }
  return { kind: 'schedtrace', samples, summary: summarize(samples), gc };
}

function stat(xs: readonly number[]): SchedStat {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  let sum = 0;
  for (const x of xs) {
    if (x < min) min = x;
    if (x > max) max = x;
    sum += x;
  }
  return xs.length === 0 ? { min: 0, mean: 0, max: 0 } : { min, mean: sum / xs.length, max };
}

function nearestRank(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const r = Math.max(1, Math.ceil((p * sorted.length) / 100));
  return sorted[Math.min(r, sorted.length) - 1]!;
}

function summarize(s: readonly SchedSample[]): SchedTraceSummary {
  const gaps = s
    .slice(1)
    .map((x, i) => x.atMs - s[i]!.atMs)
    .sort((a, b) => a - b);
  const local = s.map((x) => x.localRunqueues.reduce((a, b) => a + b, 0));
  const total = s.map((x, i) => x.globalRunqueue + local[i]!);
  const sortedTotal = [...total].sort((a, b) => a - b);
  const detailed = s.some((x) => x.detail !== null);
  const gcount = s.filter((x) => x.detail).map((x) => x.detail!.goroutines.total);
  return {
    samples: s.length,
    spanMs: s[s.length - 1]!.atMs - s[0]!.atMs,
    intervalMs: gaps.length === 0 ? 0 : gaps[(gaps.length - 1) >> 1]!,
    gomaxprocs: s[s.length - 1]!.gomaxprocs,
    detailed,
    threads: stat(s.map((x) => x.threads)),
    idleProcs: stat(s.map((x) => x.idleProcs)),
    idleThreads: stat(s.map((x) => x.idleThreads)),
    spinningThreads: stat(s.map((x) => x.spinningThreads)),
    runqueue: {
      global: stat(s.map((x) => x.globalRunqueue)),
      local: stat(local),
      total: { ...stat(total), p50: nearestRank(sortedTotal, 50), p99: nearestRank(sortedTotal, 99) },
    },
    goroutines: gcount.length > 0 ? { max: maxOf(gcount), last: gcount[gcount.length - 1]! } : null,
  };
}
