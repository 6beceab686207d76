import type { ProfileSummary } from '../api/resources.ts';
import type { Artifact, ComparisonTree, StageWithArtifacts } from '../store/index.ts';
import { KIND_LABELS } from '../api/labels.ts';
import type { Parsed } from '../ingest/detect.ts';
import type { Profile, ProfileKind } from '../model/profile.ts';
import { type StoredProfileSummary, type TraceProfileName, kinded } from '../model/artifact-summary.ts';
import { mergeProfiles } from '../analysis/merge.ts';
import { total } from '../analysis/flat-cum.ts';
import { type FrameFilters, filterProfile } from '../analysis/filter.ts';
import { describeSampleType, kindDefaultSampleType, profileKind } from '../analysis/sample-types.ts';
import { ServiceError } from './errors.ts';
import type { ModelCache } from './models.ts';

/**
 * A stage's profiles as the views read them: of one kind, merged. Which stage a request names (id or
 * name), which kind and sample type a view opens on, and what the API says of each stored profile all
 * come from here, so every view and the change engine choose alike.
 */

export type { StoredProfileSummary };

/**
 * A profile as the views read it: an uploaded profile, or an execution trace's derived profile (the
 * trace artifact with its summary replaced by that profile's, see traceProfiles).
 */
export type ProfileArtifact = Artifact & { summary: StoredProfileSummary };

/** The summary kept in the store for a parsed profile (what the stage view lists without re-parsing). */
export function profileSummary(p: Profile, totals: Record<string, number>): StoredProfileSummary {
  return {
    sampleTypes: p.sampleTypes.map((t) => ({ type: t.type, unit: t.unit })),
    defaultSampleType: p.defaultSampleType,
    kind: profileKind(p),
    durationNanos: p.durationNanos,
    timeNanos: p.timeNanos,
    numSamples: p.stats.numSamples,
    totals,
  };
}

/**
 * The kind of a stored profile. Summaries stored before kinds followed the window (a Go allocs delta
 * was once filed as a heap profile) are read with today's rule: a heap-type profile with a window is
 * allocations over it, one without is a heap snapshot.
 */
export function storedProfileKind(s: StoredProfileSummary): ProfileKind {
  if (s.kind === 'heap' || s.kind === 'allocs') return s.durationNanos > 0 ? 'allocs' : 'heap';
  return s.kind;
}

/** A stored profile summary as the API shows it: its kind by today's rule, its sample types described. */
export function apiProfileSummary(s: StoredProfileSummary): ProfileSummary {
  const kind = storedProfileKind(s);
  const duration = s.durationNanos ?? 0;
  return {
    kind,
    sampleTypes: s.sampleTypes.map((t) => describeSampleType(t, kind, duration)),
    defaultSampleType: kindDefaultSampleType(kind, s),
    durationNanos: duration,
    timeNanos: s.timeNanos ?? 0,
    numSamples: s.numSamples ?? 0,
    totals: s.totals ?? {},
  };
}

/**
 * The profile summary of an artifact the views read as a profile: an uploaded profile's, or the derived
 * profile's a trace artifact carries once profilesOfKind has given it that summary (so not `kinded`).
 */
export function summaryOf(a: Artifact): StoredProfileSummary {
  return a.summary as StoredProfileSummary;
}

/** The four profiles an execution trace yields, by the name `go tool trace -pprof=…` gives each. */
export const TRACE_PROFILES: readonly TraceProfileName[] = ['net', 'sync', 'syscall', 'sched'];
export type { TraceProfileName };
type TraceKind = `trace-${TraceProfileName}`;

export function isTraceKind(kind: ProfileKind): kind is TraceKind {
  return kind === 'trace-net' || kind === 'trace-sync' || kind === 'trace-syscall' || kind === 'trace-sched';
}

/**
 * A stage's execution traces as profiles of one trace kind: each trace artifact with its summary
 * replaced by that derived profile's (the artifact keeps its id, kind `trace` and bytes; StageProfiles
 * reads the profile out of the parsed trace).
 */
function traceProfiles(st: StageWithArtifacts, kind: TraceKind): ProfileArtifact[] {
  const name = kind.slice('trace-'.length) as TraceProfileName;
  return st.artifacts.flatMap((a) => {
    const k = kinded(a);
    const s = k.kind === 'trace' ? k.summary.profiles?.[name] : undefined;
    return s ? [{ ...a, summary: s }] : [];
  });
}

/** An uploaded profile of this kind (by today's rule, storedProfileKind). */
function isProfileOf(a: Artifact, kind: ProfileKind): a is ProfileArtifact {
  const k = kinded(a);
  return k.kind === 'profile' && storedProfileKind(k.summary) === kind;
}

/**
 * The profile artifacts of a stage, by kind, in upload order: for a trace kind, the profiles uploaded
 * as such (`go tool trace -pprof` output) and then those derived from the stage's execution traces.
 */
export function profilesOfKind(st: StageWithArtifacts, kind: ProfileKind): ProfileArtifact[] {
  const uploaded = st.artifacts.filter((a) => isProfileOf(a, kind));
  return isTraceKind(kind) ? [...uploaded, ...traceProfiles(st, kind)] : uploaded;
}

/** The kinds of a stage's artifacts read as profiles: its profiles', and the trace kinds its traces yield. */
function artifactKinds(a: Artifact): ProfileKind[] {
  const k = kinded(a);
  if (k.kind === 'profile') return [storedProfileKind(k.summary)];
  if (k.kind !== 'trace') return [];
  const held = k.summary.profiles ?? {};
  return TRACE_PROFILES.filter((n) => held[n]).map((n) => `trace-${n}` as const);
}

/** Whether a stage holds anything read as a profile (a profile, or an execution trace's derived ones). */
export function hasProfiles(st: StageWithArtifacts): boolean {
  return st.artifacts.some((a) => artifactKinds(a).length > 0);
}

/** The kinds a comparison's profiles are of, CPU first, then in order of first appearance. */
export function comparisonKinds(tree: ComparisonTree): ProfileKind[] {
  const kinds: ProfileKind[] = [];
  for (const st of tree.stages)
    for (const a of st.artifacts) for (const k of artifactKinds(a)) if (!kinds.includes(k)) kinds.push(k);
  return kinds.includes('cpu') ? ['cpu', ...kinds.filter((k) => k !== 'cpu')] : kinds;
}

/**
 * An artifact's summary as the API shows it: a profile's described (apiProfileSummary), and an
 * execution trace's with each derived profile described alike; other kinds as stored.
 */
export function apiArtifactSummary(a: Pick<Artifact, 'kind' | 'summary'>): unknown {
  const k = kinded(a);
  if (k.kind === 'profile') return apiProfileSummary(k.summary);
  if (k.kind === 'trace') {
    // The request figures without what only GET …/requests draws (the slowest requests' paths, their
    // wait stacks, the histogram): a page listing a comparison's files need not carry them.
    const r = k.summary.requests;
    const s = r
      ? {
          ...k.summary,
          requests: {
            ...r,
            histogram: undefined,
            waitStacks: undefined,
            slowest: r.slowest.map(({ path: _path, ...q }) => q),
          },
        }
      : k.summary;
    if (!s.profiles) return s;
    const profiles: Partial<Record<TraceProfileName, ProfileSummary>> = {};
    for (const n of TRACE_PROFILES) {
      const p = s.profiles[n];
      if (p) profiles[n] = apiProfileSummary(p);
    }
    return { ...s, profiles };
  }
  return a.summary;
}

/**
 * The stage a request names: its id, else the one stage with that name. A name several stages share
 * is refused naming them (use the id).
 */
export function findStage(tree: ComparisonTree, ref: string, param = 'stage'): StageWithArtifacts {
  const byId = tree.stages.find((s) => s.id === ref);
  if (byId) return byId;
  const byName = tree.stages.filter((s) => s.name === ref);
  if (byName.length === 1) return byName[0]!;
  if (byName.length > 1)
    throw new ServiceError(
      'ambiguous-stage',
      `${param}: ${byName.length} stages are named "${ref}"; give the stage id (${byName.map((s) => s.id).join(', ')})`,
      { param },
    );
  throw new ServiceError(
    'not-found',
    `${param}: comparison ${tree.comparison.id} has no stage "${ref}" (stages: ${tree.stages.map((s) => s.name).join(', ') || 'none'})`,
    { param },
  );
}

/** Which profiles a view reads. */
export interface ProfileChoice {
  kind?: ProfileKind;
  sampleType?: string;
}

/** A stage's profiles of one kind, merged, filtered, with the sample type the view reads. */
export interface StageProfile {
  stage: StageWithArtifacts;
  kind: ProfileKind;
  profile: Profile;
  artifacts: ProfileArtifact[];
  sampleType: string;
  sampleIndex: number;
  unit: string;
  /** The stage's total before focus/ignore/hide/show; null when no filter applied. */
  unfilteredTotal: number | null;
}

/**
 * The kind and sample type a view of a stage reads: the kind asked for; else, given a sample type, the
 * kind whose own default it is (allocations over a window for alloc_space, a heap snapshot for
 * inuse_space), else the first kind holding it; else the comparison's first kind (CPU when there is
 * one) if the stage has it, else the stage's own first.
 */
export function chooseKind(tree: ComparisonTree, st: StageWithArtifacts, choice: ProfileChoice): ProfileKind {
  if (choice.kind) return choice.kind;
  const stageKinds = comparisonKinds({ ...tree, stages: [st] });
  if (choice.sampleType) {
    const holding = stageKinds.filter((k) =>
      profilesOfKind(st, k).some((a) => summaryOf(a).sampleTypes.some((t) => t.type === choice.sampleType)),
    );
    const own = holding.find((k) =>
      profilesOfKind(st, k).some((a) => kindDefaultSampleType(k, summaryOf(a)) === choice.sampleType),
    );
    if (own ?? holding[0]) return (own ?? holding[0])!;
  }
  const first = comparisonKinds(tree).find((k) => stageKinds.includes(k));
  if (first) return first;
  throw new ServiceError('no-profile', `stage "${st.name}" has no profile`);
}

/** Reads a stage's profiles through the parsed-model cache. */
export class StageProfiles {
  constructor(readonly models: ModelCache) {}

  /** A profile artifact's profile; for an execution trace (see profilesOfKind), the derived one its summary names. */
  async profile(a: Artifact): Promise<Profile> {
    const parsed = await this.models.get(a);
    if (parsed.kind === 'trace') {
      const kind = summaryOf(a).kind;
      if (isTraceKind(kind)) return parsed.trace.profiles[kind.slice('trace-'.length) as TraceProfileName];
    }
    if (parsed.kind !== 'profile') throw new ServiceError('no-profile', `${a.filename} is not a profile`);
    return (parsed as Extract<Parsed, { kind: 'profile' }>).profile;
  }

  /** The stage's profiles of the chosen kind, merged (pprof's merge), then filtered. */
  async stageProfile(
    tree: ComparisonTree,
    stageRef: string,
    choice: ProfileChoice,
    filters: FrameFilters = {},
    param = 'stage',
  ): Promise<StageProfile> {
    const st = findStage(tree, stageRef, param);
    const kind = chooseKind(tree, st, choice);
    const artifacts = profilesOfKind(st, kind);
    if (artifacts.length === 0)
      throw new ServiceError('no-profile', `stage "${st.name}" has no ${kindLabel(kind)} profile`, { param });
    const type = choice.sampleType ?? kindDefaultSampleType(kind, summaryOf(artifacts[0]!));
    const withType = artifacts.filter((a) => summaryOf(a).sampleTypes.some((t) => t.type === type));
    if (withType.length === 0)
      throw new ServiceError(
        'no-profile',
        `stage "${st.name}" has no ${kindLabel(kind)} profile with sample type "${type}" (it has ${summaryOf(
          artifacts[0]!,
        )
          .sampleTypes.map((t) => t.type)
          .join(', ')})`,
        { param: 'sampleType' },
      );
    // Profiles of one kind may still differ in their sample types (a Node heap profile beside Go's):
    // merge those shaped like the first.
    const shape = (a: ProfileArtifact) =>
      summaryOf(a)
        .sampleTypes.map((t) => `${t.type}/${t.unit}`)
        .join(',');
    const sameShape = withType.filter((a) => shape(a) === shape(withType[0]!));
    // Go's heap and allocs endpoints, fetched without a window, write the same snapshot with different
    // defaults: never sum the two. Take those whose own default is the type read, else the first default.
    const defaultOf = (a: ProfileArtifact) => summaryOf(a).defaultSampleType;
    const preferred = sameShape.some((a) => defaultOf(a) === type) ? type : defaultOf(sameShape[0]!);
    const chosen = sameShape.filter((a) => defaultOf(a) === preferred);
    const merged = mergeProfiles(await Promise.all(chosen.map((a) => this.profile(a))));
    const profile = filterProfile(merged, filters);
    const sampleIndex = profile.sampleTypes.findIndex((t) => t.type === type);
    return {
      stage: st,
      kind,
      profile,
      artifacts: chosen,
      sampleType: type,
      sampleIndex,
      unit: profile.sampleTypes[sampleIndex]!.unit,
      unfilteredTotal: profile === merged ? null : total(merged, sampleIndex),
    };
  }
}

/** A kind in words, for messages and the picker. */
export function kindLabel(kind: ProfileKind): string {
  return KIND_LABELS[kind];
}
