/**
 * The canonical profile model. Every profile importer (pprof, folded stacks, .cpuprofile) produces
 * this shape; nothing downstream knows which format a profile came from.
 *
 * Frames and stacks are interned: a sample points at a stack, a stack is a list of frame ids, leaf
 * (innermost) first. Values are kept per sample type as columns, in each type's own unit.
 */

/** What a sample value measures and in which unit, e.g. {type: "cpu", unit: "nanoseconds"}. */
export interface ValueType {
  type: string;
  unit: string;
}

/** A sample label: either a string or a number (with an optional unit), as pprof has them. */
export interface Label {
  key: string;
  str?: string;
  num?: number;
  numUnit?: string;
}

/**
 * One frame of a stack: a function, at a source position. Inlined functions are frames of their own.
 * `name` is the function-granularity key (what pprof's `-top` groups by). A frame without a usable
 * function name is named `[basename of mapping file]` or `<unknown>`, as pprof names it.
 */
export interface Frame {
  name: string;
  file: string;
  line: number;
  /** The file of the mapping (binary, shared library) holding the frame's code; absent when there is none. */
  mapping?: string;
  /**
   * Set when `name` is a stand-in rather than a function's own name: `no-function` for a location
   * without line information, `no-name` for a function whose name is empty. pprof's filters match a
   * function's real name and file, so they need to tell these apart.
   */
  standIn?: 'no-function' | 'no-name';
  /**
   * The function's name as the file writes it, when `name` is the shorter one `go tool pprof` prints
   * by default (a Go generic's `go.shape` arguments without their parenthesised lists; see
   * analysis/short-names.ts). Hover texts and exports show it; rows, trees and filters use `name`.
   */
  fullName?: string;
  /** The line the frame's function starts on (pprof's Function.start_line); absent when unknown (0). */
  startLine?: number;
  /**
   * Set when the frame was inlined into its caller: it shares one location (one program counter) with
   * the next frame of its stack, whose id is this frame's id + 1. Frames of a location are consecutive.
   */
  inlined?: true;
}

export type ProfileFormat = 'pprof' | 'otlp' | 'folded' | 'cpuprofile' | 'speedscope' | 'perf-script';

/**
 * What a profile measures and over what span. Profiles of different kinds are never merged, and a
 * stage's views are always of one kind.
 * - `cpu`, `wall`: time sampled over the profile's window (`durationNanos`);
 * - `allocs`: allocations over a window: a delta profile (`/debug/pprof/allocs?seconds=N`), whose
 *   alloc_* figures cover exactly its window;
 * - `heap`: a heap snapshot (`/debug/pprof/heap`, or allocs without `seconds`): inuse_* are what was
 *   live at that instant, alloc_* accumulate since the process started;
 * - `mutex`, `block`: contention and blocking delays, over a window when `durationNanos` > 0 (a delta),
 *   else since profiling was enabled;
 * - `goroutine`: goroutines alive at one instant;
 * - `trace-net`, `trace-sync`, `trace-syscall`, `trace-sched`: the blocking and scheduling profiles an
 *   execution trace yields (`go tool trace -pprof=net|sync|syscall|sched`), over the trace's span;
 * - `other`: anything else (folded stacks, perf, Node, …) that is not recognisably one of the above.
 */
export type ProfileKind =
  | 'cpu'
  | 'wall'
  | 'allocs'
  | 'heap'
  | 'mutex'
  | 'block'
  | 'goroutine'
  | 'trace-net'
  | 'trace-sync'
  | 'trace-syscall'
  | 'trace-sched'
  | 'other';

/** Counts of the source's own records, for `inspect` (pprof meanings; other formats map onto them). */
export interface ProfileStats {
  numSamples: number;
  numLocations: number;
  numFunctions: number;
  numMappings: number;
}

export interface Profile {
  format: ProfileFormat;
  /**
   * The kind when the source says it outright (a trace derivation, a stage tool's record of the
   * endpoint it fetched); absent when only the sample types tell, and then `describeProfile` decides.
   */
  kind?: ProfileKind;
  sampleTypes: ValueType[];
  /** The sample type a viewer opens on: the file's default_sample_type when set, else the last type. */
  defaultSampleType: string;
  periodType: ValueType | null;
  period: number;
  timeNanos: number;
  /**
   * time_nanos exactly, in decimal, where the source has it as a 64-bit integer (pprof): a Unix time
   * in nanoseconds is past 2^53, so `timeNanos` is rounded (to a multiple of 256 ns today).
   */
  timeNanosExact?: string;
  durationNanos: number;
  comments: string[];
  dropFrames: string;
  keepFrames: string;
  stats: ProfileStats;
  frames: Frame[];
  /** stack i is stackFrames[stackOffsets[i] .. stackOffsets[i+1]) — frame ids, leaf first. */
  stackOffsets: Uint32Array;
  stackFrames: Uint32Array;
  /** Per sample: its stack id. */
  sampleStack: Uint32Array;
  /** values[t][s] = value of sample s for sample type t. */
  values: Float64Array[];
  /** Per sample: index into labelSets (0 = no labels). */
  sampleLabelSet: Uint32Array;
  /** labelSets[0] is always the empty set. */
  labelSets: Label[][];
}

/** Number of stacks in a profile. */
export function stackCount(p: Profile): number {
  return p.stackOffsets.length - 1;
}

/** Index of a sample type by name, or -1. */
export function sampleTypeIndex(p: Profile, type: string): number {
  return p.sampleTypes.findIndex((t) => t.type === type);
}
