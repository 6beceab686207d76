import { G_RUNNABLE, G_RUNNING, G_SYSCALL, G_WAITING, NONE } from './format.ts';
import { REQUEST_PART_NAMES, type RequestPart } from '../../model/trace-requests.ts';

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

/** The parts' names, indexed by the numbers above (declared once, in the model). */
export const PART_NAMES = REQUEST_PART_NAMES;
export type PartName = RequestPart;

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

/** Entries per chunk of the state columns. */
const CHUNK = 1 << 16;

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

/** Assist intervals kept at most (start and end of each). */
const MAX_ASSIST = 2_000_000;

/**
 * Every goroutine's states over a trace, recorded as the events stream by (bounded by `maxStates`
 * states in all, 25 bytes each, in columns of fixed chunks: no object per goroutine or state), and the
 * critical path of an interval of one goroutine through them, walked backwards from its end: its own
 * running, runnable, syscall and blocked time, except that a wait another goroutine ended (a mutex
 * unlocked, a channel sent to or closed, a select's case made ready, a sync.Cond signalled) is followed
 * into that goroutine over the wait — its running, runnable and blocked time counts instead, and its
 * own such waits are followed in turn, up to PATH_MAX_DEPTH goroutines deep and PATH_MAX_STEPS
 * states per walk. A state is its start time, its part, the state before it of the same goroutine, the
 * stack it began at (where its goroutine blocked or entered a syscall),
 * and, for a wait, the goroutine that ended it with the state that goroutine was in then.
 */
export class GoroutineStates {
  private readonly time: Float64Array[] = [];
  private readonly part: Int8Array[] = [];
  private readonly prev: Int32Array[] = [];
  private readonly by: Int32Array[] = [];
  private readonly byAt: Int32Array[] = [];
  /** The stack a state began at, as the caller numbered it (0: none seen). */
  private readonly stack: Int32Array[] = [];
  private n = 0;
  /** Each live goroutine's latest state. */
  private readonly tail = new Map<number, number>();
  private readonly assists = new Map<number, number[]>();
  private readonly assistOpen = new Map<number, number>();
  private assistCount = 0;
  private end = 0;

  constructor(private readonly maxStates: number) {}

  /** The latest state of goroutine `g` (an index for `path`); -1 when none. */
  latest(g: number): number {
    return this.tail.get(g) ?? -1;
  }

  /**
   * A goroutine transition at `time` into state `to` (G_* of format.ts; `reason` for Waiting);
   * `actor` is the goroutine whose action caused it (the event's goroutine), NONE when none; `stack`
   * the caller's number for the stack it happened at (0 when none).
   */
  transition(time: number, g: number, from: number, to: number, reason: string, actor: number, stack = 0): void {
    this.end = time;
    if (from === to) return;
    const last = this.tail.get(g) ?? -1;
    if (from === G_WAITING && last >= 0 && actor !== g && actor !== NONE && actor < 2 ** 31) {
      const c = last >>> 16;
      const k = last & (CHUNK - 1);
      this.by[c]![k] = actor;
      this.byAt[c]![k] = this.tail.get(actor) ?? -1;
    }
    let part: number;
    if (to === G_RUNNING) part = PART_RUNNING;
    else if (to === G_RUNNABLE) part = PART_RUNNABLE;
    else if (to === G_SYSCALL) part = PART_SYSCALL;
    else if (to === G_WAITING) part = blockPart(reason);
    else part = PART_UNKNOWN;
    if (this.n >= this.maxStates) throw new TooManyStates(`more than ${this.maxStates} goroutine states`);
    const i = this.n++;
    const c = i >>> 16;
    const k = i & (CHUNK - 1);
    if (k === 0) {
      this.time.push(new Float64Array(CHUNK));
      this.part.push(new Int8Array(CHUNK));
      this.prev.push(new Int32Array(CHUNK));
      this.by.push(new Int32Array(CHUNK).fill(NONE));
      this.byAt.push(new Int32Array(CHUNK).fill(-1));
      this.stack.push(new Int32Array(CHUNK));
    }
    this.stack[c]![k] = stack;
    this.time[c]![k] = time;
    this.part[c]![k] = part;
    this.prev[c]![k] = last;
    if (part === PART_UNKNOWN) {
      this.tail.delete(g);
      this.assist(time, g, false);
    } else this.tail.set(g, i);
  }

  /** A mark-assist range of goroutine `g` begins (or is active) / ends at `time`. */
  assist(time: number, g: number, begin: boolean): void {
    if (begin) {
      this.assistOpen.set(g, time);
      return;
    }
    const open = this.assistOpen.get(g);
    if (open === undefined) return;
    this.assistOpen.delete(g);
    if (this.assistCount >= MAX_ASSIST) return;
    this.assistCount++;
    let l = this.assists.get(g);
    if (!l) {
      l = [];
      this.assists.set(g, l);
    }
    l.push(open, time);
  }

  /** Drops every state kept (the analysis gave up: its memory goes back at once). */
  clear(): void {
    this.time.length = 0;
    this.part.length = 0;
    this.prev.length = 0;
    this.by.length = 0;
    this.byAt.length = 0;
    this.stack.length = 0;
    this.n = 0;
    this.tail.clear();
    this.assists.clear();
    this.assistOpen.clear();
  }

  /** The trace's last event time (open states end there). */
  finish(time: number): void {
    this.end = Math.max(this.end, time);
    for (const g of [...this.assistOpen.keys()]) this.assist(this.end, g, false);
  }

  /**
   * The critical path of goroutine `g` over [start, end); `at` is a state of g at or after `end` (`latest`).
   * With `segments`, the path's stretches are appended to it as (goroutine, part, start, end, stack)
   * quintuples, latest first, adjacent stretches of one goroutine, part and stack merged (at most
   * PATH_MAX_STEPS + 1); `stack` is the number given with the state's transition (0: none).
   */
  path(g: number, at: number, start: number, end: number, maxGoroutines = 8, segments?: number[]): PathSplit {
    const out: PathSplit = {
      parts: new Array<number>(PART_COUNT).fill(0),
      gcAssistNanos: 0,
      viaOthersNanos: 0,
      others: [],
      truncated: false,
    };
    const others = new Map<number, number[]>();
    const budget = { steps: PATH_MAX_STEPS };
    this.walk(g, at, start, end, 0, out, others, budget, segments);
    const list = [...others].map(([goroutine, parts]) => ({ goroutine, parts }));
    const total = (p: number[]) => p.reduce((a, b) => a + b, 0);
    list.sort((a, b) => total(b.parts) - total(a.parts) || a.goroutine - b.goroutine);
    out.others = list.slice(0, maxGoroutines);
    return out;
  }

  private walk(
    g: number,
    at: number,
    a: number,
    b: number,
    depth: number,
    out: PathSplit,
    others: Map<number, number[]>,
    budget: { steps: number },
    segments?: number[],
  ): void {
    const add = (part: number, d: number, from: number, stack: number) => {
      if (d <= 0) return;
      out.parts[part]! += d;
      if (segments) {
        // the walk goes back in time without gaps: a stretch ends where the one before it starts
        const n = segments.length;
        if (
          n >= 5 &&
          segments[n - 5] === g &&
          segments[n - 4] === part &&
          segments[n - 3] === from + d &&
          segments[n - 1] === stack
        )
          segments[n - 3] = from;
        else segments.push(g, part, from, from + d, stack);
      }
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
    const assists = this.assists.get(g);
    let i = at;
    let later = Number.POSITIVE_INFINITY;
    while (i >= 0) {
      const c = i >>> 16;
      const k = i & (CHUNK - 1);
      const t = this.time[c]![k]!;
      const e = Math.min(later, b);
      const s = Math.max(t, a);
      if (e > s) {
        const part = this.part[c]![k]!;
        const by = this.by[c]![k]!;
        const byAt = this.byAt[c]![k]!;
        const follow = followable(part) && by !== NONE && by !== g && byAt >= 0;
        if (follow && depth < PATH_MAX_DEPTH && budget.steps > 0) {
          budget.steps--;
          this.walk(by, byAt, s, e, depth + 1, out, others, budget, segments);
        } else {
          if (follow || --budget.steps < 0) out.truncated = true;
          add(part, e - s, s, this.stack[c]![k]!);
          if (part === PART_RUNNING && assists) out.gcAssistNanos += overlap(assists, s, e);
        }
      }
      if (t <= a) return;
      later = t;
      i = this.prev[c]![k]!;
    }
    // before the goroutine's first state in the trace
    add(PART_UNKNOWN, Math.min(later, b) - a, a, 0);
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
