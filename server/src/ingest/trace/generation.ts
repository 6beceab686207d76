import { IngestError } from '../errors.ts';
import { BatchReader, type ByteFeed, TruncatedError } from './bytes.ts';
import {
  EV_CLOCK_SNAPSHOT,
  EV_CPU_SAMPLE,
  EV_CPU_SAMPLES,
  EV_END_OF_GENERATION,
  EV_EVENT_BATCH,
  EV_EXPERIMENTAL_BATCH,
  EV_FREQUENCY,
  EV_STACK,
  EV_STACKS,
  EV_STRING,
  EV_STRINGS,
  EV_SYNC_BATCH,
  GO125,
  GO126,
  MAX_BATCH_BYTES,
  MAX_FRAMES_PER_STACK,
  MAX_STRING_BYTES,
  NONE,
  asId,
} from './format.ts';

/** A thread's batch of events: its base time (ticks) and undecoded bytes. */
export interface Batch {
  m: number;
  time: number;
  data: Uint8Array;
}

/** One frame of a stack table entry: function and file as string ids, and a line. */
export interface WireFrame {
  fn: number;
  file: number;
  line: number;
}

/** A CPU profiling sample the runtime wrote into the trace (time already in ns). */
export interface CpuSample {
  time: number;
  m: number;
  p: number;
  g: number;
  stack: number;
}

/**
 * Everything one generation of the trace holds, decoded except the thread streams: its tables
 * (strings, stacks, the first frame written for each PC), its clock, its CPU samples and the threads'
 * batches in the order they were written. Ids in events are ids into these tables.
 */
export interface Generation {
  gen: number;
  /** Nanoseconds per tick, computed as Go computes it (1 / (ticks per second / 1e9)). */
  freq: number;
  /** Earliest batch time, in ticks. */
  minTs: number;
  strings: Map<number, string>;
  stacks: Map<number, number[]>;
  frames: Map<number, WireFrame>;
  batches: Map<number, Batch[]>;
  /** Threads in the order their first batch appeared. */
  batchMs: number[];
  cpuSamples: CpuSample[];
  /** The clock snapshot of Go 1.25+ traces: trace time (ns) and the wall clock at that instant. */
  clock: { time: number; sec: number; nsec: number } | null;
  /** Bytes of batches read for this generation. */
  bytes: number;
}

export interface GenerationLimits {
  maxGenerationBytes: number;
  maxStacks: number;
  maxStrings: number;
}

interface RawBatch {
  /** Where the batch starts in the input. */
  start: number;
  gen: number;
  m: number;
  time: number;
  exp: number;
  data: Uint8Array;
  end: boolean;
}

const utf8 = new TextDecoder('utf-8');

/** Largest batch header: type, experiment, then four varints of at most 10 bytes. */
const MAX_HEADER_BYTES = 2 + 4 * 10;

/** Reads one batch; null at a clean end of input (between batches). */
async function readBatch(feed: ByteFeed): Promise<RawBatch | null> {
  const have = await feed.fill(MAX_HEADER_BYTES);
  if (have === 0) return null;
  const start = feed.pos;
  const typ = feed.byte();
  if (typ === EV_END_OF_GENERATION)
    return { start, gen: 0, m: NONE, time: 0, exp: 0, data: new Uint8Array(0), end: true };
  if (typ !== EV_EVENT_BATCH && typ !== EV_EXPERIMENTAL_BATCH)
    throw new IngestError('malformed', `broken trace: expected a batch at byte ${start}, got event type ${typ}`);
  let exp = 0;
  if (typ === EV_EXPERIMENTAL_BATCH) {
    if (feed.available < 1) throw new TruncatedError('the trace ends inside a batch header');
    exp = feed.byte();
  }
  const gen = feed.uvarint('batch generation');
  const m = feed.uvarint('batch thread id');
  const time = feed.uvarint('batch timestamp');
  const size = feed.uvarint('batch size');
  if (size > MAX_BATCH_BYTES)
    throw new IngestError(
      'malformed',
      `broken trace: invalid batch size ${size} at byte ${start}, maximum is ${MAX_BATCH_BYTES}`,
    );
  const got = await feed.fill(size);
  if (got < size) throw new TruncatedError(`the trace ends inside a batch (read ${got} of its ${size} bytes)`);
  return { start, gen, m: asId(m), time, exp, data: feed.take(size), end: false };
}

function newGeneration(): Generation {
  return {
    gen: 0,
    freq: 0,
    minTs: 0,
    strings: new Map(),
    stacks: new Map(),
    frames: new Map(),
    batches: new Map(),
    batchMs: [],
    cpuSamples: [],
    clock: null,
    bytes: 0,
  };
}

/**
 * Reads the next generation. Go 1.26 ends each generation with an EndOfGeneration byte; older
 * versions are known to have moved on when a batch of the next generation appears, which is then
 * handed back as `spill` for the next call. Returns null when the input is exhausted.
 */
export async function readGeneration(
  feed: ByteFeed,
  version: number,
  spill: RawBatch | null,
  limits: GenerationLimits,
): Promise<{ gen: Generation; spill: RawBatch | null } | null> {
  const g = newGeneration();
  let threadBatches = 0;
  let any = false;
  let nextSpill: RawBatch | null = null;
  if (spill) {
    g.gen = spill.gen;
    g.minTs = spill.time;
    processBatch(g, spill, version, limits);
    any = true;
  }
  for (;;) {
    const b = await readBatch(feed);
    if (b === null) {
      if (version >= GO126) {
        if (threadBatches > 0)
          throw new TruncatedError('the trace ends inside a generation (no end-of-generation mark)');
        return null;
      }
      break;
    }
    if (version >= GO126) {
      if (g.gen === 0) g.gen = b.gen;
      if (b.end) break;
      if (b.gen === 0) throw new IngestError('malformed', 'broken trace: invalid generation number 0');
      if (b.gen !== g.gen)
        throw new IngestError(
          'malformed',
          'broken trace: missing end-of-generation event, or generations are interleaved',
        );
    } else {
      if (b.gen === 0) throw new IngestError('malformed', 'broken trace: invalid generation number 0');
      if (g.gen === 0) g.gen = b.gen;
      if (b.gen === g.gen + 1) {
        nextSpill = b;
        break;
      }
      if (b.gen !== g.gen) throw new IngestError('malformed', 'broken trace: generations out of order');
    }
    any = true;
    if (g.minTs === 0 || b.time < g.minTs) g.minTs = b.time;
    if (isThreadBatch(b, version)) threadBatches++;
    processBatch(g, b, version, limits);
  }
  if (!any && version < GO126) return null;
  if (g.freq === 0) throw new IngestError('malformed', 'broken trace: no frequency event found');
  if (version >= GO125 && !g.clock) throw new IngestError('malformed', 'broken trace: no clock snapshot event found');
  validateStackStrings(g);
  for (const s of g.cpuSamples) s.time = Math.trunc(s.time * g.freq);
  g.cpuSamples.sort((a, b) => a.time - b.time);
  if (g.clock) g.clock.time = Math.trunc(g.clock.time * g.freq);
  return { gen: g, spill: nextSpill };
}

function first(b: RawBatch): number {
  return b.data.length > 0 ? b.data[0]! : -1;
}

function isThreadBatch(b: RawBatch, version: number): boolean {
  if (b.exp !== 0) return false;
  const f = first(b);
  return !(f === EV_STRINGS || f === EV_STACKS || f === EV_CPU_SAMPLES || isSyncBatch(b, version));
}

function isSyncBatch(b: RawBatch, version: number): boolean {
  const f = first(b);
  return b.exp === 0 && ((f === EV_FREQUENCY && version < GO125) || (f === EV_SYNC_BATCH && version >= GO125));
}

function processBatch(g: Generation, b: RawBatch, version: number, limits: GenerationLimits): void {
  g.bytes += b.data.length;
  if (g.bytes > limits.maxGenerationBytes) {
    throw new IngestError(
      'too-large',
      `generation ${g.gen} of the trace holds more than ${limits.maxGenerationBytes} bytes (TRACE_MAX_GENERATION_BYTES)`,
    );
  }
  const f = first(b);
  if (b.exp !== 0) return; // experimental data (allocation events): not analysed
  if (f === EV_STRINGS) addStrings(g, b, limits);
  else if (f === EV_STACKS) addStacks(g, b, limits);
  else if (f === EV_CPU_SAMPLES) addCpuSamples(g, b, limits);
  else if (isSyncBatch(b, version)) setSync(g, b, version);
  else if (b.end) throw new IngestError('malformed', 'broken trace: unexpected end-of-generation mark');
  else {
    let list = g.batches.get(b.m);
    if (!list) {
      list = [];
      g.batches.set(b.m, list);
      g.batchMs.push(b.m);
    }
    list.push({ m: b.m, time: b.time, data: b.data });
  }
}

function addStrings(g: Generation, b: RawBatch, limits: GenerationLimits): void {
  const r = new BatchReader(b.data);
  r.byte();
  while (r.left > 0) {
    const ev = r.byte();
    if (ev !== EV_STRING) throw new IngestError('malformed', `broken trace: expected a string, got event type ${ev}`);
    const id = r.uvarint('string id');
    const len = r.uvarint('string length');
    if (len > MAX_STRING_BYTES)
      throw new IngestError('malformed', `broken trace: invalid string size ${len}, maximum is ${MAX_STRING_BYTES}`);
    if (r.left < len) throw new IngestError('malformed', `broken trace: failed to read a full string (${len} bytes)`);
    const s = utf8.decode(r.data.subarray(r.pos, r.pos + len));
    r.pos += len;
    if (id === 0 || g.strings.has(id))
      throw new IngestError('malformed', `broken trace: multiple strings with the same ID: id=${id}`);
    g.strings.set(id, s);
    if (g.strings.size > limits.maxStrings)
      throw new IngestError('too-large', `a generation of the trace has more than ${limits.maxStrings} strings`);
  }
}

function addStacks(g: Generation, b: RawBatch, limits: GenerationLimits): void {
  const r = new BatchReader(b.data);
  r.byte();
  while (r.left > 0) {
    const ev = r.byte();
    if (ev !== EV_STACK) throw new IngestError('malformed', `broken trace: expected a stack, got event type ${ev}`);
    const id = r.uvarint('stack id');
    const n = r.uvarint('stack size');
    if (n > MAX_FRAMES_PER_STACK)
      throw new IngestError('malformed', `broken trace: invalid stack size ${n}, maximum is ${MAX_FRAMES_PER_STACK}`);
    const pcs: number[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const pc = r.uvarint('frame PC');
      const fn = r.uvarint('frame function');
      const file = r.uvarint('frame file');
      const line = r.uvarint('frame line');
      pcs[i] = pc;
      if (!g.frames.has(pc)) g.frames.set(pc, { fn, file, line });
    }
    if (id === 0 || g.stacks.has(id))
      throw new IngestError('malformed', `broken trace: multiple stacks with the same ID: id=${id}`);
    g.stacks.set(id, pcs);
    if (g.stacks.size > limits.maxStacks)
      throw new IngestError('too-large', `a generation of the trace has more than ${limits.maxStacks} stacks`);
  }
}

function addCpuSamples(g: Generation, b: RawBatch, limits: GenerationLimits): void {
  const r = new BatchReader(b.data);
  r.byte();
  while (r.left > 0) {
    const ev = r.byte();
    if (ev !== EV_CPU_SAMPLE)
      throw new IngestError('malformed', `broken trace: expected a CPU sample, got event type ${ev}`);
    const time = r.uvarint('CPU sample time');
    const m = asId(r.uvarint('CPU sample thread'));
    const p = asId(r.uvarint('CPU sample proc'));
    const gid = r.uvarint('CPU sample goroutine');
    const stack = r.uvarint('CPU sample stack');
    g.cpuSamples.push({ time, m, p, g: gid === 0 ? NONE : asId(gid), stack });
    if (g.cpuSamples.length > limits.maxStacks * 4)
      throw new IngestError('too-large', `a generation of the trace has more than ${limits.maxStacks * 4} CPU samples`);
  }
}

function setSync(g: Generation, b: RawBatch, version: number): void {
  const r = new BatchReader(b.data);
  if (version >= GO125) r.byte();
  let last = b.time;
  while (r.left > 0) {
    const ev = r.byte();
    if (ev === EV_FREQUENCY) {
      if (g.freq !== 0) throw new IngestError('malformed', 'broken trace: found multiple frequency events');
      const f = r.uvarint('frequency');
      g.freq = 1 / (f / 1e9);
      if (!Number.isFinite(g.freq) || g.freq <= 0)
        throw new IngestError('malformed', `broken trace: invalid clock frequency ${f}`);
    } else if (ev === EV_CLOCK_SNAPSHOT && version >= GO125) {
      if (g.clock) throw new IngestError('malformed', 'broken trace: found multiple clock snapshot events');
      last += r.uvarint('clock snapshot time');
      r.uvarint('clock snapshot monotonic time');
      const sec = r.uvarint('clock snapshot seconds');
      const nsec = r.uvarint('clock snapshot nanoseconds');
      g.clock = { time: last, sec, nsec };
    } else {
      throw new IngestError('malformed', `broken trace: expected frequency or clock snapshot event, got ${ev}`);
    }
  }
}

function validateStackStrings(g: Generation): void {
  for (const [id, pcs] of g.stacks) {
    for (const pc of pcs) {
      const f = g.frames.get(pc)!;
      if (f.fn !== 0 && !g.strings.has(f.fn))
        throw new IngestError('malformed', `broken trace: found invalid func string ID ${f.fn} for stack ${id}`);
      if (f.file !== 0 && !g.strings.has(f.file))
        throw new IngestError('malformed', `broken trace: found invalid file string ID ${f.file} for stack ${id}`);
    }
  }
}

export type { RawBatch };
