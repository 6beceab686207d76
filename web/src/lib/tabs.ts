import type { ProfileKind, Stage } from './api.ts';
import { hasProfile } from './profile-kinds.ts';

/** One tab of the comparison page. Its panel is drawn by views/comparison-view.tsx (TAB_PANELS, by slug). */
export interface TabSpec {
  /** Its name in the address (`?tab=`) and in the page's ids. */
  slug: string;
  label: string;
  /** The tab is offered when some stage holds a file of one of these kinds. */
  shownFor: readonly string[];
  /** What a stage needs for the tab to draw it: the default pair is the last two stages that have it. */
  needs: (stage: Stage, kind: ProfileKind | null) => boolean;
  /** The tab reads profiles: the profile kind, sample type, filters and zoom apply to it. */
  profile: boolean;
  /** The pair reads as base → target (a change), rather than left and right side by side. */
  directed: boolean;
  /** Offered only when at least two stages have what it needs (a pair to set side by side). */
  pairOnly?: boolean;
}

const holds = (kind: string) => (s: Stage) => s.artifacts.some((a) => a.kind === kind);
// An execution trace gives profiles of its own kinds (trace-net, -sync, -syscall, -sched).
const PROFILES = ['profile', 'trace'] as const;
const profiled = (s: Stage, kind: ProfileKind | null) => hasProfile(s, kind);
/** A stage with an execution trace in which requests were found (its stored request figures). */
const tracedRequests = (s: Stage) =>
  s.artifacts.some((a) => {
    if (a.kind !== 'trace') return false;
    const r = (a.summary as { requests?: { status?: string; duration?: { count?: number } } | null }).requests;
    return r?.status === 'ok' && (r.duration?.count ?? 0) > 0;
  });

/** The tabs of the comparison page, in their order: the one list the address, the tab bar and the panels read. */
export const TAB_TABLE = [
  { slug: 'flame', label: 'Flamegraphs', shownFor: PROFILES, needs: profiled, profile: true, directed: false },
  { slug: 'diff', label: 'Diff', shownFor: PROFILES, needs: profiled, profile: true, directed: true },
  { slug: 'trends', label: 'Trajectory', shownFor: PROFILES, needs: profiled, profile: true, directed: false },
  { slug: 'sandwich', label: 'Sandwich', shownFor: PROFILES, needs: profiled, profile: true, directed: false },
  { slug: 'lines', label: 'Lines', shownFor: PROFILES, needs: profiled, profile: true, directed: false },
  {
    slug: 'load',
    label: 'Load tests',
    shownFor: ['loadtest'],
    needs: holds('loadtest'),
    profile: true,
    directed: false,
  },
  {
    slug: 'runtime',
    label: 'Runtime',
    shownFor: ['trace', 'metrics'],
    needs: profiled,
    profile: false,
    directed: true,
  },
  {
    slug: 'requests',
    label: 'Requests',
    shownFor: ['trace'],
    needs: tracedRequests,
    profile: false,
    directed: true,
    pairOnly: true,
  },
  {
    slug: 'bench',
    label: 'Benchmarks',
    shownFor: ['benchmark'],
    needs: holds('benchmark'),
    profile: false,
    directed: true,
  },
  { slug: 'gc', label: 'GC', shownFor: ['gctrace'], needs: holds('gctrace'), profile: false, directed: false },
] as const satisfies readonly TabSpec[];

export type Tab = (typeof TAB_TABLE)[number]['slug'];
/** The tabs' slugs, in order. */
export const TABS: readonly Tab[] = TAB_TABLE.map((t) => t.slug);

/** The row of a tab. */
export function tabSpec(tab: Tab): TabSpec {
  return TAB_TABLE.find((t) => t.slug === tab) as TabSpec;
}

/** The tabs worth showing: each when some stage has a file it draws; with nothing uploaded, the flamegraphs (which explain what each stage lacks). */
export function visibleTabs(stages: readonly Stage[]): { key: Tab; label: string }[] {
  const has = (kind: string) => stages.some((s) => s.artifacts.some((a) => a.kind === kind));
  const shown = TAB_TABLE.filter(
    (t: TabSpec) => t.shownFor.some(has) && (!t.pairOnly || stages.filter((s) => t.needs(s, null)).length >= 2),
  );
  return (shown.length > 0 ? shown : TAB_TABLE.filter((t) => t.slug === 'flame')).map((t) => ({
    key: t.slug,
    label: t.label,
  }));
}

/** The stages that have what a tab draws (the default pair is the last two of them). */
export function stagesWithWhatTheTabNeeds(stages: readonly Stage[], tab: Tab, kind: ProfileKind | null): Set<string> {
  const spec = tabSpec(tab);
  return new Set(stages.filter((s) => spec.needs(s, kind)).map((s) => s.id));
}
