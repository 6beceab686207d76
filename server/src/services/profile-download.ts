import { gzipSync } from 'node:zlib';
import { mergeProfiles } from '../analysis/merge.ts';
import { encodePprof } from '../ingest/pprof/encode.ts';
import type { Label, Profile } from '../model/profile.ts';
import type { ComparisonTree } from '../store/index.ts';
import { ServiceError } from './errors.ts';
import type { ProfileChoice, StageProfiles } from './stage-profiles.ts';

/**
 * A stage's profiles of one kind merged (the profile every view of the stage reads, unfiltered),
 * as a gzipped pprof file, its default sample type the one asked for.
 */
export async function stagePprof(
  stages: StageProfiles,
  tree: ComparisonTree,
  stage: string,
  choice: ProfileChoice,
): Promise<Buffer> {
  const sp = await stages.stageProfile(tree, stage, choice, {}, 'stageId');
  return gzipSync(encodePprof(sp.profile, { defaultSampleType: sp.sampleType }));
}

/**
 * Two stages as one pprof file in go tool pprof's -diff_base convention: the target's samples, then
 * the base's with their values negated and the label pprof::base=true (what pprof reads as the base
 * when it computes percentages), so that go tool pprof on it prints the diff.
 */
export async function diffPprof(
  stages: StageProfiles,
  tree: ComparisonTree,
  q: ProfileChoice & { base: string; target: string },
): Promise<Buffer> {
  const choice: ProfileChoice = {
    ...(q.kind ? { kind: q.kind } : {}),
    ...(q.sampleType ? { sampleType: q.sampleType } : {}),
  };
  const base = await stages.stageProfile(tree, q.base, choice, {}, 'base');
  const target = await stages.stageProfile(
    tree,
    q.target,
    { kind: base.kind, sampleType: base.sampleType },
    {},
    'target',
  );
  const shape = (p: Profile) => p.sampleTypes.map((t) => `${t.type}/${t.unit}`).join(',');
  if (shape(base.profile) !== shape(target.profile))
    throw new ServiceError(
      'no-profile',
      `the two stages' ${base.kind} profiles have different sample types (${shape(base.profile)} and ${shape(target.profile)})`,
      { param: 'target' },
    );
  const diff = mergeProfiles([target.profile, negatedBase(base.profile)]);
  return gzipSync(encodePprof(diff, { defaultSampleType: target.sampleType }));
}

/** The profile with every value negated and every sample labelled pprof::base=true. */
function negatedBase(p: Profile): Profile {
  const mark: Label = { key: 'pprof::base', str: 'true' };
  return {
    ...p,
    values: p.values.map((col) => col.map((v) => -v)),
    labelSets: p.labelSets.map((set) => [...set, mark]),
  };
}
