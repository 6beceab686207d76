import { G_RUNNABLE, G_RUNNING, G_SYSCALL, G_WAITING, NONE } from '../ingest/trace/format.ts';

/**
 * What a goroutine is doing over an interval, as the request analysis splits time: running on a
 * CPU, runnable (waiting for a P: scheduler wait), in a syscall, or blocked for one reason.
 */
export const PART_RUNNING = 0;
export const PART_RUNNABLE = 1;
export const PART_SYSCALL = 2;
export const PART_NETWORK = 3;
export const PART_SYNC = 4;
export const PART_CHANNEL = 5;
export const PART_SELECT = 6;
export const PART_SLEEP = 7;
export const PART_GC_WAIT = 8;
export const PART_OTHER = 9;
/** Not in the trace (before the goroutine was first seen, after it ended). */
export const PART_UNKNOWN = 10;
export const PART_COUNT = 11;

export const PART_NAMES = [
  'running',
  'runnable',
  'syscall',
  'network',
  'sync',
  'channel',
  'select',
  'sleep',
  'gcWait',
  'other',
  'unknown',
] as const;
export type PartName = (typeof PART_NAMES)[number];

/** The part a block reason of the runtime counts under. */
export function blockPart(reason: string): number {
  if (reason === 'network') return PART_NETWORK;
  if (reason.startsWith('sync')) return PART_SYNC;
  if (reason.startsWith('chan')) return PART_CHANNEL;
  if (reason === 'select') return PART_SELECT;
  if (reason === 'sleep') return PART_SLEEP;
  if (reason.includes('GC')) return PART_GC_WAIT;
  return PART_OTHER;
}

/** Waits another goroutine ends by its own action (unlock, send, close, wake-up): the path follows it. */
function followable(part: number): boolean {
  return part === PART_SYNC || part === PART_CHANNEL || part === PART_SELECT;
}

/** One goroutine's states over the trace: segment i starts at time[i] in part[i]; `by` is who woke a wait. */
class Timeline {
  time = new Float64Array(8);
  part = new Int8Array(8);
  by = new Int32Array(8);
  n = 0;
  /** Its mark-assist intervals (start, end, …). */
  assist: number[] = [];
  assistOpen = -1;

  push(time: number, part: number): void {
    if (this.n === this.time.length) {
      const cap = this.n * 2;
      const t = new Float64Array(cap);
      t.set(this.time);
      this.time = t;
      const p = new Int8Array(cap);
      p.set(this.part);
      this.part = p;
      const b = new Int32Array(cap);
      b.set(this.by);
      this.by = b;
    }
    this.time[this.n] = time;
    this.part[this.n] = part;
    this.by[this.n] = NONE;
    this.n++;
  }

  /** Index of the last segment starting at or before `t`; -1 when none. */
  at(t: number): number {
    let lo = 0;
    let hi = this.n - 1;
    let r = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.time[mid]! <= t) {
        r = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return r;
  }
}

/** Thrown when a trace has more goroutine states than the request analysis may keep. */
export class TooManyStates extends Error {}

/** One goroutine's share of a request's critical path (a goroutine other than the request's own). */
export interface PathGoroutine {
  goroutine: number;
  /** Time of the request attributed to it, by part (running, runnable, …; PART_NAMES order). */
  parts: number[];
}

/** A request's time split along its critical path. */
export interface PathSplit {
  /** By part (PART_NAMES order), summing to the span. */
  parts: number[];
  /** Of the running time, GC mark assist. */
  gcAssistNanos: number;
  /** Of the span, time followed into other goroutines (the waits they ended). */
  viaOthersNanos: number;
  /** The other goroutines on the path, most time first (at most `maxGoroutines`). */
  others: PathGoroutine[];
  /** Set when the walk stopped at its bound: the rest of a wait counts as that wait. */
  truncated: boolean;
}

/** Bounds of one critical-path walk: goroutines deep, and segments visited. */
export const PATH_MAX_DEPTH = 8;
export const PATH_MAX_STEPS = 20_000;

/**
 * Every goroutine's states over a trace, recorded as the events stream by (bounded by `maxStates`
 * segments in all), and the critical path of an interval of one goroutine through them: its own
 * running, runnable, syscall and blocked time, except that a wait another goroutine ended (a mutex
 * unlocked, a channel sent to or closed, a select's case made ready, a sync.Cond signalled) is followed
 * into that goroutine over the wait — its running, runnable and blocked time counts instead, and its
 * own such waits are followed in turn, up to PATH_MAX_DEPTH goroutines deep and PATH_MAX_STEPS
 * segments per walk.
 */
export class GoroutineStates {
  private readonly gs = new Map<number, Timeline>();
  private states = 0;
  private end = 0;

  constructor(private readonly maxStates: number) {}

  private timeline(g: number): Timeline {
    let t = this.gs.get(g);
    if (!t) {
      t = new Timeline();
      this.gs.set(g, t);
    }
    return t;
  }

  /**
   * A goroutine transition at `time` into state `to` (G_* of format.ts; `reason` for Waiting);
   * `actor` is the goroutine whose action caused it (the event's goroutine), NONE when none.
   */
  transition(time: number, g: number, from: number, to: number, reason: string, actor: number): void {
    this.end = time;
    if (from === to) return;
    const tl = this.timeline(g);
    if (from === G_WAITING && tl.n > 0 && actor !== g) tl.by[tl.n - 1] = actor;
    let part: number;
    if (to === G_RUNNING) part = PART_RUNNING;
    else if (to === G_RUNNABLE) part = PART_RUNNABLE;
    else if (to === G_SYSCALL) part = PART_SYSCALL;
    else if (to === G_WAITING) part = blockPart(reason);
    else part = PART_UNKNOWN;
    if (++this.states > this.maxStates) throw new TooManyStates(`more than ${this.maxStates} goroutine states`);
    tl.push(time, part);
    if (part === PART_UNKNOWN && tl.assistOpen >= 0) {
      tl.assist.push(tl.assistOpen, time);
      tl.assistOpen = -1;
    }
  }

  /** A mark-assist range of goroutine `g` begins (or is active) / ends at `time`. */
  assist(time: number, g: number, begin: boolean): void {
    const tl = this.timeline(g);
    if (begin) tl.assistOpen = time;
    else if (tl.assistOpen >= 0) {
      tl.assist.push(tl.assistOpen, time);
      tl.assistOpen = -1;
    }
  }

  /** The trace's last event time (open states end there). */
  finish(time: number): void {
    this.end = Math.max(this.end, time);
    for (const tl of this.gs.values()) {
      if (tl.assistOpen >= 0) {
        tl.assist.push(tl.assistOpen, this.end);
        tl.assistOpen = -1;
      }
    }
  }

  /** The critical path of goroutine `g` over [start, end). */
  path(g: number, start: number, end: number, maxGoroutines = 8): PathSplit {
    const out: PathSplit = {
      parts: new Array<number>(PART_COUNT).fill(0),
      gcAssistNanos: 0,
      viaOthersNanos: 0,
      others: [],
      truncated: false,
    };
    const others = new Map<number, number[]>();
    const budget = { steps: PATH_MAX_STEPS };
    this.walk(g, start, end, 0, out, others, budget);
    const list = [...others].map(([goroutine, parts]) => ({ goroutine, parts }));
    const total = (p: number[]) => p.reduce((a, b) => a + b, 0);
    list.sort((a, b) => total(b.parts) - total(a.parts) || a.goroutine - b.goroutine);
    out.others = list.slice(0, maxGoroutines);
    return out;
  }

  private walk(
    g: number,
    a: number,
    b: number,
    depth: number,
    out: PathSplit,
    others: Map<number, number[]>,
    budget: { steps: number },
  ): void {
    const tl = this.gs.get(g);
    const add = (part: number, d: number) => {
      if (d <= 0) return;
      out.parts[part]! += d;
      if (depth > 0) {
        out.viaOthersNanos += d;
        let p = others.get(g);
        if (!p) {
          p = new Array<number>(PART_COUNT).fill(0);
          others.set(g, p);
        }
        p[part]! += d;
      }
    };
    if (!tl || tl.n === 0) {
      add(PART_UNKNOWN, b - a);
      return;
    }
    let i = tl.at(a);
    if (i < 0) {
      add(PART_UNKNOWN, Math.min(b, tl.time[0]!) - a);
      i = 0;
    }
    for (; i < tl.n && tl.time[i]! < b; i++) {
      const s = Math.max(tl.time[i]!, a);
      const e = Math.min(i + 1 < tl.n ? tl.time[i + 1]! : this.end, b);
      if (e <= s) continue;
      const part = tl.part[i]!;
      const by = tl.by[i]!;
      if (followable(part) && by !== NONE && by !== g && depth < PATH_MAX_DEPTH && budget.steps > 0) {
        budget.steps--;
        this.walk(by, s, e, depth + 1, out, others, budget);
        continue;
      }
      if (followable(part) && by !== NONE && by !== g) out.truncated = true;
      if (--budget.steps < 0) out.truncated = true;
      add(part, e - s);
      if (part === PART_RUNNING) out.gcAssistNanos += overlap(tl.assist, s, e);
    }
    const last = tl.n > 0 ? Math.max(tl.time[tl.n - 1]!, this.end) : a;
    if (b > last) add(PART_UNKNOWN, b - Math.max(a, last));
  }
}

/** Total overlap of [a, b) with the intervals (start, end, …) of `spans`. */
export function overlap(spans: number[], a: number, b: number): number {
  let sum = 0;
  for (let i = 0; i < spans.length; i += 2) {
    const s = Math.max(spans[i]!, a);
    const e = Math.min(spans[i + 1]!, b);
    if (e > s) sum += e - s;
  }
  return sum;
}
