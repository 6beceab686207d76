import type { Profile, ProfileKind, ValueType } from '../model/profile.ts';

export type { ProfileKind };

/** A sample type as the UI presents it: a sentence for a tooltip, and whether it accumulates since start. */
export type SampleTypeInfo = ValueType & { description: string; cumulativeSinceStart: boolean };

export interface ProfileDescription {
  kind: ProfileKind;
  defaultSampleType: string;
  sampleTypes: SampleTypeInfo[];
}

const TEXT: Record<string, string> = {
  cpu: 'CPU time spent in each function during the profile window.',
  samples: 'Number of profiling samples (ticks) that landed in each function.',
  wall: 'Wall-clock time, including time spent waiting.',
  inuse_space: 'Bytes allocated and not yet freed at the moment of the snapshot: what is live now.',
  inuse_objects: 'Objects allocated and not yet freed at the moment of the snapshot.',
  alloc_space: 'Bytes allocated, freed or not: what allocates, not what is live.',
  alloc_objects: 'Objects allocated, freed or not.',
  contentions: 'Times a goroutine waited on this lock or channel operation.',
  delay: 'Total time goroutines spent waiting (mutex: lock contention; block: blocking operations).',
  goroutine: 'Goroutines alive at the moment of the snapshot, by where they are: a point-in-time count.',
  goroutines: 'Goroutines alive at the moment of the snapshot: a point-in-time count.',
  space: 'Bytes live at the time of the snapshot (sampled heap profile).',
  objects: 'Objects live at the time of the snapshot (sampled heap profile).',
};

/** The sample types of Go's heap and allocs profiles (the same four in both). */
const HEAP_TYPES = new Set(['inuse_space', 'inuse_objects', 'alloc_space', 'alloc_objects']);

/**
 * The kind of a profile from what it holds: the source's own word when it has one (`Profile.kind`), else
 * its sample and period types and its window. Go's heap and allocs endpoints write the same four sample
 * types: with a window (`/debug/pprof/allocs?seconds=N`, a delta) it is allocations over that window;
 * without one it is a heap snapshot, whatever its default type (Go drops the default of a delta).
 */
export function profileKind(
  p: Pick<Profile, 'kind' | 'sampleTypes' | 'periodType' | 'durationNanos' | 'frames'>,
): ProfileKind {
  if (p.kind) return p.kind;
  const types = p.sampleTypes.map((t) => t.type);
  const period = p.periodType?.type ?? '';
  if (types.includes('cpu') || period === 'cpu' || p.sampleTypes.some(isCpuEngineTime)) return 'cpu';
  if (types.includes('wall')) return 'wall';
  if (types.some((t) => HEAP_TYPES.has(t))) return p.durationNanos > 0 ? 'allocs' : 'heap';
  if (types.includes('delay') && types.includes('contentions')) return guessLockKind(p);
  if (types.includes('goroutine')) return 'goroutine';
  return 'other';
}

/**
 * async-profiler (Java) names a profile's sample types after the engine that sampled it, not after
 * what was measured: `perf_events`, `itimer` or `ctimer`. All three are CPU clocks when the unit is
 * nanoseconds: itimer is setitimer(ITIMER_PROF), the process's CPU time; ctimer a per-thread CPU-time
 * timer (timer_create on the thread's CPU clock); and perf_events is in nanoseconds only for its
 * `cpu` event (the kernel's cpu-clock) — a hardware or trace event (cycles, cache-misses, a
 * tracepoint) is counted in its own unit, never ns. Each sample then carries the sampling interval,
 * so the type's total is CPU time as pprof's `cpu` is. Wall-clock sampling (`wall`) is not CPU time
 * and is named `wall`.
 */
function isCpuEngineTime(t: ValueType): boolean {
  return (
    (t.type === 'perf_events' || t.type === 'itimer' || t.type === 'ctimer') &&
    (t.unit === 'ns' || t.unit === 'nanoseconds')
  );
}

/** The sample type a view of a kind opens on, when the profile has it. */
export function kindDefaultSampleType(
  kind: ProfileKind,
  p: Pick<Profile, 'sampleTypes' | 'defaultSampleType'>,
): string {
  const want: Partial<Record<ProfileKind, string>> = {
    cpu: 'cpu',
    allocs: 'alloc_space',
    heap: 'inuse_space',
    mutex: 'delay',
    block: 'delay',
    goroutine: 'goroutine',
    'trace-net': 'delay',
    'trace-sync': 'delay',
    'trace-syscall': 'delay',
    'trace-sched': 'delay',
  };
  const w = want[kind];
  return w && p.sampleTypes.some((t) => t.type === w) ? w : p.defaultSampleType;
}

/**
 * True when a sample type of a profile of this kind accumulates since the process started: a heap
 * snapshot's alloc_* figures, and mutex/block profiles without a window. Comparing two stages by their
 * absolute values then compares the processes' uptimes as much as their code.
 */
export function sinceProcessStart(kind: ProfileKind, type: string, durationNanos: number): boolean {
  if (kind === 'heap') return type === 'alloc_space' || type === 'alloc_objects';
  if (kind === 'mutex' || kind === 'block') return !(durationNanos > 0);
  return false;
}

const TRACE_SPANS: Partial<Record<ProfileKind, string>> = {
  'trace-net': 'blocked on the network',
  'trace-sync': 'blocked on channels, select and sync primitives',
  'trace-syscall': 'in system calls',
  'trace-sched': 'runnable but waiting to be scheduled',
};

/** A sample type of a profile derived from an execution trace: its figures cover the trace's span, never more. */
function describeTraceSampleType(t: ValueType, what: string): SampleTypeInfo {
  const description =
    t.type === 'delay'
      ? `Time goroutines spent ${what} during the trace, by the stack that started each span.`
      : t.type === 'contentions'
        ? `Spans of goroutines ${what} during the trace.`
        : `${t.type} in ${t.unit}.`;
  return { ...t, description, cumulativeSinceStart: false };
}

/** A sample type with its description for the UI, as a profile of this kind holds it. */
export function describeSampleType(t: ValueType, kind: ProfileKind, durationNanos: number): SampleTypeInfo {
  const traced = TRACE_SPANS[kind];
  if (traced) return describeTraceSampleType(t, traced);
  const text = known(t.type) ?? `${t.type} in ${t.unit}.`;
  const since = sinceProcessStart(kind, t.type, durationNanos);
  const span = since
    ? ' Accumulated since the process started.'
    : kind === 'allocs' || ((kind === 'mutex' || kind === 'block') && durationNanos > 0)
      ? " Over the profile's window."
      : '';
  return { ...t, description: text + span, cumulativeSinceStart: since };
}

/** Describes a profile for the UI: its kind, the type it opens on, and its sample types. */
export function describeProfile(p: Profile): ProfileDescription {
  const kind = profileKind(p);
  return {
    kind,
    defaultSampleType: kindDefaultSampleType(kind, p),
    sampleTypes: p.sampleTypes.map((t) => describeSampleType(t, kind, p.durationNanos)),
  };
}

/** Mutex and block profiles share sample types; their frames tell them apart. */
function guessLockKind(p: Pick<Profile, 'frames'>): ProfileKind {
  for (const f of p.frames) {
    if (f.name === 'sync.(*Mutex).Unlock' || f.name === 'sync.(*RWMutex).Unlock' || f.name === 'runtime.unlock')
      return 'mutex';
  }
  return 'block';
}

/** The text of a sample type named in the table (never an inherited property: a file may name a type `__proto__`). */
function known(type: string): string | undefined {
  return Object.hasOwn(TEXT, type) ? TEXT[type] : undefined;
}
