/**
 * Profile kinds as the page offers them: which kinds the stages hold, the sample types of each, and
 * which kind a view reads. A view is always of one kind (the server never merges kinds); the stored
 * summary of each profile names its kind.
 */
import { KIND_LABELS, isProfileKind } from '../../../server/src/api/labels.ts';
import { kindedArtifact } from '../../../server/src/api/summaries.ts';
import type { Artifact, ProfileKind, ProfileSummary, SampleTypeInfo, Stage } from './api.ts';

export { KIND_LABELS, isProfileKind };

/** What an artifact gives as profiles: a profile itself; an execution trace, the four profiles derived from it. */
function profileSummaries(a: Artifact): ProfileSummary[] {
  const k = kindedArtifact(a);
  if (k.kind === 'profile') return [k.summary];
  if (k.kind === 'trace') return Object.values(k.summary.profiles ?? {});
  return [];
}

/** The stage's profiles of one kind (any kind when null), a trace's derived profiles among them. */
export function profilesOf(stage: Stage | undefined, kind: ProfileKind | null = null): ProfileSummary[] {
  if (!stage) return [];
  return stage.artifacts.flatMap((a) => profileSummaries(a).filter((p) => kind === null || p.kind === kind));
}

/** The kinds the stages' profiles are of: CPU first, then in order of first appearance (as the server). */
export function heldKinds(stages: readonly Stage[]): ProfileKind[] {
  const kinds: ProfileKind[] = [];
  for (const s of stages) for (const p of profilesOf(s)) if (!kinds.includes(p.kind)) kinds.push(p.kind);
  return kinds.includes('cpu') ? ['cpu', ...kinds.filter((k) => k !== 'cpu')] : kinds;
}

/** The sample types the stages' profiles of a kind hold, each once, in order of first appearance. */
export function sampleTypesOf(stages: readonly Stage[], kind: ProfileKind): SampleTypeInfo[] {
  const seen = new Map<string, SampleTypeInfo>();
  for (const s of stages)
    for (const p of profilesOf(s, kind)) for (const t of p.sampleTypes) if (!seen.has(t.type)) seen.set(t.type, t);
  return [...seen.values()];
}

/**
 * The kind a view reads, as the server chooses it: the kind asked for; else, given a sample type, the
 * kind whose own default it is, else the first kind holding it; else the first kind held (CPU first).
 */
export function resolveKind(
  stages: readonly Stage[],
  choice: { kind: ProfileKind | ''; sampleType: string },
): ProfileKind | null {
  const kinds = heldKinds(stages);
  if (choice.kind) return choice.kind;
  if (choice.sampleType) {
    const all = stages.flatMap((s) => profilesOf(s));
    const holding = kinds.filter((k) =>
      all.some((p) => p.kind === k && p.sampleTypes.some((t) => t.type === choice.sampleType)),
    );
    const own = holding.find((k) => all.some((p) => p.kind === k && p.defaultSampleType === choice.sampleType));
    if (own ?? holding[0]) return (own ?? holding[0])!;
  }
  return kinds[0] ?? null;
}

/** Whether a stage has a profile of the kind (of any kind when null). */
export function hasProfile(stage: Stage | undefined, kind: ProfileKind | null = null): stage is Stage {
  return profilesOf(stage, kind).length > 0;
}
