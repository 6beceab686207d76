import type { Profile, ProfileKind } from '../../model/profile.ts';

/**
 * Recognises the profiles `go tool trace -pprof=net|sync|syscall|sched` derives from an execution
 * trace. They carry the sample types of a mutex or block profile (contentions/count, delay/nanoseconds)
 * but the period type `trace/count`, which no runtime profile has; the four are written alike, so
 * which one a file is comes from its name when the name says (`sched.pprof`, `trace-net.pb.gz`), else
 * from where its goroutines waited (the leaf of every sample):
 * - net: every leaf a read, write or accept of the network poller (`internal/poll.(*FD).Read`, `net.`);
 * - syscall: every leaf a system call (`syscall.`, `internal/syscall/`, `golang.org/x/sys/`);
 * - sync: every leaf an operation that waits for another goroutine (a lock, a channel, a select, a
 *   WaitGroup or Cond, the runtime's own semaphores);
 * - sched: anything else (runnable goroutines waiting for a P, wherever they stopped: unlocks, sends,
 *   preemption points). Without a name, sync and sched are told apart by this judgement only.
 * The delays cover the trace's span, which the profile does not record: its duration stays 0 (unknown).
 */

type TraceKind = Extract<ProfileKind, `trace-${string}`>;

const LEAF: [TraceKind, RegExp][] = [
  [
    'trace-net',
    /^(internal\/poll\.\(\*FD\)\.(Read|Write|Accept|WaitWrite|WaitRead|Pread|Pwrite|RawRead|RawWrite)\w*|net\.)/,
  ],
  ['trace-syscall', /^(syscall\.|internal\/syscall\/|golang\.org\/x\/sys\/)/],
  // operations that block on another goroutine (the runtime's own waits on semaphores among them)
  [
    'trace-sync',
    /^(sync\.\(\*(Mutex|RWMutex)\)\.R?Lock|sync\.\(\*(WaitGroup|Cond)\)\.Wait|sync\.runtime_\w+|internal\/sync\.\S+|runtime\.(chanrecv\d?|chansend\d?|selectgo|block|semacquire\w*|gcMarkDone|traceAdvance)|internal\/poll\.\(\*FD\)\.Close)$/,
  ],
];

/** True for a profile `go tool trace -pprof=…` wrote. */
export function isTraceDerived(p: Profile): boolean {
  return (
    p.periodType?.type === 'trace' &&
    p.periodType.unit === 'count' &&
    p.sampleTypes.some((t) => t.type === 'delay' && t.unit === 'nanoseconds')
  );
}

/** Which of the four derivations a trace-derived profile is (see above). */
export function traceKind(p: Profile, fileName?: string): TraceKind {
  const base = (fileName ?? '').split(/[\\/]/).pop() ?? '';
  const named = /(?:^|[^a-z])(net|sync|syscall|sched)(?:[^a-z]|$)/i.exec(base);
  if (named) return `trace-${named[1]!.toLowerCase()}` as TraceKind;
  const leaves = new Set<string>();
  for (let s = 0; s < p.sampleStack.length; s++) {
    const st = p.sampleStack[s]!;
    const from = p.stackOffsets[st]!;
    if (p.stackOffsets[st + 1]! > from) leaves.add(p.frames[p.stackFrames[from]!]!.name);
  }
  if (leaves.size === 0) return 'trace-sched';
  for (const [kind, re] of LEAF) if ([...leaves].every((l) => re.test(l))) return kind;
  return 'trace-sched';
}

/** The profile with its kind set when it is trace-derived (and a comment saying so); else unchanged. */
export function markTraceDerived(p: Profile, fileName?: string): Profile {
  if (!isTraceDerived(p)) return p;
  const kind = traceKind(p, fileName);
  return {
    ...p,
    kind,
    comments: [
      ...p.comments,
      `derived from an execution trace (go tool trace -pprof=${kind.slice('trace-'.length)}): delays over the trace's span, whose length the profile does not record`,
    ],
  };
}
