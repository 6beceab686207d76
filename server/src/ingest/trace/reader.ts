import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';
import { ByteFeed, TruncatedError } from './bytes.ts';
import {
  EV_CPU_SAMPLE,
  EV_SYNC,
  EVENT_NAMES,
  GO126,
  HEADER_BYTES,
  NONE,
  STACK_ARGS,
  STRING_ARGS,
  SUPPORTED_VERSIONS,
  TIMED_ARGS,
  V1_VERSIONS,
  headerVersion,
} from './format.ts';
import { type Batch, type Generation, type RawBatch, readGeneration } from './generation.ts';
import { goSortFunc } from './go-sort.ts';
import { type BaseEvent, type OrderedEvent, Ordering } from './order.ts';

/** Bounds on what reading one trace may cost. Every one has a safe default (`defaultTraceLimits`). */
export interface TraceLimits {
  /** Bytes of trace data (after any gzip) read at most. */
  maxBytes: number;
  /** Events delivered at most. */
  maxEvents: number;
  /** Bytes of batches in one generation (a generation is held whole while it is ordered). */
  maxGenerationBytes: number;
  /** Stack table entries and strings per generation. */
  maxStacks: number;
  maxStrings: number;
  /** Goroutines, procs, threads and tasks tracked at once. */
  maxStates: number;
  /**
   * Goroutine states the request analysis keeps (every state change of every goroutine, 16 bytes each):
   * past it a trace's requests are not analysed (a typed "too large" answer), its other figures are.
   */
  maxRequestStates: number;
  /** Requests analysed per trace; the rest are counted as omitted. */
  maxRequests: number;
}

/** The built-in bounds; TRACE_MAX_BYTES, TRACE_MAX_EVENTS, TRACE_MAX_GENERATION_BYTES and TRACE_MAX_REQUEST_STATES override four. */
export const builtinTraceLimits: TraceLimits = {
  maxBytes: 512 * 1024 * 1024,
  maxEvents: 50_000_000,
  maxGenerationBytes: 128 * 1024 * 1024,
  maxStacks: 1_000_000,
  maxStrings: 1_000_000,
  maxStates: 2_000_000,
  maxRequestStates: 1_000_000,
  maxRequests: 1_000_000,
};

/** Thrown for a TRACE_* setting out of range. */
export class TraceLimitError extends Error {}

function setting(env: NodeJS.ProcessEnv, name: string, def: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new TraceLimitError(`${name} must be an integer in [${min}, ${max}], got "${raw}"`);
  return n;
}

/** The trace limits an environment sets (the server validates them at start-up with this). */
export function traceLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): TraceLimits {
  return {
    ...builtinTraceLimits,
    maxBytes: setting(env, 'TRACE_MAX_BYTES', builtinTraceLimits.maxBytes, 1024, 2 ** 40),
    maxEvents: setting(env, 'TRACE_MAX_EVENTS', builtinTraceLimits.maxEvents, 1000, 2 ** 40),
    maxGenerationBytes: setting(
      env,
      'TRACE_MAX_GENERATION_BYTES',
      builtinTraceLimits.maxGenerationBytes,
      65536,
      2 ** 40,
    ),
    maxRequestStates: setting(env, 'TRACE_MAX_REQUEST_STATES', builtinTraceLimits.maxRequestStates, 0, 2 ** 31),
  };
}

let fromEnv: TraceLimits | null = null;
/** The limits of this process: the built-in ones with the environment's overrides. */
export function defaultTraceLimits(): TraceLimits {
  fromEnv ??= traceLimitsFromEnv(process.env);
  return fromEnv;
}

/** What reading a trace found besides its events. */
export interface TraceReadInfo {
  /** Wire version: 22, 23, 25 or 26 (`go 1.NN trace`). */
  version: number;
  generations: number;
  events: number;
  bytes: number;
  /** Time of the first and the last event (ns, the trace clock). */
  startTime: number;
  endTime: number;
  /** The wall clock (Unix seconds and nanoseconds) at trace time `time`, from the first clock snapshot (Go 1.25+). */
  clock: { time: number; sec: number; nsec: number } | null;
  /**
   * Set when the trace stopped being readable after some complete generations (cut short, or a
   * damaged tail): the events are those of the complete generations, as `go tool trace` uses them.
   */
  incomplete: { reason: string; validBytes: number } | null;
}

/** Receives every event in trace order. The event object is only valid during the call. */
export type TraceSink = (e: OrderedEvent) => void;

/** Reads and checks the 16-byte header; returns the wire version or throws a clear refusal. */
export function checkHeader(head: Uint8Array): number {
  const v = headerVersion(head);
  if (v === null) throw new IngestError('not-a-profile', 'not a Go execution trace (no "go 1.NN trace" header)');
  if (V1_VERSIONS.includes(v) || (v < 22 && v > 0)) {
    throw new IngestError(
      'unsupported',
      `a Go execution trace in the format of Go 1.${v} (Go 1.5–1.21 wrote this older format), which stagediff does not read: record the trace with Go 1.22 or later (\`go tool trace\` can still show it)`,
    );
  }
  if (!SUPPORTED_VERSIONS.includes(v)) {
    throw new IngestError(
      'unsupported',
      `a Go execution trace of wire version go 1.${v}, which stagediff does not read: it reads the versions Go 1.22 to 1.26 write (go 1.22, 1.23, 1.25, 1.26)`,
    );
  }
  return v;
}

interface Cursor {
  m: number;
  batches: Batch[];
  idx: number;
  off: number;
  lastTs: number;
  ev: BaseEvent;
}

/**
 * Reads a trace from `src`, delivering its events in order to `sink`: a Sync event at the start of
 * every generation and one at the end, then every event of the generation in the order Go's trace
 * reader yields them (same tie-breaking, same timestamp adjustment: an event never has a time at or
 * before the previous one's, it is moved to 1 ns after). One generation is held at a time.
 */
export async function readTrace(
  src: ByteSource,
  sink: TraceSink,
  limits: TraceLimits = defaultTraceLimits(),
): Promise<TraceReadInfo> {
  const feed = new ByteFeed(src, limits.maxBytes);
  try {
    const have = await feed.fill(HEADER_BYTES);
    if (have === 0) throw new IngestError('empty', 'empty file');
    const head = feed.take(Math.min(have, HEADER_BYTES));
    const version = checkHeader(head);
    if (have < HEADER_BYTES) throw new IngestError('malformed', 'the trace ends inside its header');
    return await readBody(feed, version, sink, limits);
  } finally {
    await feed.close();
  }
}

async function readBody(feed: ByteFeed, version: number, sink: TraceSink, limits: TraceLimits): Promise<TraceReadInfo> {
  const order = new Ordering(limits.maxStates);
  const info: TraceReadInfo = {
    version,
    generations: 0,
    events: 0,
    bytes: 0,
    startTime: 0,
    endTime: 0,
    clock: null,
    incomplete: null,
  };
  let lastTs = 0;
  let syncs = 0;
  let lastGen: Generation | null = null;

  const deliver = (e: OrderedEvent): void => {
    if (e.type !== EV_SYNC && e.type !== EV_CPU_SAMPLE) validateIds(e);
    if (e.time <= lastTs) e.time = lastTs + 1;
    lastTs = e.time;
    if (++info.events > limits.maxEvents) {
      throw new IngestError(
        'too-large',
        `the trace has more than ${limits.maxEvents} events (TRACE_MAX_EVENTS); record a shorter one (/debug/pprof/trace?seconds=…)`,
      );
    }
    if (info.events === 1) info.startTime = e.time;
    sink(e);
  };
  const sync = (gen: Generation | null, time: number): void => {
    syncs++;
    deliver({ type: EV_SYNC, time, args: [syncs, 0, 0, 0], g: NONE, p: NONE, m: NONE, gen: gen ?? lastGen! });
  };

  let spill: RawBatch | null = null;
  for (;;) {
    let next: Awaited<ReturnType<typeof readGeneration>>;
    // the input read so far holds whole generations (before Go 1.26, up to the next one's first batch)
    const validBytes = spill ? spill.start : feed.pos;
    try {
      next = await readGeneration(feed, version, spill, limits);
    } catch (e) {
      if (info.generations > 0 && e instanceof IngestError && e.code !== 'too-large') {
        info.incomplete = { reason: e.message, validBytes };
        break;
      }
      if (e instanceof TruncatedError) throw new IngestError('malformed', `${e.message}: the trace is truncated`);
      throw e;
    }
    if (!next) break;
    const gen = next.gen;
    lastGen = gen;
    info.generations++;
    if (!info.clock && gen.clock) {
      info.clock = { ...gen.clock };
    }
    sync(gen, Math.trunc(gen.minTs * gen.freq));
    runGeneration(gen, order, deliver);
    spill = next.spill;
    if (version < GO126 && spill === null) break;
  }
  if (info.generations === 0) throw new IngestError('no-run', 'the trace holds no events');
  sync(null, lastTs);
  info.endTime = lastTs;
  info.bytes = feed.pos;
  return info;
}

function validateIds(e: OrderedEvent): void {
  for (const i of STACK_ARGS[e.type]!) {
    const id = e.args[i]!;
    if (id !== 0 && !e.gen.stacks.has(id))
      throw new IngestError('malformed', `broken trace: found invalid stack ID ${id} for event ${EVENT_NAMES[e.type]}`);
  }
  for (const i of STRING_ARGS[e.type]!) {
    const id = e.args[i]!;
    if (id !== 0 && !e.gen.strings.has(id))
      throw new IngestError(
        'malformed',
        `broken trace: found invalid string ID ${id} for event ${EVENT_NAMES[e.type]}`,
      );
  }
}

/** Orders and delivers the events of one generation (its CPU samples merged in by time). */
function runGeneration(gen: Generation, order: Ordering, deliver: (e: OrderedEvent) => void): void {
  let frontier: Cursor[] = [];
  for (const m of gen.batchMs) {
    const c: Cursor = { m, batches: gen.batches.get(m)!, idx: 0, off: 0, lastTs: 0, ev: newBase() };
    if (nextEvent(c, gen.freq)) frontier = heapInsert(frontier, c);
  }
  const cpu = gen.cpuSamples;
  let ci = 0;
  const tryAdvance = (i: number): boolean => {
    const c = frontier[i]!;
    if (!order.advance(c.ev, gen, c.m)) return false;
    if (nextEvent(c, gen.freq)) heapUpdate(frontier, i);
    else frontier = heapRemove(frontier, i);
    return true;
  };
  for (;;) {
    const queued = order.next();
    if (queued) {
      deliver(queued);
      continue;
    }
    if (frontier.length === 0 && ci >= cpu.length) return;
    if (ci < cpu.length && (frontier.length === 0 || cpu[ci]!.time < frontier[0]!.ev.time)) {
      const s = cpu[ci++]!;
      deliver({ type: EV_CPU_SAMPLE, time: s.time, args: [s.stack, 0, 0, 0], g: s.g, p: s.p, m: s.m, gen });
      continue;
    }
    if (tryAdvance(0)) continue;
    // The earliest thread must wait for another: try the others in time order (Go sorts the heap
    // with its own unstable sort here, so ties are broken as Go breaks them).
    goSortFunc(frontier, (a, b) => a.ev.time - b.ev.time);
    let advanced = false;
    for (let i = 1; i < frontier.length; i++) {
      if (tryAdvance(i)) {
        advanced = true;
        break;
      }
    }
    if (!advanced) {
      const heads = frontier
        .slice(0, 8)
        .map((c) => `thread ${c.m}: ${EVENT_NAMES[c.ev.type]} at ${c.ev.time}`)
        .join('; ');
      throw new IngestError(
        'malformed',
        `broken trace: no thread's next event can happen in generation ${gen.gen} (${heads})`,
      );
    }
  }
}

function newBase(): BaseEvent {
  return { type: 0, time: 0, args: [0, 0, 0, 0] };
}

/** Decodes the thread's next event into `c.ev`; false when its batches are exhausted. */
function nextEvent(c: Cursor, freq: number): boolean {
  let b = c.batches[c.idx];
  while (b && b.data.length === c.off) {
    c.idx++;
    c.off = 0;
    c.lastTs = 0;
    b = c.batches[c.idx];
  }
  if (!b) return false;
  if (c.lastTs === 0) c.lastTs = Math.trunc(b.time * freq);
  const d = b.data;
  let p = c.off;
  const typ = d[p++]!;
  const nargs = TIMED_ARGS[typ]!;
  if (nargs < 0) {
    if (typ > 136) throw new IngestError('malformed', `broken trace: found invalid event type ${typ}`);
    throw new IngestError('malformed', `broken trace: found event without a timestamp: type ${typ}`);
  }
  const ev = c.ev;
  ev.type = typ;
  // dt, then the arguments: unsigned varints (at most 10 bytes each)
  let value = 0;
  for (let k = -1; k < nargs; k++) {
    let x = 0;
    let mul = 1;
    let ok = false;
    for (let n = 0; n < 10; n++) {
      if (p >= d.length) break;
      const byte = d[p++]!;
      if (byte < 0x80) {
        if (n === 9 && byte > 1) break;
        x += byte * mul;
        ok = true;
        break;
      }
      x += (byte & 0x7f) * mul;
      mul *= 128;
    }
    if (!ok)
      throw new IngestError('malformed', `broken trace: found invalid varint in ${EVENT_NAMES[typ]} on thread ${c.m}`);
    if (k < 0) value = x;
    else ev.args[k] = x;
  }
  for (let k = nargs; k < 4; k++) ev.args[k] = 0;
  ev.time = Math.trunc(value * freq) + c.lastTs;
  c.lastTs = ev.time;
  c.off = p;
  return true;
}

// A binary min-heap of cursors by their next event's time, with Go's exact sift rules (ties keep
// their place), so the order in which tied threads are tried is Go's.

function heapInsert(h: Cursor[], c: Cursor): Cursor[] {
  h.push(c);
  siftUp(h, h.length - 1);
  return h;
}

function heapUpdate(h: Cursor[], i: number): void {
  if (siftUp(h, i) !== i) return;
  siftDown(h, i);
}

function heapRemove(h: Cursor[], i: number): Cursor[] {
  while (i > 0) {
    const p = (i - 1) >> 1;
    const t = h[p]!;
    h[p] = h[i]!;
    h[i] = t;
    i = p;
  }
  const last = h.length - 1;
  const t = h[0]!;
  h[0] = h[last]!;
  h[last] = t;
  h.pop();
  siftDown(h, 0);
  return h;
}

function siftUp(h: Cursor[], i: number): number {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!(h[p]!.ev.time > h[i]!.ev.time)) break;
    const t = h[p]!;
    h[p] = h[i]!;
    h[i] = t;
    i = p;
  }
  return i;
}

function siftDown(h: Cursor[], i: number): void {
  for (;;) {
    let m = i;
    let minT = i < h.length ? h[i]!.ev.time : Number.POSITIVE_INFINITY;
    const l = 2 * i + 1;
    const r = 2 * i + 2;
    if (l < h.length && h[l]!.ev.time < minT) {
      minT = h[l]!.ev.time;
      m = l;
    }
    if (r < h.length && h[r]!.ev.time < minT) m = r;
    if (m === i) return;
    const t = h[i]!;
    h[i] = h[m]!;
    h[m] = t;
    i = m;
  }
}
