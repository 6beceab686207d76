import type { ProfileKind, Stage } from '../lib/api.ts';
import { hasProfile } from '../lib/profile-kinds.ts';
import type { Tab } from '../lib/url-state.ts';

export const TAB_DEFS: { key: Tab; label: string }[] = [
  { key: 'flame', label: 'Flamegraphs' },
  { key: 'diff', label: 'Diff' },
  { key: 'trends', label: 'Trajectory' },
  { key: 'sandwich', label: 'Sandwich' },
  { key: 'lines', label: 'Lines' },
  { key: 'load', label: 'Load tests' },
  { key: 'runtime', label: 'Runtime' },
  { key: 'bench', label: 'Benchmarks' },
  { key: 'gc', label: 'GC' },
];

/** The tabs worth showing: profile views, load tests, runtime, benchmarks, GC — each when some stage has such a file. */
export function visibleTabs(stages: Stage[]): typeof TAB_DEFS {
  const has = (kind: string) => stages.some((s) => s.artifacts.some((a) => a.kind === kind));
  const shown = TAB_DEFS.filter((t) => {
    if (t.key === 'load') return has('loadtest');
    if (t.key === 'bench') return has('benchmark');
    if (t.key === 'gc') return has('gctrace');
    if (t.key === 'runtime') return has('trace') || has('metrics');
    // an execution trace gives profiles of its own kinds (trace-net, -sync, -syscall, -sched)
    return has('profile') || has('trace');
  });
  // Nothing uploaded yet: the flamegraph tab explains what each stage lacks.
  return shown.length > 0 ? shown : TAB_DEFS.filter((t) => t.key === 'flame');
}

/**
 * The stages that have what a tab shows: a profile of the kind read (profile tabs), load tests,
 * benchmarks or GC traces. The default pair is the last two of them.
 */
export function stagesWithWhatTheViewNeeds(stages: Stage[], tab: Tab, kind: ProfileKind | null): Set<string> {
  const holds = (s: Stage) => {
    if (tab === 'load') return s.artifacts.some((a) => a.kind === 'loadtest');
    if (tab === 'bench') return s.artifacts.some((a) => a.kind === 'benchmark');
    if (tab === 'gc') return s.artifacts.some((a) => a.kind === 'gctrace');
    return hasProfile(s, kind);
  };
  return new Set(stages.filter(holds).map((s) => s.id));
}
