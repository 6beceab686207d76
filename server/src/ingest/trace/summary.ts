import type {
  BlockCategory,
  BlockReason,
  Durations,
  EntryFunction,
  SpanTotals,
  TimeSpan,
  TimelineBucket,
  TraceSummary,
} from '../../model/trace.ts';
import { RANGE_GC_ASSIST, RANGE_GC_MARK, type Transition, rangeOf } from './events.ts';
import {
  EV_HEAP_ALLOC,
  EV_PROCS_CHANGE,
  G_NOT_EXIST,
  G_RUNNABLE,
  G_RUNNING,
  G_SYSCALL,
  G_UNDETERMINED,
  G_WAITING,
} from './format.ts';
import type { OrderedEvent } from './order.ts';
import type { TraceReadInfo } from './reader.ts';

/** Entry functions listed at most; the rest are counted in `omitted`. */
const MAX_ENTRY_FUNCTIONS = 100;
/** GC and stop-the-world spans listed at most, each. */
const MAX_SPANS = 10_000;
/** Timeline buckets at most; the bucket is the smallest of 1, 2, 5 × 10^k ms that keeps to it. */
const MAX_BUCKETS = 500;

/** A growable list of float64 (durations), compact for millions of entries. */
class Floats {
  a = new Float64Array(1024);
  n = 0;
  push(x: number): void {
    if (this.n === this.a.length) {
      const b = new Float64Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = x;
  }
  sorted(): Float64Array {
    return this.a.slice(0, this.n).sort();
  }
}

interface G {
  state: number;
  since: number;
  /** The transition into the current state was seen (not a state the goroutine had at the trace's start). */
  observed: boolean;
  reason: string;
  name: string;
  createdAt: number;
  running: number;
  runnable: number;
  blocked: number;
  syscall: number;
}

interface Fn {
  goroutines: number;
  created: number;
  lifetimes: Floats;
  running: number;
  runnable: number;
  blocked: number;
  syscall: number;
}

/** The blocking category of a runtime block reason. */
export function blockCategory(reason: string): BlockCategory {
  if (reason.includes('chan')) return 'channel';
  if (reason.includes('select')) return 'select';
  if (reason.includes('sync')) return 'sync';
  if (reason === 'network') return 'network';
  if (reason === 'sleep') return 'sleep';
  return 'other';
}

/** Nearest-rank percentile of sorted values: the ⌈p/100·n⌉-th smallest. */
function rank(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const r = Math.max(1, Math.ceil((p * sorted.length) / 100));
  return sorted[Math.min(r, sorted.length) - 1]!;
}

function durations(values: Floats): Durations {
  const s = values.sorted();
  let total = 0;
  for (const v of s) total += v;
  return {
    count: s.length,
    totalNanos: total,
    meanNanos: s.length === 0 ? 0 : total / s.length,
    p50Nanos: rank(s, 50),
    p90Nanos: rank(s, 90),
    p99Nanos: rank(s, 99),
    maxNanos: s.length === 0 ? 0 : s[s.length - 1]!,
  };
}

/**
 * Computes the per-trace summary from the ordered events, in one pass (see TraceSummary for what
 * each figure counts). Memory: one record per live goroutine, the scheduling delays and lifetimes
 * (8 bytes each), the spans (bounded) and the timeline's raw change points.
 */
export class TraceSummarizer {
  private readonly gs = new Map<number, G>();
  private readonly fns = new Map<string, Fn>();
  private atStart = 0;
  private created = 0;
  private ended = 0;
  private maxAlive = 0;
  private readonly schedWait = new Floats();
  private readonly blocked = new Map<string, SpanTotals>();
  private readonly syscall: SpanTotals = { count: 0, totalNanos: 0 };
  private gomaxprocs: number | null = null;
  // GC
  private cycles = 0;
  private markOpen: number | null = null;
  private markNanos = 0;
  private readonly stwOpen = new Map<number, { time: number; kind: string }>();
  private readonly stw = new Floats();
  private readonly stwKinds = new Map<string, SpanTotals & { maxNanos: number }>();
  private readonly assistOpen = new Map<number, number>();
  private readonly assist: SpanTotals = { count: 0, totalNanos: 0 };
  // timeline
  private t0 = -1;
  private running = 0;
  private runnable = 0;
  private lastChange = 0;
  private fine: FineTimeline | null = null;
  private readonly gcSpans: TimeSpan[] = [];
  private readonly stwSpans: TimeSpan[] = [];
  private spansTruncated = false;

  /** Feeds every event (in order); `t` is the event's transition when it has one, else null. */
  event(e: OrderedEvent, t: Transition | null): void {
    if (this.t0 < 0) {
      this.t0 = e.time;
      this.lastChange = e.time;
      this.fine = new FineTimeline(e.time);
    }
    if (t) {
      if (t.kind === 'goroutine') this.goroutine(e.time, t, e);
      return;
    }
    if (e.type === EV_HEAP_ALLOC) {
      this.fine!.heap(e.time, e.args[0]);
      return;
    }
    if (e.type === EV_PROCS_CHANGE) {
      this.gomaxprocs = e.args[0];
      return;
    }
    const r = rangeOf(e);
    if (r) this.range(e.time, r.edge, r.name, r.id);
  }

  /** Running and runnable counts change: the counts so far are added to the timeline up to `time`. */
  private count(time: number, from: number, to: number): void {
    const f = this.fine!;
    f.spread(RUNNING, this.lastChange, time, this.running);
    f.spread(RUNNABLE, this.lastChange, time, this.runnable);
    this.lastChange = time;
    if (from === G_RUNNING) this.running--;
    else if (from === G_RUNNABLE) this.runnable--;
    if (to === G_RUNNING) this.running++;
    else if (to === G_RUNNABLE) this.runnable++;
  }

  private goroutine(time: number, t: Transition, e: OrderedEvent): void {
    if (t.from === t.to) return;
    let g = this.gs.get(t.id);
    if (t.from === G_UNDETERMINED || t.from === G_NOT_EXIST || !g) {
      if (g) this.retire(g); // a reused id: the old one is over
      g = {
        state: t.from,
        since: time,
        observed: false,
        reason: '',
        name: '',
        createdAt: -1,
        running: 0,
        runnable: 0,
        blocked: 0,
        syscall: 0,
      };
      this.gs.set(t.id, g);
      if (t.from === G_NOT_EXIST) {
        this.created++;
        g.createdAt = time;
      } else {
        this.atStart++;
      }
      if (this.gs.size > this.maxAlive) this.maxAlive = this.gs.size;
    } else {
      const dur = time - g.since;
      this.accumulate(g, dur);
      if (g.observed) {
        if (g.state === G_RUNNABLE && t.to === G_RUNNING) this.schedWait.push(dur);
        else if (g.state === G_WAITING) this.addBlocked(g.reason, dur);
        else if (g.state === G_SYSCALL) {
          this.syscall.count++;
          this.syscall.totalNanos += dur;
        }
      }
    }
    this.count(time, t.from, t.to);
    if (g.name === '' && t.stack !== 0) {
      const pcs = e.gen.stacks.get(t.stack);
      if (pcs && pcs.length > 0) {
        const f = e.gen.frames.get(pcs[pcs.length - 1]!)!;
        g.name = f.fn === 0 ? '' : (e.gen.strings.get(f.fn) ?? '');
      }
    }
    g.state = t.to;
    g.since = time;
    g.observed = t.from !== G_UNDETERMINED;
    g.reason = t.to === G_WAITING ? t.reason : '';
    if (t.to === G_NOT_EXIST) {
      this.ended++;
      const fn = this.retire(g);
      if (g.createdAt >= 0) fn.lifetimes.push(time - g.createdAt);
      this.gs.delete(t.id);
    }
  }

  private accumulate(g: G, dur: number): void {
    if (g.state === G_RUNNING) g.running += dur;
    else if (g.state === G_RUNNABLE) g.runnable += dur;
    else if (g.state === G_WAITING) g.blocked += dur;
    else if (g.state === G_SYSCALL) g.syscall += dur;
  }

  private addBlocked(reason: string, dur: number): void {
    let b = this.blocked.get(reason);
    if (!b) {
      b = { count: 0, totalNanos: 0 };
      this.blocked.set(reason, b);
    }
    b.count++;
    b.totalNanos += dur;
  }

  /** Adds a goroutine's figures to its entry function; returns the function's record. */
  private retire(g: G): Fn {
    let fn = this.fns.get(g.name);
    if (!fn) {
      fn = { goroutines: 0, created: 0, lifetimes: new Floats(), running: 0, runnable: 0, blocked: 0, syscall: 0 };
      this.fns.set(g.name, fn);
    }
    fn.goroutines++;
    if (g.createdAt >= 0) fn.created++;
    fn.running += g.running;
    fn.runnable += g.runnable;
    fn.blocked += g.blocked;
    fn.syscall += g.syscall;
    return fn;
  }

  private range(time: number, edge: 'begin' | 'active' | 'end', name: string, id: number): void {
    if (name === RANGE_GC_MARK) {
      if (edge === 'begin') {
        this.cycles++;
        this.markOpen = time;
      } else if (edge === 'active') {
        if (this.markOpen === null) this.markOpen = time;
      } else if (this.markOpen !== null) {
        this.markNanos += time - this.markOpen;
        this.fine!.spread(MARK, this.markOpen, time, 1);
        this.span(this.gcSpans, this.markOpen, time, '');
        this.markOpen = null;
      }
    } else if (name === RANGE_GC_ASSIST) {
      if (edge === 'end') {
        const from = this.assistOpen.get(id);
        if (from !== undefined) {
          this.assist.count++;
          this.assist.totalNanos += time - from;
          this.assistOpen.delete(id);
        }
      } else if (!this.assistOpen.has(id)) {
        this.assistOpen.set(id, time);
      }
    } else if (name.startsWith('stop-the-world (')) {
      const kind = name.slice('stop-the-world ('.length, -1);
      if (edge === 'begin') this.stwOpen.set(id, { time, kind });
      else if (edge === 'end') {
        const open = this.stwOpen.get(id);
        if (open) {
          this.addStw(open.kind, open.time, time);
          this.stwOpen.delete(id);
        }
      }
    }
  }

  private addStw(kind: string, from: number, to: number): void {
    const dur = to - from;
    this.stw.push(dur);
    let k = this.stwKinds.get(kind);
    if (!k) {
      k = { count: 0, totalNanos: 0, maxNanos: 0 };
      this.stwKinds.set(kind, k);
    }
    k.count++;
    k.totalNanos += dur;
    if (dur > k.maxNanos) k.maxNanos = dur;
    this.fine!.spread(STW, from, to, 1);
    this.span(this.stwSpans, from, to, kind);
  }

  private span(list: TimeSpan[], from: number, to: number, kind: string): void {
    if (list.length >= MAX_SPANS) {
      this.spansTruncated = true;
      return;
    }
    list.push({ startNanos: from - this.t0, endNanos: to - this.t0, kind });
  }

  /** The summary, once every event was fed (`info` from the reader). */
  finish(info: TraceReadInfo): TraceSummary {
    const end = info.endTime;
    const t0 = info.startTime;
    if (this.t0 < 0) {
      this.t0 = t0;
      this.lastChange = t0;
      this.fine = new FineTimeline(t0);
    }
    this.count(end, G_UNDETERMINED, G_UNDETERMINED);
    for (const g of this.gs.values()) {
      const dur = end - g.since;
      this.accumulate(g, dur);
      if (g.observed) {
        if (g.state === G_WAITING) this.addBlocked(g.reason, dur);
        else if (g.state === G_SYSCALL) {
          this.syscall.count++;
          this.syscall.totalNanos += dur;
        }
      }
      this.retire(g);
    }
    this.gs.clear();
    if (this.markOpen !== null) {
      this.markNanos += end - this.markOpen;
      this.fine!.spread(MARK, this.markOpen, end, 1);
      this.span(this.gcSpans, this.markOpen, end, '');
    }
    for (const from of this.assistOpen.values()) {
      this.assist.count++;
      this.assist.totalNanos += end - from;
    }
    for (const s of this.stwOpen.values()) this.addStw(s.kind, s.time, end);

    const blockedTotals = {
      channel: { count: 0, totalNanos: 0 },
      select: { count: 0, totalNanos: 0 },
      sync: { count: 0, totalNanos: 0 },
      network: { count: 0, totalNanos: 0 },
      sleep: { count: 0, totalNanos: 0 },
      other: { count: 0, totalNanos: 0 },
    };
    const byReason: BlockReason[] = [];
    for (const [reason, v] of this.blocked) {
      const category = blockCategory(reason);
      blockedTotals[category].count += v.count;
      blockedTotals[category].totalNanos += v.totalNanos;
      byReason.push({ reason, category, count: v.count, totalNanos: v.totalNanos });
    }
    byReason.sort((a, b) => b.totalNanos - a.totalNanos || cmpStr(a.reason, b.reason));

    const fns: EntryFunction[] = [...this.fns].map(([name, f]) => ({
      name,
      goroutines: f.goroutines,
      created: f.created,
      lifetime: durations(f.lifetimes),
      runningNanos: f.running,
      runnableNanos: f.runnable,
      blockedNanos: f.blocked,
      syscallNanos: f.syscall,
    }));
    fns.sort((a, b) => b.goroutines - a.goroutines || cmpStr(a.name, b.name));

    const stwDur = durations(this.stw);
    const byKind = [...this.stwKinds].map(([kind, k]) => ({ kind, ...k }));
    byKind.sort((a, b) => b.totalNanos - a.totalNanos || cmpStr(a.kind, b.kind));

    return {
      goVersion: `1.${info.version}`,
      spanNanos: end - t0,
      startTime: info.clock ? wallStart(info.clock, t0) : null,
      generations: info.generations,
      events: info.events,
      gomaxprocs: this.gomaxprocs,
      incomplete: info.incomplete,
      goroutines: { atStart: this.atStart, created: this.created, ended: this.ended, maxAlive: this.maxAlive },
      schedWait: durations(this.schedWait),
      blocked: { ...blockedTotals, byReason },
      syscall: this.syscall,
      gc: {
        cycles: this.cycles,
        markNanos: this.markNanos,
        stw: { ...stwDur, byKind },
        assist: this.assist,
      },
      entryFunctions: {
        functions: fns.slice(0, MAX_ENTRY_FUNCTIONS),
        omitted: Math.max(0, fns.length - MAX_ENTRY_FUNCTIONS),
      },
      timeline: this.timeline(t0, end),
    };
  }

  private timeline(t0: number, end: number): TraceSummary['timeline'] {
    const span = Math.max(0, end - t0);
    const bucket = bucketFor(span);
    const n = Math.max(1, Math.ceil(span / bucket));
    const f = this.fine!;
    const per = Math.round(bucket / f.resolution);
    const buckets: TimelineBucket[] = [];
    for (let i = 0; i < n; i++) {
      const width = i === n - 1 ? span - i * bucket : bucket;
      const w = width > 0 ? width : 1;
      const sum = [0, 0, 0, 0];
      let heap: number | null = null;
      for (let k = i * per; k < (i + 1) * per && k < f.length; k++) {
        for (let s = 0; s < 4; s++) sum[s]! += f.acc[s]![k]!;
        const h = f.heapMax[k]!;
        if (h >= 0 && (heap === null || h > heap)) heap = h;
      }
      buckets.push({
        startNanos: i * bucket,
        running: sum[RUNNING]! / w,
        runnable: sum[RUNNABLE]! / w,
        gcMark: sum[MARK]! / w,
        stwNanos: sum[STW]!,
        heapBytes: heap,
      });
    }
    return {
      bucketNanos: bucket,
      buckets,
      gcSpans: this.gcSpans,
      stwSpans: this.stwSpans,
      truncated: this.spansTruncated,
    };
  }
}

const RUNNING = 0;
const RUNNABLE = 1;
const MARK = 2;
const STW = 3;
/** Fine buckets kept at most while reading; past it they merge tenfold. */
const MAX_FINE = 5000;

/**
 * Time integrals (running and runnable goroutine counts, GC mark and stop-the-world time) and the
 * heap's maximum, in buckets of 10^k ms from the trace's start that grow tenfold whenever the trace
 * outlasts MAX_FINE of them, so memory stays fixed whatever the trace's length. Every timeline
 * bucket (1, 2 or 5 × 10^k ms) is a whole number of these.
 */
class FineTimeline {
  resolution = 1e6;
  length = 0;
  acc: Float64Array[] = [0, 1, 2, 3].map(() => new Float64Array(MAX_FINE));
  heapMax = new Float64Array(MAX_FINE).fill(-1);
  constructor(private readonly t0: number) {}

  private index(t: number): number {
    let i = Math.floor((t - this.t0) / this.resolution);
    while (i >= MAX_FINE) {
      this.coarsen();
      i = Math.floor((t - this.t0) / this.resolution);
    }
    if (i + 1 > this.length) this.length = i + 1;
    return i;
  }

  private coarsen(): void {
    for (const a of this.acc) {
      for (let k = 0; k < MAX_FINE / 10; k++) {
        let s = 0;
        for (let j = 0; j < 10; j++) s += a[k * 10 + j]!;
        a[k] = s;
      }
      a.fill(0, MAX_FINE / 10);
    }
    const h = this.heapMax;
    for (let k = 0; k < MAX_FINE / 10; k++) {
      let m = -1;
      for (let j = 0; j < 10; j++) m = Math.max(m, h[k * 10 + j]!);
      h[k] = m;
    }
    h.fill(-1, MAX_FINE / 10);
    this.length = Math.ceil(this.length / 10);
    this.resolution *= 10;
  }

  /** Adds `weight` × the time of [from, to) to the buckets it covers. */
  spread(which: number, from: number, to: number, weight: number): void {
    if (weight === 0 || to <= from) return;
    this.index(to);
    let a = from;
    let i = this.index(from);
    const acc = this.acc[which]!;
    while (a < to) {
      const edge = Math.min(to, this.t0 + (i + 1) * this.resolution);
      acc[i] = acc[i]! + (edge - a) * weight;
      a = edge;
      i++;
    }
  }

  heap(t: number, bytes: number): void {
    const i = this.index(t);
    if (bytes > this.heapMax[i]!) this.heapMax[i] = bytes;
  }
}

/** The timeline's bucket: the smallest of 1, 2, 5 × 10^k ms that keeps the buckets to MAX_BUCKETS. */
export function bucketFor(spanNanos: number): number {
  for (let unit = 1e6; ; unit *= 10) {
    for (const m of [1, 2, 5]) {
      const b = m * unit;
      if (Math.ceil(spanNanos / b) <= MAX_BUCKETS) return b;
    }
  }
}

/** The wall clock at trace time `t0`, to the millisecond, from a clock snapshot. */
function wallStart(clock: { time: number; sec: number; nsec: number }, t0: number): string {
  const ms = clock.sec * 1000 + (clock.nsec - (clock.time - t0)) / 1e6;
  return new Date(Math.round(ms)).toISOString();
}

function cmpStr(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
