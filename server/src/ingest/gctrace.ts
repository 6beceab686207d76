import { IngestError } from './errors.ts';
import type { GcCycle, GcTrace, GcTraceSummary } from '../model/gctrace.ts';
import { headUtf8 } from './head-text.ts';

/**
 * Importer for Go GC traces: the lines the runtime writes to stderr under `GODEBUG=gctrace=1`,
 *
 *   gc 3 @0.059s 23%: 8.5+64+0.12 ms clock, 17+0.40/66/0.55+0.25 ms cpu, 7->8->4 MB, 9 MB goal,
 *     0 MB stacks, 2 MB globals, 2 P (forced)
 *
 * (one line). Everything else in the log (the program's own output, `GC forced`, scavenger lines) is
 * ignored. `MB stacks` / `MB globals` appeared in Go 1.19 and are optional; Go 1.26 may add
 * `(checking for goroutine leaks)` after the CPU percentage. A line may carry a prefix (a log
 * collector's timestamp) separated from `gc` by whitespace.
 */

export const GCTRACE_LIMITS = {
  maxBytes: 256 * 1024 * 1024,
  maxCycles: 1_000_000,
};

const NUM = String.raw`(\d+(?:\.\d+)?)`;
const INT = String.raw`(\d+)`;
// Where a line starts to be a gc line: enough to say "this was meant as one" and report it if malformed.
const GC_START = /(?:^|\s)gc \d+ @\d/;
const GC_LINE = new RegExp(
  String.raw`gc ${INT} @${NUM}s ${INT}%( \(checking for goroutine leaks\))?: ` +
    String.raw`${NUM}\+${NUM}\+${NUM} ms clock, ` +
    String.raw`${NUM}\+${NUM}/${NUM}/${NUM}\+${NUM} ms cpu, ` +
    `${INT}->${INT}->${INT} MB, ${INT} MB goal, ` +
    String.raw`(?:${INT} MB stacks, )?(?:${INT} MB globals, )?${INT} P( \(forced\))?\s*$`,
);

/** Confidence that `head` (the first bytes of a file) is a GC trace. Works without the file name. */
export function detect(head: Buffer, _fileName?: string): number {
  const text = headUtf8(head, 256 * 1024);
  const lines = text.split('\n').slice(0, 2000);
  let full = 0;
  let started = 0;
  for (const l of lines) {
    const m = GC_START.exec(l);
    if (!m) continue;
    started++;
    if (GC_LINE.test(l.slice(m.index).replace(/\r$/, ''))) full++;
  }
  if (full > 0) return 0.95;
  if (started > 0) return 0.6;
  return 0;
}

/** Parses a GC trace. Throws IngestError: `empty`, `no-run` (no gc lines), `malformed`, `too-large`. */
export function parse(bytes: Buffer, _fileName?: string): GcTrace {
  if (bytes.length > GCTRACE_LIMITS.maxBytes) {
    throw new IngestError('too-large', `GC trace is larger than ${GCTRACE_LIMITS.maxBytes} bytes`);
  }
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  if (text.includes('\u0000')) throw new IngestError('malformed', 'binary data, not a GODEBUG=gctrace=1 log');
  const lines = text.split('\n');
  const cycles: GcCycle[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    const start = GC_START.exec(raw);
    if (!start) continue;
    const lineNo = i + 1;
    const from = start.index + (raw[start.index] === 'g' ? 0 : 1);
    const m = GC_LINE.exec(raw.slice(from));
    if (!m) {
      throw new IngestError('malformed', 'a "gc N @…" line does not follow the GODEBUG=gctrace=1 format', lineNo);
    }
    if (cycles.length >= GCTRACE_LIMITS.maxCycles) {
      throw new IngestError('too-large', `more than ${GCTRACE_LIMITS.maxCycles} GC cycles`, lineNo);
    }
    const f = (k: number) => Number(m[k]);
    const sweepTermination = f(5);
    const markTermination = f(7);
    cycles.push({
      gc: f(1),
      atSeconds: f(2),
      cpuPercent: f(3),
      clockMs: { sweepTermination, markScan: f(6), markTermination },
      cpuMs: {
        sweepTermination: f(8),
        markAssist: f(9),
        markBackground: f(10),
        markIdle: f(11),
        markTermination: f(12),
      },
      heapMb: { start: f(13), end: f(14), live: f(15) },
      goalMb: f(16),
      stacksMb: m[17] === undefined ? null : f(17),
      globalsMb: m[18] === undefined ? null : f(18),
      procs: f(19),
      forced: m[20] !== undefined,
      stwPauseMs: addPrinted(sweepTermination, markTermination),
    });
  }
  if (cycles.length === 0) {
    throw new IngestError('no-run', 'no "gc N @…" lines: not a GODEBUG=gctrace=1 log (the trace goes to stderr)');
  }
  return { kind: 'gctrace', cycles, summary: summarize(cycles) };
}

/**
 * Printed figures have at most a few decimals; add them in integer nanoseconds-of-a-millisecond so a
 * sum reads as printed (0.28 + 0.005 = 0.285, not 0.28500000000000003).
 */
const SCALE = 1e6;
function addPrinted(...xs: number[]): number {
  return sumPrinted(xs);
}
function sumPrinted(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += Math.round(x * SCALE);
  return s / SCALE;
}

function nearestRank(sorted: readonly number[], percent: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.max(1, Math.ceil((percent * sorted.length) / 100));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

function summarize(cycles: readonly GcCycle[]): GcTraceSummary {
  const pauses = cycles.map((c) => c.stwPauseMs).sort((a, b) => a - b);
  return {
    cycles: cycles.length,
    forcedCycles: cycles.filter((c) => c.forced).length,
    stwPauseMs: {
      total: sumPrinted(pauses),
      p50: nearestRank(pauses, 50),
      p99: nearestRank(pauses, 99),
      max: pauses[pauses.length - 1] ?? 0,
    },
    lastCpuPercent: cycles[cycles.length - 1]?.cpuPercent ?? 0,
    maxHeapMb: cycles.reduce((m, c) => Math.max(m, c.heapMb.start), 0),
    maxGoalMb: cycles.reduce((m, c) => Math.max(m, c.goalMb), 0),
  };
}
