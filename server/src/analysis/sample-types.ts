import type { Profile, ProfileKind, ValueType } from '../model/profile.ts';

export type { ProfileKind };

/** A sample type as the UI presents it. */
export interface SampleTypeInfo extends ValueType {
  /** One sentence for a tooltip. */
  description: string;
  /**
   * True when the values accumulate since the process started (allocations, mutex and block
   * delays): comparing two stages by absolute value then compares their uptimes as much as their
   * code, so the UI warns and suggests `share` or `per-request`.
   */
  cumulativeSinceStart: boolean;
}

export interface ProfileDescription {
  kind: ProfileKind;
  defaultSampleType: string;
  sampleTypes: SampleTypeInfo[];
}

const TEXT: Record<string, [string, boolean]> = {
  cpu: ['CPU time spent in each function during the profile window.', false],
  samples: ['Number of profiling samples (ticks) that landed in each function.', false],
  wall: ['Wall-clock time, including time spent waiting.', false],
  inuse_space: ['Bytes allocated and not yet freed at the moment of the snapshot: what is live now.', false],
  inuse_objects: ['Objects allocated and not yet freed at the moment of the snapshot.', false],
  alloc_space: ['Bytes allocated since the process started, freed or not: what allocates, not what is live.', true],
  alloc_objects: ['Objects allocated since the process started, freed or not.', true],
  contentions: ['Times a goroutine waited on this lock or channel operation, since profiling was enabled.', true],
  delay: [
    'Total time goroutines spent waiting (mutex: lock contention; block: blocking operations), since profiling was enabled.',
    true,
  ],
  goroutine: ['Goroutines alive at the moment of the snapshot, by where they are: a point-in-time count.', false],
  goroutines: ['Goroutines alive at the moment of the snapshot: a point-in-time count.', false],
  space: ['Bytes live at the time of the snapshot (sampled heap profile).', false],
  objects: ['Objects live at the time of the snapshot (sampled heap profile).', false],
};

/**
 * Describes a profile for the UI. Go's heap and allocs endpoints write the same four sample types
 * and differ only in their default (inuse_space vs alloc_space), so the kind follows the default.
 */
export function describeProfile(p: Profile): ProfileDescription {
  const types = p.sampleTypes.map((t) => t.type);
  const period = p.periodType?.type ?? '';
  let kind: ProfileKind = 'other';
  if (p.kind?.startsWith('trace-')) return describeTraceProfile(p, p.kind);
  if (p.kind) kind = p.kind;
  else if (types.includes('cpu') || period === 'cpu') kind = 'cpu';
  else if (types.includes('wall')) kind = 'wall';
  else if (types.includes('inuse_space') || types.includes('alloc_space'))
    kind = p.defaultSampleType.startsWith('alloc_') ? 'allocs' : 'heap';
  else if (types.includes('delay') && types.includes('contentions')) kind = guessLockKind(p);
  else if (types.includes('goroutine')) kind = 'goroutine';
  return {
    kind,
    defaultSampleType: p.defaultSampleType,
    sampleTypes: p.sampleTypes.map((t) => {
      const [description, cumulativeSinceStart] = known(t.type) ?? [`${t.type} in ${t.unit}.`, false];
      return { ...t, description, cumulativeSinceStart };
    }),
  };
}

const TRACE_SPANS: Record<string, string> = {
  'trace-net': 'blocked on the network',
  'trace-sync': 'blocked on channels, select and sync primitives',
  'trace-syscall': 'in system calls',
  'trace-sched': 'runnable but waiting to be scheduled',
};

/** A profile derived from an execution trace: its figures cover the trace's span, never more. */
function describeTraceProfile(p: Profile, kind: ProfileKind): ProfileDescription {
  const what = TRACE_SPANS[kind] ?? 'in the traced state';
  return {
    kind,
    defaultSampleType: p.defaultSampleType,
    sampleTypes: p.sampleTypes.map((t) => {
      const description =
        t.type === 'delay'
          ? `Time goroutines spent ${what} during the trace, by the stack that started each span.`
          : t.type === 'contentions'
            ? `Spans of goroutines ${what} during the trace.`
            : `${t.type} in ${t.unit}.`;
      return { ...t, description, cumulativeSinceStart: false };
    }),
  };
}

/** Mutex and block profiles share sample types; their frames tell them apart. */
function guessLockKind(p: Profile): ProfileKind {
  for (const f of p.frames) {
    if (f.name === 'sync.(*Mutex).Unlock' || f.name === 'sync.(*RWMutex).Unlock' || f.name === 'runtime.unlock')
      return 'mutex';
  }
  return 'block';
}

/** True when comparing this sample type across stages by absolute value deserves a warning. */
export function isCumulativeSinceStart(type: string): boolean {
  return known(type)?.[1] ?? false;
}

/** The text of a sample type named in the table (never an inherited property: a file may name a type `__proto__`). */
function known(type: string): [string, boolean] | undefined {
  return Object.hasOwn(TEXT, type) ? TEXT[type] : undefined;
}
