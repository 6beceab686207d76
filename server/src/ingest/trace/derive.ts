import { IngestError } from '../errors.ts';
import type { Profile, ProfileKind } from '../../model/profile.ts';
import { ProfileBuilder } from '../../model/profile-builder.ts';
import { type Transition, eventStack } from './events.ts';
import { G_NOT_EXIST, G_RUNNABLE, G_RUNNING, G_SYSCALL, G_UNDETERMINED, G_WAITING } from './format.ts';
import type { Generation } from './generation.ts';
import type { OrderedEvent } from './order.ts';

/** The profiles an execution trace yields, as `go tool trace -pprof=KIND` names them. */
export const DERIVED_KINDS = ['net', 'sync', 'syscall', 'sched'] as const;
export type DerivedKind = (typeof DERIVED_KINDS)[number];

export function profileKindOf(k: DerivedKind): ProfileKind {
  return `trace-${k}`;
}

/**
 * Which spans of a goroutine's life each profile adds up, with the rules of `go tool trace -pprof`:
 * - net: time blocked on the network (Waiting, reason "network");
 * - sync: time blocked on channels, select and sync primitives (Waiting, reason containing "chan",
 *   "sync" or "select");
 * - syscall: time in system calls (Syscall);
 * - sched: time runnable but not running (Runnable), the scheduling delay.
 * A span opens when a goroutine enters the state (for a reason that counts) and closes when it
 * leaves it; the sample's stack is the stack of the event that opened it.
 */
const TRACKED: Record<DerivedKind, { state: number; counts: (reason: string) => boolean }> = {
  net: { state: G_WAITING, counts: (r) => r === 'network' },
  sync: { state: G_WAITING, counts: (r) => r.includes('chan') || r.includes('sync') || r.includes('select') },
  syscall: { state: G_SYSCALL, counts: () => true },
  sched: { state: G_RUNNABLE, counts: () => true },
};
/** Per kind (DERIVED_KINDS' order), the state its spans are spent in and the reasons that count. */
const STATE_OF = DERIVED_KINDS.map((k) => TRACKED[k].state);
const COUNTS = DERIVED_KINDS.map((k) => TRACKED[k].counts);

/**
 * A stack of one generation (Go's stack handle). Samples are keyed by `key`: the PCs as a
 * zero-padded array, as Go keys them, so stacks that differ only by trailing zero PCs are one sample.
 */
interface StackEntry {
  pcs: number[];
  key: string;
  /** Per PC, the frame the trace wrote first for it: function, file, line. */
  frames: { name: string; file: string; line: number }[];
}

interface Record_ {
  /** The stack the sample is written with: the handle of the latest span added to it (as Go keeps it). */
  stack: StackEntry;
  /** When that span closed (its order among all spans). */
  stackSeq: number;
  count: number;
  time: number;
}

interface Pending {
  kind: number;
  stack: StackEntry;
  from: number;
  to: number;
  seq: number;
}

/**
 * What the profiles need to know of a goroutine: when it first ran, when it ended, and per profile
 * kind the span open now (its start time and stack; NaN when none).
 */
interface GLife {
  start: number;
  end: number;
  /** False until a change of state named the goroutine (Go's summary has no entry for it before). */
  summarised: boolean;
  openTime: Float64Array;
  openStack: (StackEntry | null)[];
  /** Spans closed before the goroutine first ran: they count only if it never runs. */
  pending: Pending[] | null;
}

function newLife(): GLife {
  return {
    start: 0,
    end: 0,
    summarised: false,
    openTime: new Float64Array(DERIVED_KINDS.length).fill(Number.NaN),
    openStack: [null, null, null, null],
    pending: null,
  };
}

/**
 * Builds the four trace-derived profiles in one pass over the events, as `go tool trace -pprof`
 * computes them (cmd/trace's pprof.go): a span counts only for its overlap with the goroutine's
 * interval [first time it ran (0 if never), its end (or the trace's end)], so the wait between a
 * goroutine's creation and its first run is left out of the sched profile; a span of zero length
 * counts for nothing; stacks with the same PCs are one sample.
 */
export class DerivedProfiles {
  private readonly lives = new Map<number, GLife>();
  private readonly records: Map<string, Record_>[] = DERIVED_KINDS.map(() => new Map());
  private readonly noStack: StackEntry = { pcs: [], key: '', frames: [] };
  /** Spans closed so far: a span's number orders it among all. */
  private seq = 0;
  /** Per generation, stack id → entry, so each generation's stacks are resolved once. */
  private genStacks = new WeakMap<Generation, Map<number, StackEntry>>();
  private readonly pcFrames = new Map<number, { name: string; file: string; line: number }>();
  private handles = 0;

  constructor(private readonly maxStacks: number) {}

  /** Feeds a goroutine state transition (any, including ones that keep the state). */
  transition(e: OrderedEvent, t: Transition): void {
    const id = t.id;
    const time = e.time;
    let life = this.lives.get(id);
    if (!life) {
      life = newLife();
      this.lives.set(id, life);
    }
    // The goroutine's life, as Go's summarizer sees it (only changes of state count there).
    if (t.from !== t.to) {
      if (t.from === G_UNDETERMINED || t.from === G_NOT_EXIST || !life.summarised) {
        // a new summary: a first sight, a creation (or an id used again)
        life.start = 0;
        life.end = 0;
        life.pending = null;
        life.summarised = true;
      }
      if (t.to === G_RUNNING && life.start === 0) {
        life.start = time;
        life.pending = null; // it ran after them: they never count
      }
      if (t.to === G_NOT_EXIST || (t.to === G_WAITING && t.reason === 'forever')) life.end = time;
    }
    // Which spans this transition may open: decided once, not per profile kind.
    let opens = 0;
    for (let k = 0; k < DERIVED_KINDS.length; k++) if (t.to === STATE_OF[k] && COUNTS[k]!(t.reason)) opens |= 1 << k;
    for (let k = 0; k < DERIVED_KINDS.length; k++) {
      const from = life.openTime[k]!;
      if (Number.isNaN(from)) {
        if (opens & (1 << k)) {
          life.openTime[k] = time;
          life.openStack[k] = this.stackOf(e);
        }
        continue;
      }
      if (t.to === STATE_OF[k]) continue;
      const stack = life.openStack[k]!;
      life.openTime[k] = Number.NaN;
      life.openStack[k] = null;
      this.close(k, life, stack, from, time);
    }
    if (t.to === G_NOT_EXIST && t.from !== G_NOT_EXIST) this.retire(id, life);
  }

  private close(kind: number, life: GLife, stack: StackEntry, from: number, to: number): void {
    if (!life.summarised) return; // no summary of this goroutine: Go finds no interval for it
    const seq = ++this.seq;
    if (life.start === 0) {
      (life.pending ??= []).push({ kind, stack, from, to, seq });
      return;
    }
    this.add(kind, stack, overlap(life.start, life.end, from, to), seq);
  }

  /** A goroutine that ended: its spans waiting on its first run are settled now. */
  private retire(id: number, life: GLife): void {
    if (life.pending)
      for (const p of life.pending) this.add(p.kind, p.stack, overlap(0, life.end, p.from, p.to), p.seq);
    this.lives.delete(id);
  }

  private add(kind: number, stack: StackEntry, dur: number, seq: number): void {
    if (dur <= 0) return;
    const recs = this.records[kind]!;
    let r = recs.get(stack.key);
    if (!r) {
      r = { stack, stackSeq: seq, count: 0, time: 0 };
      recs.set(stack.key, r);
    } else if (seq > r.stackSeq) {
      r.stack = stack;
      r.stackSeq = seq;
    }
    r.count++;
    r.time += dur;
  }

  private stackOf(e: OrderedEvent): StackEntry {
    const id = eventStack(e);
    if (id === 0) return this.noStack;
    let cache = this.genStacks.get(e.gen);
    if (!cache) {
      cache = new Map();
      this.genStacks.set(e.gen, cache);
    }
    let entry = cache.get(id);
    if (entry) return entry;
    if (++this.handles > this.maxStacks)
      throw new IngestError('too-large', `the trace's profiles have more than ${this.maxStacks} stacks`);
    const pcs = e.gen.stacks.get(id) ?? [];
    let n = pcs.length;
    while (n > 0 && pcs[n - 1] === 0) n--;
    const frames = pcs.map((pc) => {
      let f = this.pcFrames.get(pc);
      if (!f) {
        const w = e.gen.frames.get(pc)!;
        f = {
          name: w.fn === 0 ? '' : (e.gen.strings.get(w.fn) ?? ''),
          file: w.file === 0 ? '' : (e.gen.strings.get(w.file) ?? ''),
          line: w.line,
        };
        this.pcFrames.set(pc, f);
      }
      return f;
    });
    entry = { pcs, key: pcs.slice(0, n).join(','), frames };
    cache.set(id, entry);
    return entry;
  }

  /**
   * The profiles, once every event was fed; `endTime` is the time of the trace's last event (the end
   * of a goroutine still alive), `startTime` its first: a profile's duration is the trace's span.
   */
  finish(startTime: number, endTime: number): Record<DerivedKind, Profile> {
    for (const life of this.lives.values()) {
      if (!life.pending || !life.summarised) continue;
      for (const p of life.pending) this.add(p.kind, p.stack, overlap(0, life.end, p.from, p.to, endTime), p.seq);
    }
    this.lives.clear();
    const out = {} as Record<DerivedKind, Profile>;
    DERIVED_KINDS.forEach((k, i) => {
      out[k] = buildProfile(this.records[i]!, profileKindOf(k), endTime - startTime);
    });
    return out;
  }
}

/** Overlap of a span [from, to] with a goroutine's interval [start, end || traceEnd], in ns. */
function overlap(start: number, end: number, from: number, to: number, traceEnd = Number.POSITIVE_INFINITY): number {
  const gEnd = end === 0 ? traceEnd : end;
  if (gEnd < from || to < start) return 0;
  return Math.min(gEnd, to) - Math.max(start, from);
}

/**
 * The profile `go tool trace -pprof` writes: sample types contentions/count and delay/nanoseconds,
 * period type trace/count, one sample per distinct stack, a location per PC (named by the frame the
 * trace wrote first for that PC; `<unknown>` when it names no function, as pprof prints it).
 */
function buildProfile(records: Map<string, Record_>, kind: ProfileKind, durationNanos: number): Profile {
  const b = new ProfileBuilder('pprof', [
    { type: 'contentions', unit: 'count' },
    { type: 'delay', unit: 'nanoseconds' },
  ]);
  const pcIds = new Map<number, number>();
  const functions = new Set<string>();
  for (const r of records.values()) {
    const ids = r.stack.pcs.map((pc, i) => {
      let id = pcIds.get(pc);
      if (id === undefined) {
        const f = r.stack.frames[i]!;
        // A PC the trace names no function for: go tool trace writes a function of empty name, which
        // pprof prints as `<unknown>` (its profile has no mapping to name instead).
        id =
          f.name === ''
            ? b.frameId('<unknown>', f.file, f.line, { standIn: 'no-name' })
            : b.frameId(f.name, f.file, f.line);
        pcIds.set(pc, id);
        functions.add(`${f.file}\u0000${f.name}`);
      }
      return id;
    });
    b.addSample(ids, [r.count, r.time]);
  }
  const p = b.build({
    periodType: { type: 'trace', unit: 'count' },
    period: 1,
    durationNanos,
    stats: { numSamples: records.size, numLocations: pcIds.size, numFunctions: functions.size, numMappings: 0 },
  });
  p.kind = kind;
  return p;
}
