import { IngestError } from '../errors.ts';
import {
  EV_GC_ACTIVE,
  EV_GC_BEGIN,
  EV_GC_END,
  EV_GC_MARK_ASSIST_ACTIVE,
  EV_GC_MARK_ASSIST_BEGIN,
  EV_GC_MARK_ASSIST_END,
  EV_GC_SWEEP_ACTIVE,
  EV_GC_SWEEP_BEGIN,
  EV_GC_SWEEP_END,
  EV_GO_BLOCK,
  EV_GO_CREATE,
  EV_GO_CREATE_BLOCKED,
  EV_GO_CREATE_SYSCALL,
  EV_GO_DESTROY,
  EV_GO_DESTROY_SYSCALL,
  EV_GO_LABEL,
  EV_GO_START,
  EV_GO_STATUS,
  EV_GO_STATUS_STACK,
  EV_GO_STOP,
  EV_GO_SWITCH,
  EV_GO_SWITCH_DESTROY,
  EV_GO_SYSCALL_BEGIN,
  EV_GO_SYSCALL_END,
  EV_GO_SYSCALL_END_BLOCKED,
  EV_GO_UNBLOCK,
  EV_HEAP_ALLOC,
  EV_HEAP_GOAL,
  EV_PROC_START,
  EV_PROC_STATUS,
  EV_PROC_STEAL,
  EV_PROC_STOP,
  EV_PROCS_CHANGE,
  EV_STW_BEGIN,
  EV_STW_END,
  EV_USER_LOG,
  EV_USER_REGION_BEGIN,
  EV_USER_REGION_END,
  EV_USER_TASK_BEGIN,
  EV_USER_TASK_END,
  EVENT_NAMES,
  EV_FIRST_EXPERIMENTAL,
  EV_LAST_EXPERIMENTAL,
  G_UNDETERMINED,
  NONE,
  asId,
  P_NOT_EXIST,
  P_RUNNING,
  P_IDLE,
  P_UNDETERMINED,
  WIRE_GO_RUNNABLE,
  WIRE_GO_RUNNING,
  WIRE_GO_SYSCALL,
  WIRE_GO_TO_STATE,
  WIRE_GO_WAITING,
  WIRE_P_IDLE,
  WIRE_P_RUNNING,
  WIRE_P_SYSCALL,
  WIRE_P_SYSCALL_ABANDONED,
  WIRE_P_TO_STATE,
} from './format.ts';
import type { Generation } from './generation.ts';

/**
 * An event in the order the trace's partial order allows, with its execution context (the goroutine,
 * proc and thread it happened on, as they were *before* the event) and the generation whose tables
 * resolve its string and stack ids. `args` are the wire arguments after the timestamp delta; the
 * ordering stores what the consumer needs but the wire lacks in free slots (an old state, a range's
 * kind), as documented per event type in `transition` (reader.ts).
 */
export interface OrderedEvent {
  type: number;
  time: number;
  args: [number, number, number, number];
  g: number;
  p: number;
  m: number;
  gen: Generation;
  /** For STWEnd: the kind of the range it ends, resolved when it began (ids are per generation). */
  text?: string;
}

/** A raw event read from a thread's batch: type, time (ns) and arguments. */
export interface BaseEvent {
  type: number;
  time: number;
  args: [number, number, number, number];
}

interface SeqCounter {
  gen: number;
  seq: number;
}

/** A time range in flight on a goroutine or proc: the type of its begin event and its kind. */
interface RangeKey {
  type: number;
  desc: number;
  text: string;
}

interface GState {
  status: number;
  seq: SeqCounter;
  regions: { task: number; name: string }[];
  ranges: RangeKey[];
}

interface PState {
  status: number;
  seq: SeqCounter;
  ranges: RangeKey[];
}

interface MState {
  g: number;
  p: number;
}

const MUST_NOT = 0;
const MAY = 1;
const MUST = 2;

const GC_UNDETERMINED = 0;
const GC_NOT_RUNNING = 1;
const GC_RUNNING = 2;

/** The begin event type a range's end (or active) event belongs to. */
function rangeStart(type: number): number {
  switch (type) {
    case EV_STW_END:
      return EV_STW_BEGIN;
    case EV_GC_SWEEP_ACTIVE:
    case EV_GC_SWEEP_END:
      return EV_GC_SWEEP_BEGIN;
    case EV_GC_MARK_ASSIST_ACTIVE:
    case EV_GC_MARK_ASSIST_END:
      return EV_GC_MARK_ASSIST_BEGIN;
    default:
      return type;
  }
}

function broken(message: string): IngestError {
  return new IngestError('malformed', `broken trace: ${message}`);
}

function succeeds(a: SeqCounter, b: SeqCounter): boolean {
  return a.gen === b.gen && a.seq === b.seq + 1;
}

/**
 * The scheduler model behind the trace's partial order. Each thread writes its own stream; events of
 * different threads are ordered only by sequence numbers on goroutines and procs and by the state
 * each event requires (a goroutine must be runnable to start, a proc idle to be acquired, …).
 * `advance` tries one thread's next event against the current state: when the event may happen now
 * it updates the state, queues the event (sometimes with events it implies) and returns true; when it
 * must wait for another thread it returns false; when it can never happen the trace is broken and
 * it throws. This follows the Go trace reader's rules, so events come out in the same order.
 */
export class Ordering {
  private readonly gStates = new Map<number, GState>();
  private readonly pStates = new Map<number, PState>();
  private readonly mStates = new Map<number, MState>();
  private readonly activeTasks = new Map<number, { name: string; parent: number }>();
  private gcSeq = 0;
  private gcState = GC_UNDETERMINED;
  private initialGen = 0;
  /**
   * Events ready to be consumed, oldest first: slots [head, tail) of `slots`. A slot is reused once
   * consumed, so an event returned by `next` is valid until the next call to `advance`.
   */
  private readonly slots: OrderedEvent[] = [];
  private head = 0;
  private tail = 0;
  // The context of the event being advanced (as it was before the event, which handlers may point
  // at another thread), and the context its thread has after it.
  private cG = NONE;
  private cP = NONE;
  private cM = NONE;
  private nG = NONE;
  private nP = NONE;

  constructor(private readonly maxStates: number) {}

  next(): OrderedEvent | undefined {
    if (this.head === this.tail) {
      this.head = 0;
      this.tail = 0;
      return undefined;
    }
    return this.slots[this.head++];
  }

  private slot(): OrderedEvent {
    let e = this.slots[this.tail];
    if (!e) {
      e = { type: 0, time: 0, args: [0, 0, 0, 0], g: NONE, p: NONE, m: NONE, gen: undefined as unknown as Generation };
      this.slots.push(e);
    }
    this.tail++;
    return e;
  }

  /** Goroutines, procs and threads whose state is tracked now (bounded by `maxStates`). */
  get stateCount(): number {
    return this.gStates.size + this.pStates.size + this.mStates.size;
  }

  /** Queues `ev` in the current context. */
  private push(ev: BaseEvent, gen: Generation, text?: string): void {
    const e = this.slot();
    e.type = ev.type;
    e.time = ev.time;
    e.args[0] = ev.args[0];
    e.args[1] = ev.args[1];
    e.args[2] = ev.args[2];
    e.args[3] = ev.args[3];
    e.g = this.cG;
    e.p = this.cP;
    e.m = this.cM;
    e.gen = gen;
    e.text = text;
  }

  /** Queues an event the trace implies but does not write, in context (g, current p and m). */
  private make(type: number, time: number, gen: Generation, g: number, a0 = 0, a1 = 0, a2 = 0, a3 = 0): void {
    const e = this.slot();
    e.type = type;
    e.time = time;
    e.args[0] = a0;
    e.args[1] = a1;
    e.args[2] = a2;
    e.args[3] = a3;
    e.g = g;
    e.p = this.cP;
    e.m = this.cM;
    e.gen = gen;
    e.text = undefined;
  }

  /** Checks the current context has (MUST), may have (MAY) or has not (MUST_NOT) a thread, proc, goroutine. */
  private validate(m: number, p: number, g: number): void {
    if (m === MUST && this.cM === NONE) throw broken("expected a thread but didn't have one");
    if (m === MUST_NOT && this.cM !== NONE) throw broken('expected no thread but had one');
    if (p === MUST && this.cP === NONE) throw broken("expected a proc but didn't have one");
    if (p === MUST_NOT && this.cP !== NONE) throw broken('expected no proc but had one');
    if (g === MUST && this.cG === NONE) throw broken("expected a goroutine but didn't have one");
    if (g === MUST_NOT && this.cG !== NONE) throw broken('expected no goroutine but had one');
  }

  private checkStates(): void {
    if (this.gStates.size + this.pStates.size + this.mStates.size > this.maxStates) {
      throw new IngestError(
        'too-large',
        `the trace tracks more than ${this.maxStates} goroutines, procs and threads at once (TRACE_MAX_STATES)`,
      );
    }
  }

  /** Tries `ev` from thread `m` in generation `gen`; see the class comment. */
  advance(ev: BaseEvent, gen: Generation, m: number): boolean {
    if (this.initialGen === 0) this.initialGen = gen.gen;
    let ms: MState | undefined;
    this.cM = m;
    this.cG = NONE;
    this.cP = NONE;
    if (m !== NONE) {
      ms = this.mStates.get(m);
      if (!ms) {
        ms = { g: NONE, p: NONE };
        this.mStates.set(m, ms);
        this.checkStates();
      }
      this.cP = ms.p;
      this.cG = ms.g;
    }
    this.nG = this.cG;
    this.nP = this.cP;
    const tail = this.tail;
    if (!this.dispatch(ev, gen)) {
      this.tail = tail;
      return false;
    }
    if (ms) {
      ms.p = this.nP;
      ms.g = this.nG;
    }
    return true;
  }

  private dispatch(ev: BaseEvent, gen: Generation): boolean {
    const t = ev.type;
    switch (t) {
      case EV_PROCS_CHANGE:
      case EV_GO_LABEL:
      case EV_USER_LOG:
        return this.annotation(ev, gen);
      case EV_PROC_START:
        return this.procStart(ev, gen);
      case EV_PROC_STOP:
        return this.procStop(ev, gen);
      case EV_PROC_STEAL:
        return this.procSteal(ev, gen);
      case EV_PROC_STATUS:
        return this.procStatus(ev, gen);
      case EV_GO_CREATE:
      case EV_GO_CREATE_BLOCKED:
        return this.goCreate(ev, gen);
      case EV_GO_CREATE_SYSCALL:
        return this.goCreateSyscall(ev, gen);
      case EV_GO_START:
        return this.goStart(ev, gen);
      case EV_GO_DESTROY:
      case EV_GO_STOP:
      case EV_GO_BLOCK:
        return this.goStopExec(ev, gen);
      case EV_GO_DESTROY_SYSCALL:
        return this.goDestroySyscall(ev, gen);
      case EV_GO_UNBLOCK:
        return this.goUnblock(ev, gen);
      case EV_GO_SYSCALL_BEGIN:
        return this.goSyscallBegin(ev, gen);
      case EV_GO_SYSCALL_END:
        return this.goSyscallEnd(ev, gen);
      case EV_GO_SYSCALL_END_BLOCKED:
        return this.goSyscallEndBlocked(ev, gen);
      case EV_GO_STATUS:
      case EV_GO_STATUS_STACK:
        return this.goStatus(ev, gen);
      case EV_STW_BEGIN:
      case EV_GC_MARK_ASSIST_BEGIN:
        return this.goRangeBegin(ev, gen);
      case EV_STW_END:
      case EV_GC_MARK_ASSIST_END:
        return this.goRangeEnd(ev, gen);
      case EV_GC_MARK_ASSIST_ACTIVE:
        return this.goRangeActive(ev, gen);
      case EV_GC_ACTIVE:
        return this.gcActive(ev, gen);
      case EV_GC_BEGIN:
        return this.gcBegin(ev, gen);
      case EV_GC_END:
        return this.gcEnd(ev, gen);
      case EV_GC_SWEEP_ACTIVE:
        return this.sweepActive(ev, gen);
      case EV_GC_SWEEP_BEGIN:
        return this.sweepBegin(ev, gen);
      case EV_GC_SWEEP_END:
        return this.sweepEnd(ev, gen);
      case EV_HEAP_ALLOC:
      case EV_HEAP_GOAL:
        return this.heapMetric(ev, gen);
      case EV_USER_TASK_BEGIN:
        return this.taskBegin(ev, gen);
      case EV_USER_TASK_END:
        return this.taskEnd(ev, gen);
      case EV_USER_REGION_BEGIN:
        return this.regionBegin(ev, gen);
      case EV_USER_REGION_END:
        return this.regionEnd(ev, gen);
      case EV_GO_SWITCH:
      case EV_GO_SWITCH_DESTROY:
        return this.goSwitch(ev, gen);
      default:
        if (t >= EV_FIRST_EXPERIMENTAL && t <= EV_LAST_EXPERIMENTAL) {
          this.validate(MUST, MAY, MAY);
          this.push(ev, gen);
          return true;
        }
        throw broken(`bad event type ${t} found while ordering`);
    }
  }

  private procStatus(ev: BaseEvent, gen: Generation): boolean {
    const pid = asId(ev.args[0]);
    const status = ev.args[1];
    if (status >= WIRE_P_TO_STATE.length) throw broken(`invalid status for proc ${pid}: ${status}`);
    let oldState = WIRE_P_TO_STATE[status]!;
    const s = this.pStates.get(pid);
    if (s) {
      if (status === WIRE_P_SYSCALL_ABANDONED && s.status === WIRE_P_SYSCALL) {
        // Already known to be in a syscall: nothing was lost; reported as running → running.
        oldState = P_RUNNING;
        ev.args[1] = WIRE_P_SYSCALL;
      } else if (status === WIRE_P_SYSCALL_ABANDONED && s.status === WIRE_P_SYSCALL_ABANDONED) {
        oldState = P_IDLE;
        ev.args[1] = WIRE_P_SYSCALL_ABANDONED;
      } else if (s.status !== status) {
        throw broken(`inconsistent status for proc ${pid}: old ${s.status} vs. new ${status}`);
      }
      s.seq = { gen: gen.gen, seq: 0 };
    } else {
      this.pStates.set(pid, { status, seq: { gen: gen.gen, seq: 0 }, ranges: [] });
      this.checkStates();
      oldState = gen.gen === this.initialGen ? P_UNDETERMINED : P_NOT_EXIST;
    }
    ev.args[2] = oldState; // the old state, for the transition
    if (status === WIRE_P_RUNNING || status === WIRE_P_SYSCALL) this.nP = pid;
    // Passing through an abandoned syscall that was promoted: the P is about to be stolen, so the
    // status belongs to the thread it is bound to, which may not be this one.
    if (status === WIRE_P_SYSCALL_ABANDONED && oldState === P_RUNNING) {
      let found = false;
      for (const [mid, st] of this.mStates) {
        if (st.p === pid) {
          this.cM = mid;
          this.cP = pid;
          this.cG = st.g;
          found = true;
        }
      }
      if (!found) throw broken(`failed to find sched context for proc ${pid} that's about to be stolen`);
    }
    this.push(ev, gen);
    return true;
  }

  private procStart(ev: BaseEvent, gen: Generation): boolean {
    const pid = asId(ev.args[0]);
    const seq = { gen: gen.gen, seq: ev.args[1] };
    const state = this.pStates.get(pid);
    if (!state || state.status !== WIRE_P_IDLE || !succeeds(seq, state.seq) || this.cP !== NONE) return false;
    this.validate(MUST, MUST_NOT, MAY);
    state.status = WIRE_P_RUNNING;
    state.seq = seq;
    this.push(ev, gen);
    this.nP = pid;
    return true;
  }

  private procStop(ev: BaseEvent, gen: Generation): boolean {
    const state = this.pStates.get(this.cP);
    if (!state) throw broken(`event ${EVENT_NAMES[ev.type]} for proc (${this.cP}) that doesn't exist`);
    if (state.status !== WIRE_P_RUNNING && state.status !== WIRE_P_SYSCALL)
      throw broken(`${EVENT_NAMES[ev.type]} event for proc that's not Running or Syscall`);
    this.validate(MUST, MUST, MAY);
    state.status = WIRE_P_IDLE;
    this.push(ev, gen);
    this.nP = NONE;
    return true;
  }

  private procSteal(ev: BaseEvent, gen: Generation): boolean {
    const pid = asId(ev.args[0]);
    const seq = { gen: gen.gen, seq: ev.args[1] };
    const state = this.pStates.get(pid);
    if (
      !state ||
      (state.status !== WIRE_P_SYSCALL && state.status !== WIRE_P_SYSCALL_ABANDONED) ||
      !succeeds(seq, state.seq)
    )
      return false;
    this.validate(MUST, MAY, MAY);
    const oldStatus = state.status;
    ev.args[3] = oldStatus; // what the P was in, for the transition
    state.status = WIRE_P_IDLE;
    state.seq = seq;
    if (oldStatus === WIRE_P_SYSCALL_ABANDONED) {
      this.push(ev, gen);
      return true;
    }
    const mid = asId(ev.args[2]);
    if (mid === this.cM) {
      if (this.cP !== pid)
        throw broken(`tried to self-steal proc ${pid} (thread ${mid}), but got proc ${this.cP} instead`);
      this.push(ev, gen);
      this.nP = NONE;
      return true;
    }
    const from = this.mStates.get(mid);
    if (!from) throw broken(`stole proc from non-existent thread ${mid}`);
    if (from.p !== pid) throw broken(`tried to steal proc ${pid} from thread ${mid}, but got proc ${from.p} instead`);
    from.p = NONE;
    this.push(ev, gen);
    return true;
  }

  private goStatus(ev: BaseEvent, gen: Generation): boolean {
    const gid = asId(ev.args[0]);
    const mid = asId(ev.args[1]);
    const status = ev.args[2];
    if (status >= WIRE_GO_TO_STATE.length) throw broken(`invalid status for goroutine ${gid}: ${status}`);
    let oldState = WIRE_GO_TO_STATE[status]!;
    const s = this.gStates.get(gid);
    if (s) {
      if (s.status !== status)
        throw broken(`inconsistent status for goroutine ${gid}: old ${s.status} vs. new ${status}`);
      s.seq = { gen: gen.gen, seq: 0 };
    } else if (gen.gen === this.initialGen) {
      this.gStates.set(gid, { status, seq: { gen: gen.gen, seq: 0 }, regions: [], ranges: [] });
      this.checkStates();
      oldState = G_UNDETERMINED;
    } else {
      throw broken(`found goroutine status for new goroutine after the first generation: id=${gid} status=${status}`);
    }
    // The old state rides in the status argument's high bits, for the transition.
    ev.args[2] = oldState * 2 ** 32 + status;
    if (status === WIRE_GO_RUNNING) {
      this.nG = gid;
    } else if (status === WIRE_GO_SYSCALL) {
      if (mid === NONE) throw broken(`found goroutine ${gid} in syscall without a thread`);
      if (mid === this.cM) {
        if (gen.gen !== this.initialGen && this.cG !== gid)
          throw broken(`inconsistent thread for syscalling goroutine ${gid}: thread has goroutine ${this.cG}`);
        this.nG = gid;
      } else {
        const ms = this.mStates.get(mid);
        if (ms) {
          if (ms.g !== gid)
            throw broken(`inconsistent thread for syscalling goroutine ${gid}: thread has goroutine ${ms.g}`);
          this.cG = ms.g;
        } else {
          this.mStates.set(mid, { g: gid, p: NONE });
          this.checkStates();
        }
        this.cM = mid;
      }
    }
    this.push(ev, gen);
    return true;
  }

  private goCreate(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MAY);
    const creator = this.gStates.get(this.cG);
    if (creator && creator.status !== WIRE_GO_RUNNING)
      throw broken(`${EVENT_NAMES[ev.type]} event for goroutine that's not Running`);
    const id = asId(ev.args[0]);
    if (this.gStates.has(id)) throw broken(`tried to create goroutine (${id}) that already exists`);
    const status = ev.type === EV_GO_CREATE_BLOCKED ? WIRE_GO_WAITING : WIRE_GO_RUNNABLE;
    this.gStates.set(id, { status, seq: { gen: gen.gen, seq: 0 }, regions: [], ranges: [] });
    this.checkStates();
    this.push(ev, gen);
    return true;
  }

  private runningG(ev: BaseEvent): GState {
    this.validate(MUST, MUST, MUST);
    const state = this.gStates.get(this.cG);
    if (!state) throw broken(`event ${EVENT_NAMES[ev.type]} for goroutine (${this.cG}) that doesn't exist`);
    if (state.status !== WIRE_GO_RUNNING)
      throw broken(`${EVENT_NAMES[ev.type]} event for goroutine that's not Running`);
    return state;
  }

  private goStopExec(ev: BaseEvent, gen: Generation): boolean {
    const state = this.runningG(ev);
    if (ev.type === EV_GO_DESTROY) this.gStates.delete(this.cG);
    else if (ev.type === EV_GO_STOP) state.status = WIRE_GO_RUNNABLE;
    else state.status = WIRE_GO_WAITING;
    this.push(ev, gen);
    this.nG = NONE;
    return true;
  }

  private goStart(ev: BaseEvent, gen: Generation): boolean {
    const gid = asId(ev.args[0]);
    const seq = { gen: gen.gen, seq: ev.args[1] };
    const state = this.gStates.get(gid);
    if (!state || state.status !== WIRE_GO_RUNNABLE || !succeeds(seq, state.seq)) return false;
    this.validate(MUST, MUST, MUST_NOT);
    state.status = WIRE_GO_RUNNING;
    state.seq = seq;
    this.push(ev, gen);
    this.nG = gid;
    return true;
  }

  private goUnblock(ev: BaseEvent, gen: Generation): boolean {
    const gid = asId(ev.args[0]);
    const seq = { gen: gen.gen, seq: ev.args[1] };
    const state = this.gStates.get(gid);
    if (!state || state.status !== WIRE_GO_WAITING || !succeeds(seq, state.seq)) return false;
    state.status = WIRE_GO_RUNNABLE;
    state.seq = seq;
    this.push(ev, gen);
    return true;
  }

  private goSwitch(ev: BaseEvent, gen: Generation): boolean {
    const curState = this.runningG(ev);
    const nextG = asId(ev.args[0]);
    const seq = { gen: gen.gen, seq: ev.args[1] };
    const nextState = this.gStates.get(nextG);
    if (!nextState || nextState.status !== WIRE_GO_WAITING || !succeeds(seq, nextState.seq)) return false;
    this.push(ev, gen);
    // A switch is three events: the next goroutine is unblocked (the switch itself), the current one
    // blocks or exits, the next one starts on this thread.
    if (ev.type === EV_GO_SWITCH) {
      curState.status = WIRE_GO_WAITING;
      this.make(EV_GO_BLOCK, ev.time, gen, this.cG, 0, 0);
    } else {
      this.gStates.delete(this.cG);
      this.make(EV_GO_DESTROY, ev.time, gen, this.cG);
    }
    nextState.status = WIRE_GO_RUNNING;
    nextState.seq = seq;
    this.make(EV_GO_START, ev.time, gen, NONE, nextG, ev.args[1]);
    this.nG = nextG;
    return true;
  }

  private goSyscallBegin(ev: BaseEvent, gen: Generation): boolean {
    const state = this.runningG(ev);
    state.status = WIRE_GO_SYSCALL;
    const ps = this.pStates.get(this.cP);
    if (!ps) throw broken(`uninitialized proc ${this.cP} found during ${EVENT_NAMES[ev.type]}`);
    ps.status = WIRE_P_SYSCALL;
    const pSeq = { gen: gen.gen, seq: ev.args[0] };
    if (!succeeds(pSeq, ps.seq))
      throw broken(`failed to advance ${EVENT_NAMES[ev.type]}: can't make sequence: ${ps.seq.seq} -> ${pSeq.seq}`);
    ps.seq = pSeq;
    this.push(ev, gen);
    return true;
  }

  private goSyscallEnd(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MUST);
    const state = this.gStates.get(this.cG);
    if (!state) throw broken(`event ${EVENT_NAMES[ev.type]} for goroutine (${this.cG}) that doesn't exist`);
    if (state.status !== WIRE_GO_SYSCALL)
      throw broken(`${EVENT_NAMES[ev.type]} event for goroutine that's not Running`);
    state.status = WIRE_GO_RUNNING;
    const ps = this.pStates.get(this.cP);
    if (!ps) throw broken(`uninitialized proc ${this.cP} found during ${EVENT_NAMES[ev.type]}`);
    if (ps.status !== WIRE_P_SYSCALL)
      throw broken(`expected proc ${this.cP} in state Syscall, but got ${ps.status} instead`);
    ps.status = WIRE_P_RUNNING;
    this.push(ev, gen);
    return true;
  }

  private goSyscallEndBlocked(ev: BaseEvent, gen: Generation): boolean {
    // Waits while this thread still holds a P in the syscall state: it is known to lose it first.
    if (this.cP !== NONE) {
      const ps = this.pStates.get(this.cP);
      if (!ps) throw broken(`uninitialized proc ${this.cP} found during ${EVENT_NAMES[ev.type]}`);
      if (ps.status === WIRE_P_SYSCALL) return false;
    }
    this.validate(MUST, MAY, MUST);
    const state = this.gStates.get(this.cG);
    if (!state) throw broken(`event ${EVENT_NAMES[ev.type]} for goroutine (${this.cG}) that doesn't exist`);
    if (state.status !== WIRE_GO_SYSCALL)
      throw broken(`${EVENT_NAMES[ev.type]} event for goroutine that's not Running`);
    state.status = WIRE_GO_RUNNABLE;
    this.push(ev, gen);
    this.nG = NONE;
    return true;
  }

  private goCreateSyscall(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MAY, MUST_NOT);
    const id = asId(ev.args[0]);
    if (this.gStates.has(id)) throw broken(`tried to create goroutine (${id}) in syscall that already exists`);
    this.gStates.set(id, { status: WIRE_GO_SYSCALL, seq: { gen: gen.gen, seq: 0 }, regions: [], ranges: [] });
    this.checkStates();
    this.push(ev, gen);
    this.nG = id;
    return true;
  }

  private goDestroySyscall(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MAY, MUST);
    const state = this.gStates.get(this.cG);
    if (!state) throw broken(`event ${EVENT_NAMES[ev.type]} for goroutine (${this.cG}) that doesn't exist`);
    if (state.status !== WIRE_GO_SYSCALL)
      throw broken(`${EVENT_NAMES[ev.type]} event for goroutine that's not Syscall`);
    this.gStates.delete(this.cG);
    this.nG = NONE;
    if (this.cP !== NONE) {
      // The thread may be reused by the platform: the P is dissociated now, as a self-steal.
      const ps = this.pStates.get(this.cP);
      if (!ps) throw broken(`found invalid proc ${this.cP} during ${EVENT_NAMES[ev.type]}`);
      if (ps.status !== WIRE_P_SYSCALL)
        throw broken(`proc ${this.cP} in unexpected state ${ps.status} during ${EVENT_NAMES[ev.type]}`);
      ps.status = WIRE_P_SYSCALL_ABANDONED;
      this.nP = NONE;
      this.make(EV_PROC_STEAL, ev.time, gen, this.cG, this.cP, 0, 0, WIRE_P_SYSCALL);
    }
    this.push(ev, gen);
    return true;
  }

  private taskBegin(ev: BaseEvent, gen: Generation): boolean {
    const id = ev.args[0];
    if (this.activeTasks.has(id)) throw broken(`task ID conflict: ${id}`);
    const name = gen.strings.get(ev.args[2]);
    if (name === undefined && ev.args[2] !== 0) throw broken(`invalid string ID ${ev.args[2]} for UserTaskBegin event`);
    this.activeTasks.set(id, { name: name ?? '', parent: ev.args[1] });
    if (this.activeTasks.size > this.maxStates)
      throw new IngestError(
        'too-large',
        `the trace has more than ${this.maxStates} tasks in flight (TRACE_MAX_STATES)`,
      );
    this.validate(MUST, MUST, MUST);
    this.push(ev, gen);
    return true;
  }

  private taskEnd(ev: BaseEvent, gen: Generation): boolean {
    this.activeTasks.delete(ev.args[0]);
    this.validate(MUST, MUST, MUST);
    this.push(ev, gen);
    return true;
  }

  private region(ev: BaseEvent, gen: Generation, begin: boolean): boolean {
    this.validate(MUST, MUST, MUST);
    const name = gen.strings.get(ev.args[1]);
    if (name === undefined && ev.args[1] !== 0)
      throw broken(`invalid string ID ${ev.args[1]} for ${EVENT_NAMES[ev.type]} event`);
    const g = this.gStates.get(this.cG);
    if (!g) throw broken(`encountered ${EVENT_NAMES[ev.type]} without known state for current goroutine ${this.cG}`);
    const r = { task: ev.args[0], name: name ?? '' };
    if (begin) {
      g.regions.push(r);
      if (g.regions.length > 10_000)
        throw new IngestError('too-large', `goroutine ${this.cG} has over 10000 nested regions`);
    } else if (g.regions.length > 0) {
      const top = g.regions[g.regions.length - 1]!;
      if (top.task !== r.task || top.name !== r.name)
        throw broken(`misuse of region in goroutine ${this.cG}: region end does not match the innermost active region`);
      g.regions.pop();
    }
    this.push(ev, gen);
    return true;
  }

  private regionBegin(ev: BaseEvent, gen: Generation): boolean {
    return this.region(ev, gen, true);
  }

  private regionEnd(ev: BaseEvent, gen: Generation): boolean {
    return this.region(ev, gen, false);
  }

  private gcActive(ev: BaseEvent, gen: Generation): boolean {
    const seq = ev.args[0];
    if (gen.gen === this.initialGen) {
      if (this.gcState !== GC_UNDETERMINED) throw broken("GCActive in the first generation isn't first GC event");
      this.gcSeq = seq;
      this.gcState = GC_RUNNING;
      this.push(ev, gen);
      return true;
    }
    if (seq !== this.gcSeq + 1) return false;
    if (this.gcState !== GC_RUNNING) throw broken('encountered GCActive while GC was not in progress');
    this.gcSeq = seq;
    this.validate(MUST, MUST, MUST);
    this.push(ev, gen);
    return true;
  }

  private gcBegin(ev: BaseEvent, gen: Generation): boolean {
    const seq = ev.args[0];
    if (this.gcState === GC_UNDETERMINED) {
      this.gcSeq = seq;
      this.gcState = GC_RUNNING;
      this.push(ev, gen);
      return true;
    }
    if (seq !== this.gcSeq + 1) return false;
    if (this.gcState === GC_RUNNING) throw broken('encountered GCBegin while GC was already in progress');
    this.gcSeq = seq;
    this.gcState = GC_RUNNING;
    this.validate(MUST, MUST, MUST);
    this.push(ev, gen);
    return true;
  }

  private gcEnd(ev: BaseEvent, gen: Generation): boolean {
    const seq = ev.args[0];
    if (seq !== this.gcSeq + 1) return false;
    if (this.gcState === GC_NOT_RUNNING) throw broken('encountered GCEnd when GC was not in progress');
    if (this.gcState === GC_UNDETERMINED) throw broken('encountered GCEnd when GC was in an undetermined state');
    this.gcSeq = seq;
    this.gcState = GC_NOT_RUNNING;
    this.validate(MUST, MUST, MUST);
    this.push(ev, gen);
    return true;
  }

  private annotation(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MUST);
    this.push(ev, gen);
    return true;
  }

  private heapMetric(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MAY);
    this.push(ev, gen);
    return true;
  }

  private sweepBegin(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MAY);
    const ps = this.pStates.get(this.cP);
    if (!ps) throw broken(`uninitialized proc ${this.cP} found during ${EVENT_NAMES[ev.type]}`);
    beginRange(ps.ranges, { type: EV_GC_SWEEP_BEGIN, desc: 0, text: '' });
    this.push(ev, gen);
    return true;
  }

  private sweepActive(ev: BaseEvent, gen: Generation): boolean {
    const pid = asId(ev.args[0]);
    const ps = this.pStates.get(pid);
    if (!ps) throw broken(`encountered GCSweepActive for unknown proc ${pid}`);
    activeRange(ps.ranges, { type: EV_GC_SWEEP_BEGIN, desc: 0, text: '' }, gen.gen === this.initialGen);
    this.push(ev, gen);
    return true;
  }

  private sweepEnd(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MAY);
    const ps = this.pStates.get(this.cP);
    if (!ps) throw broken(`uninitialized proc ${this.cP} found during ${EVENT_NAMES[ev.type]}`);
    endRange(ps.ranges, ev.type);
    this.push(ev, gen);
    return true;
  }

  private goRangeBegin(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MUST);
    const desc = ev.type === EV_STW_BEGIN ? ev.args[0] : 0;
    const g = this.gStates.get(this.cG);
    if (!g) throw broken(`encountered event of type ${ev.type} without known state for current goroutine ${this.cG}`);
    const text = ev.type === EV_STW_BEGIN ? (gen.strings.get(desc) ?? '') : '';
    beginRange(g.ranges, { type: ev.type, desc, text });
    this.push(ev, gen);
    return true;
  }

  private goRangeActive(ev: BaseEvent, gen: Generation): boolean {
    const gid = asId(ev.args[0]);
    const g = this.gStates.get(gid);
    if (!g) throw broken(`uninitialized goroutine ${gid} found during ${EVENT_NAMES[ev.type]}`);
    activeRange(g.ranges, { type: rangeStart(ev.type), desc: 0, text: '' }, gen.gen === this.initialGen);
    this.push(ev, gen);
    return true;
  }

  private goRangeEnd(ev: BaseEvent, gen: Generation): boolean {
    this.validate(MUST, MUST, MUST);
    const g = this.gStates.get(this.cG);
    if (!g) throw broken(`encountered event of type ${ev.type} without known state for current goroutine ${this.cG}`);
    const ended = endRange(g.ranges, ev.type);
    if (ev.type === EV_STW_END) {
      ev.args[0] = ended.desc;
      this.push(ev, gen, ended.text);
    } else {
      this.push(ev, gen);
    }
    return true;
  }
}

function beginRange(ranges: RangeKey[], r: RangeKey): void {
  if (ranges.some((x) => x.type === r.type && x.desc === r.desc))
    throw broken(`discovered event already in-flight for when starting event ${EVENT_NAMES[r.type]}`);
  ranges.push(r);
}

function activeRange(ranges: RangeKey[], r: RangeKey, initialGen: boolean): void {
  const has = ranges.some((x) => x.type === r.type && x.desc === r.desc);
  if (initialGen) {
    if (has) throw broken(`found named active range already in first gen: ${EVENT_NAMES[r.type]}`);
    ranges.push(r);
  } else if (!has) {
    throw broken(`resource is missing active range: ${EVENT_NAMES[r.type]}`);
  }
}

function endRange(ranges: RangeKey[], endType: number): RangeKey {
  const st = rangeStart(endType);
  const i = ranges.findIndex((x) => x.type === st);
  if (i < 0) throw broken(`tried to end event ${EVENT_NAMES[st]}, but not in-flight`);
  const r = ranges[i]!;
  ranges[i] = ranges[ranges.length - 1]!;
  ranges.pop();
  return r;
}

export { GC_RUNNING, WIRE_GO_RUNNABLE, WIRE_GO_SYSCALL, WIRE_GO_WAITING };
