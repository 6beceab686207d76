/**
 * The Go execution trace wire format as Go 1.22–1.26 write it (`runtime/trace`, `go test -trace`,
 * `/debug/pprof/trace`): facts of the format, shared by the reader and the trace generator.
 *
 * A trace is the header `go 1.NN trace\0\0\0` followed by batches. A batch is
 * `EventBatch gen M time size <size bytes>` (or `ExperimentalBatch exp gen M time size …`); Go 1.26
 * also writes a lone `EndOfGeneration` byte after each generation. Inside a batch every value is an
 * unsigned LEB128 varint. Batches of one generation carry its string table, its stack table, its CPU
 * samples, its clock ("sync") data, and the per-thread event streams. Every event of a thread stream
 * is `type dt args…` with dt the ticks since the thread's previous event (the batch's own time for
 * the first).
 */

/** Wire versions: the `NN` of the header. */
export const GO122 = 22;
export const GO123 = 23;
export const GO125 = 25;
export const GO126 = 26;
export const SUPPORTED_VERSIONS: readonly number[] = [GO122, GO123, GO125, GO126];
/** Versions of the older (v1) format, read by `go tool trace` but not by stagediff. */
export const V1_VERSIONS: readonly number[] = [5, 7, 8, 9, 10, 11, 19, 21];

// Event types (the first byte of an event).
export const EV_EVENT_BATCH = 1;
export const EV_STACKS = 2;
export const EV_STACK = 3;
export const EV_STRINGS = 4;
export const EV_STRING = 5;
export const EV_CPU_SAMPLES = 6;
export const EV_CPU_SAMPLE = 7;
export const EV_FREQUENCY = 8;
export const EV_PROCS_CHANGE = 9;
export const EV_PROC_START = 10;
export const EV_PROC_STOP = 11;
export const EV_PROC_STEAL = 12;
export const EV_PROC_STATUS = 13;
export const EV_GO_CREATE = 14;
export const EV_GO_CREATE_SYSCALL = 15;
export const EV_GO_START = 16;
export const EV_GO_DESTROY = 17;
export const EV_GO_DESTROY_SYSCALL = 18;
export const EV_GO_STOP = 19;
export const EV_GO_BLOCK = 20;
export const EV_GO_UNBLOCK = 21;
export const EV_GO_SYSCALL_BEGIN = 22;
export const EV_GO_SYSCALL_END = 23;
export const EV_GO_SYSCALL_END_BLOCKED = 24;
export const EV_GO_STATUS = 25;
export const EV_STW_BEGIN = 26;
export const EV_STW_END = 27;
export const EV_GC_ACTIVE = 28;
export const EV_GC_BEGIN = 29;
export const EV_GC_END = 30;
export const EV_GC_SWEEP_ACTIVE = 31;
export const EV_GC_SWEEP_BEGIN = 32;
export const EV_GC_SWEEP_END = 33;
export const EV_GC_MARK_ASSIST_ACTIVE = 34;
export const EV_GC_MARK_ASSIST_BEGIN = 35;
export const EV_GC_MARK_ASSIST_END = 36;
export const EV_HEAP_ALLOC = 37;
export const EV_HEAP_GOAL = 38;
export const EV_GO_LABEL = 39;
export const EV_USER_TASK_BEGIN = 40;
export const EV_USER_TASK_END = 41;
export const EV_USER_REGION_BEGIN = 42;
export const EV_USER_REGION_END = 43;
export const EV_USER_LOG = 44;
export const EV_GO_SWITCH = 45;
export const EV_GO_SWITCH_DESTROY = 46;
export const EV_GO_CREATE_BLOCKED = 47;
export const EV_GO_STATUS_STACK = 48;
export const EV_EXPERIMENTAL_BATCH = 49;
export const EV_SYNC_BATCH = 50;
export const EV_CLOCK_SNAPSHOT = 51;
export const EV_END_OF_GENERATION = 52;
/** Experimental (allocation/free) events: 128 … 136. */
export const EV_FIRST_EXPERIMENTAL = 128;
export const EV_LAST_EXPERIMENTAL = 136;
/** Not a wire type: the reader's synchronisation event at each generation's start and at the end. */
export const EV_SYNC = 255;

/** Largest batch the runtime writes; anything bigger is corrupt. */
export const MAX_BATCH_BYTES = 64 << 10;
/** Largest string (function or file name, block reason, annotation) the runtime writes. */
export const MAX_STRING_BYTES = 1 << 10;
/** Deepest stack the runtime writes. */
export const MAX_FRAMES_PER_STACK = 128;

/** Per timed event type: its argument count after the timestamp delta, or -1 when not a timed event. */
export const TIMED_ARGS = new Int8Array(256).fill(-1);
/** Per event type: the argument index (after the delta) of the stack of its execution context, or -1. */
export const STACK_ARG = new Int8Array(256).fill(-1);
/** Per event type: argument indexes (after the delta) holding string ids. */
export const STRING_ARGS: readonly (readonly number[])[] = Array.from({ length: 256 }, () => []);
/** Per event type: argument indexes (after the delta) holding stack ids (the context's first). */
export const STACK_ARGS: readonly (readonly number[])[] = Array.from({ length: 256 }, () => []);
/** Names, for error messages. */
export const EVENT_NAMES: string[] = Array.from({ length: 256 }, (_, i) => `event type ${i}`);

function timed(type: number, name: string, args: number, stacks: number[] = [], strings: number[] = []): void {
  TIMED_ARGS[type] = args;
  STACK_ARG[type] = stacks[0] ?? -1;
  (STACK_ARGS as number[][])[type] = stacks;
  (STRING_ARGS as number[][])[type] = strings;
  EVENT_NAMES[type] = name;
}

EVENT_NAMES[EV_EVENT_BATCH] = 'EventBatch';
EVENT_NAMES[EV_STACKS] = 'Stacks';
EVENT_NAMES[EV_STACK] = 'Stack';
EVENT_NAMES[EV_STRINGS] = 'Strings';
EVENT_NAMES[EV_STRING] = 'String';
EVENT_NAMES[EV_CPU_SAMPLES] = 'CPUSamples';
EVENT_NAMES[EV_CPU_SAMPLE] = 'CPUSample';
EVENT_NAMES[EV_FREQUENCY] = 'Frequency';
EVENT_NAMES[EV_EXPERIMENTAL_BATCH] = 'ExperimentalBatch';
EVENT_NAMES[EV_SYNC_BATCH] = 'Sync';
EVENT_NAMES[EV_END_OF_GENERATION] = 'EndOfGeneration';
EVENT_NAMES[EV_SYNC] = 'Sync';
// Argument positions below count from 0 after the timestamp delta.
timed(EV_PROCS_CHANGE, 'ProcsChange', 2, [1]);
timed(EV_PROC_START, 'ProcStart', 2);
timed(EV_PROC_STOP, 'ProcStop', 0);
timed(EV_PROC_STEAL, 'ProcSteal', 3);
timed(EV_PROC_STATUS, 'ProcStatus', 2);
timed(EV_GO_CREATE, 'GoCreate', 3, [2, 1]);
timed(EV_GO_CREATE_SYSCALL, 'GoCreateSyscall', 1);
timed(EV_GO_START, 'GoStart', 2);
timed(EV_GO_DESTROY, 'GoDestroy', 0);
timed(EV_GO_DESTROY_SYSCALL, 'GoDestroySyscall', 0);
timed(EV_GO_STOP, 'GoStop', 2, [1], [0]);
timed(EV_GO_BLOCK, 'GoBlock', 2, [1], [0]);
timed(EV_GO_UNBLOCK, 'GoUnblock', 3, [2]);
timed(EV_GO_SYSCALL_BEGIN, 'GoSyscallBegin', 2, [1]);
timed(EV_GO_SYSCALL_END, 'GoSyscallEnd', 0);
timed(EV_GO_SYSCALL_END_BLOCKED, 'GoSyscallEndBlocked', 0);
timed(EV_GO_STATUS, 'GoStatus', 3);
timed(EV_STW_BEGIN, 'STWBegin', 2, [1], [0]);
timed(EV_STW_END, 'STWEnd', 0);
timed(EV_GC_ACTIVE, 'GCActive', 1);
timed(EV_GC_BEGIN, 'GCBegin', 2, [1]);
timed(EV_GC_END, 'GCEnd', 1);
timed(EV_GC_SWEEP_ACTIVE, 'GCSweepActive', 1);
timed(EV_GC_SWEEP_BEGIN, 'GCSweepBegin', 1, [0]);
timed(EV_GC_SWEEP_END, 'GCSweepEnd', 2);
timed(EV_GC_MARK_ASSIST_ACTIVE, 'GCMarkAssistActive', 1);
timed(EV_GC_MARK_ASSIST_BEGIN, 'GCMarkAssistBegin', 1, [0]);
timed(EV_GC_MARK_ASSIST_END, 'GCMarkAssistEnd', 0);
timed(EV_HEAP_ALLOC, 'HeapAlloc', 1);
timed(EV_HEAP_GOAL, 'HeapGoal', 1);
timed(EV_GO_LABEL, 'GoLabel', 1, [], [0]);
timed(EV_USER_TASK_BEGIN, 'UserTaskBegin', 4, [3], [2]);
timed(EV_USER_TASK_END, 'UserTaskEnd', 2, [1]);
timed(EV_USER_REGION_BEGIN, 'UserRegionBegin', 3, [2], [1]);
timed(EV_USER_REGION_END, 'UserRegionEnd', 3, [2], [1]);
timed(EV_USER_LOG, 'UserLog', 4, [3], [1, 2]);
timed(EV_GO_SWITCH, 'GoSwitch', 2);
timed(EV_GO_SWITCH_DESTROY, 'GoSwitchDestroy', 2);
timed(EV_GO_CREATE_BLOCKED, 'GoCreateBlocked', 3, [2, 1]);
timed(EV_GO_STATUS_STACK, 'GoStatusStack', 4, [3]);
timed(EV_CLOCK_SNAPSHOT, 'ClockSnapshot', 3);
// Experimental allocation/free events: [id, …] after the delta; read and passed over.
timed(128, 'Span', 3);
timed(129, 'SpanAlloc', 3);
timed(130, 'SpanFree', 1);
timed(131, 'HeapObject', 2);
timed(132, 'HeapObjectAlloc', 2);
timed(133, 'HeapObjectFree', 1);
timed(134, 'GoroutineStack', 2);
timed(135, 'GoroutineStackAlloc', 2);
timed(136, 'GoroutineStackFree', 1);

/** Goroutine status on the wire (GoStatus events). */
export const WIRE_GO_RUNNABLE = 1;
export const WIRE_GO_RUNNING = 2;
export const WIRE_GO_SYSCALL = 3;
export const WIRE_GO_WAITING = 4;

/** Proc status on the wire (ProcStatus events). */
export const WIRE_P_RUNNING = 1;
export const WIRE_P_IDLE = 2;
export const WIRE_P_SYSCALL = 3;
/** A P in a syscall whose thread the parser cannot know any more (it will be stolen). */
export const WIRE_P_SYSCALL_ABANDONED = 4;

/** A goroutine's state as the reader reports transitions. */
export const G_UNDETERMINED = 0;
export const G_NOT_EXIST = 1;
export const G_RUNNABLE = 2;
export const G_RUNNING = 3;
export const G_WAITING = 4;
export const G_SYSCALL = 5;
export const GO_STATE_NAMES = ['Undetermined', 'NotExist', 'Runnable', 'Running', 'Waiting', 'Syscall'];

/** A proc's state as the reader reports transitions. */
export const P_UNDETERMINED = 0;
export const P_NOT_EXIST = 1;
export const P_RUNNING = 2;
export const P_IDLE = 3;

/** Wire goroutine status → reported state (index 0, a bad status, maps to Undetermined). */
export const WIRE_GO_TO_STATE = [G_UNDETERMINED, G_RUNNABLE, G_RUNNING, G_SYSCALL, G_WAITING];
/** Wire proc status → reported state. */
export const WIRE_P_TO_STATE = [P_UNDETERMINED, P_RUNNING, P_IDLE, P_RUNNING, P_IDLE];

/** "None" for a goroutine, proc or thread id. */
export const NONE = -1;

/**
 * A goroutine, proc or thread id from the wire: ids are unsigned 64-bit there, and the runtime writes
 * "none" as the all-ones value, which reads back as a number of 2^63 or more.
 */
export function asId(v: number): number {
  return v >= 2 ** 63 ? NONE : v;
}

/** The `go 1.NN trace` header: 16 bytes. */
export const HEADER_BYTES = 16;

/** The version named by a trace header, or null when `head` does not start with one. */
export function headerVersion(head: Uint8Array): number | null {
  // "go 1." then digits then " trace\0\0\0" padded to 16 bytes
  if (head.length < 8) return null;
  if (head[0] !== 0x67 || head[1] !== 0x6f || head[2] !== 0x20 || head[3] !== 0x31 || head[4] !== 0x2e) return null;
  let i = 5;
  let v = 0;
  while (i < head.length && i < 8 && head[i]! >= 0x30 && head[i]! <= 0x39) {
    v = v * 10 + (head[i]! - 0x30);
    i++;
  }
  if (i === 5) return null;
  const rest = ' trace';
  for (let k = 0; k < rest.length; k++) {
    if (i + k >= head.length) return k > 0 ? v : null;
    if (head[i + k] !== rest.charCodeAt(k)) return null;
  }
  return v;
}
