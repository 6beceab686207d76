import {
  EV_CPU_SAMPLE,
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
  EV_PROC_START,
  EV_PROC_STATUS,
  EV_PROC_STEAL,
  EV_PROC_STOP,
  EV_STW_BEGIN,
  EV_STW_END,
  EV_SYNC,
  G_NOT_EXIST,
  G_RUNNABLE,
  G_RUNNING,
  G_SYSCALL,
  G_WAITING,
  P_IDLE,
  P_RUNNING,
  STACK_ARG,
  WIRE_GO_TO_STATE,
  WIRE_P_SYSCALL_ABANDONED,
  WIRE_P_TO_STATE,
  asId,
} from './format.ts';
import type { OrderedEvent } from './order.ts';

/**
 * What a state-transition event says: which goroutine (or proc) went from which state to which,
 * why (a goroutine's block or stop reason, "" when the trace gives none) and the stack the
 * transition carries (a new goroutine's start, the stack of a goroutine blocking, stopping or entering
 * a syscall; 0 when none). The meanings are those of Go's trace reader (`StateTransition`).
 */
export interface Transition {
  kind: 'goroutine' | 'proc';
  id: number;
  from: number;
  to: number;
  reason: string;
  stack: number;
}

/**
 * The transition `e` describes, written into `out`; false when `e` is not a state transition.
 * (One scratch object is reused per event: the analysis reads millions.)
 */
export function transitionOf(e: OrderedEvent, out: Transition): boolean {
  const a = e.args;
  out.reason = '';
  out.stack = 0;
  switch (e.type) {
    case EV_PROC_START:
      return proc(out, asId(a[0]), P_IDLE, P_RUNNING);
    case EV_PROC_STOP:
      return proc(out, e.p, P_RUNNING, P_IDLE);
    case EV_PROC_STEAL:
      return proc(out, asId(a[0]), a[3] === WIRE_P_SYSCALL_ABANDONED ? P_IDLE : P_RUNNING, P_IDLE);
    case EV_PROC_STATUS:
      return proc(out, asId(a[0]), a[2], WIRE_P_TO_STATE[a[1]] ?? 0);
    case EV_GO_CREATE:
    case EV_GO_CREATE_BLOCKED:
      go(out, asId(a[0]), G_NOT_EXIST, e.type === EV_GO_CREATE ? G_RUNNABLE : G_WAITING);
      out.stack = a[1];
      return true;
    case EV_GO_CREATE_SYSCALL:
      return go(out, asId(a[0]), G_NOT_EXIST, G_SYSCALL);
    case EV_GO_START:
      return go(out, asId(a[0]), G_RUNNABLE, G_RUNNING);
    case EV_GO_DESTROY:
      return go(out, e.g, G_RUNNING, G_NOT_EXIST);
    case EV_GO_DESTROY_SYSCALL:
      return go(out, e.g, G_SYSCALL, G_NOT_EXIST);
    case EV_GO_STOP:
    case EV_GO_BLOCK:
      go(out, e.g, G_RUNNING, e.type === EV_GO_STOP ? G_RUNNABLE : G_WAITING);
      out.reason = a[0] === 0 ? '' : (e.gen.strings.get(a[0]) ?? '');
      out.stack = a[1];
      return true;
    case EV_GO_UNBLOCK:
    case EV_GO_SWITCH:
    case EV_GO_SWITCH_DESTROY:
      return go(out, asId(a[0]), G_WAITING, G_RUNNABLE);
    case EV_GO_SYSCALL_BEGIN:
      go(out, e.g, G_RUNNING, G_SYSCALL);
      out.stack = a[1];
      return true;
    case EV_GO_SYSCALL_END:
      return go(out, e.g, G_SYSCALL, G_RUNNING);
    case EV_GO_SYSCALL_END_BLOCKED:
      return go(out, e.g, G_SYSCALL, G_RUNNABLE);
    case EV_GO_STATUS:
    case EV_GO_STATUS_STACK: {
      const packed = a[2];
      const from = Math.floor(packed / 2 ** 32);
      const status = packed - from * 2 ** 32;
      go(out, asId(a[0]), from, WIRE_GO_TO_STATE[status] ?? 0);
      if (e.type === EV_GO_STATUS_STACK) out.stack = a[3];
      return true;
    }
    default:
      return false;
  }
}

function go(out: Transition, id: number, from: number, to: number): true {
  out.kind = 'goroutine';
  out.id = id;
  out.from = from;
  out.to = to;
  return true;
}

function proc(out: Transition, id: number, from: number, to: number): true {
  out.kind = 'proc';
  out.id = id;
  out.from = from;
  out.to = to;
  return true;
}

/** The stack of the event's execution context (Go's `Event.Stack`), as a stack id of `e.gen`; 0 when none. */
export function eventStack(e: OrderedEvent): number {
  if (e.type === EV_SYNC) return 0;
  if (e.type === EV_CPU_SAMPLE) return e.args[0];
  const i = STACK_ARG[e.type]!;
  return i < 0 ? 0 : e.args[i]!;
}

/** Special time ranges the trace marks, by the names Go's trace reader gives them. */
export const RANGE_GC_MARK = 'GC concurrent mark phase';
export const RANGE_GC_SWEEP = 'GC incremental sweep';
export const RANGE_GC_ASSIST = 'GC mark assist';

export interface RangeInfo {
  /** 'begin', 'active' (already running when the trace or generation started) or 'end'. */
  edge: 'begin' | 'active' | 'end';
  name: string;
  /** What the range belongs to: a goroutine, a proc, or nothing (the GC mark phase is global). */
  scope: 'goroutine' | 'proc' | 'none';
  id: number;
}

/** The range edge `e` is, or null. Stop-the-world ranges are named `stop-the-world (KIND)`. */
export function rangeOf(e: OrderedEvent): RangeInfo | null {
  switch (e.type) {
    case EV_STW_BEGIN:
      return { edge: 'begin', name: stwName(e.gen.strings.get(e.args[0]) ?? ''), scope: 'goroutine', id: e.g };
    case EV_STW_END:
      return { edge: 'end', name: stwName(e.text ?? ''), scope: 'goroutine', id: e.g };
    case EV_GC_BEGIN:
      return { edge: 'begin', name: RANGE_GC_MARK, scope: 'none', id: 0 };
    case EV_GC_ACTIVE:
      return { edge: 'active', name: RANGE_GC_MARK, scope: 'none', id: 0 };
    case EV_GC_END:
      return { edge: 'end', name: RANGE_GC_MARK, scope: 'none', id: 0 };
    case EV_GC_SWEEP_BEGIN:
      return { edge: 'begin', name: RANGE_GC_SWEEP, scope: 'proc', id: e.p };
    case EV_GC_SWEEP_ACTIVE:
      return { edge: 'active', name: RANGE_GC_SWEEP, scope: 'proc', id: asId(e.args[0]) };
    case EV_GC_SWEEP_END:
      return { edge: 'end', name: RANGE_GC_SWEEP, scope: 'proc', id: e.p };
    case EV_GC_MARK_ASSIST_BEGIN:
      return { edge: 'begin', name: RANGE_GC_ASSIST, scope: 'goroutine', id: e.g };
    case EV_GC_MARK_ASSIST_ACTIVE:
      return { edge: 'active', name: RANGE_GC_ASSIST, scope: 'goroutine', id: asId(e.args[0]) };
    case EV_GC_MARK_ASSIST_END:
      return { edge: 'end', name: RANGE_GC_ASSIST, scope: 'goroutine', id: e.g };
    default:
      return null;
  }
}

function stwName(kind: string): string {
  return `stop-the-world (${kind})`;
}

/** The function names of a stack of generation `e.gen`, leaf first ([] for stack 0). */
export function stackFunctions(e: OrderedEvent, stack: number): string[] {
  if (stack === 0) return [];
  const pcs = e.gen.stacks.get(stack);
  if (!pcs) return [];
  return pcs.map((pc) => {
    const f = e.gen.frames.get(pc)!;
    return f.fn === 0 ? '' : (e.gen.strings.get(f.fn) ?? '');
  });
}
