import type { Label, Profile } from '../model/profile.ts';
import { IngestError } from '../model/errors.ts';
import { minOf } from './extent.ts';

/**
 * Merges profiles of the same kind (same sample types, in the same order) into one, as pprof
 * merges several files: samples are concatenated, the earliest time is kept and durations add up.
 * A stage with three CPU profiles is analysed as their merge.
 */
export function mergeProfiles(profiles: Profile[]): Profile {
  if (profiles.length === 0) throw new Error('mergeProfiles needs at least one profile');
  if (profiles.length === 1) return profiles[0]!;
  const first = profiles[0]!;
  const typeKey = (p: Profile) => p.sampleTypes.map((t) => `${t.type}/${t.unit}`).join(',');
  const key = typeKey(first);
  for (const p of profiles) {
    if (typeKey(p) !== key) {
      throw new IngestError('malformed', `cannot merge profiles with different sample types (${key} vs ${typeKey(p)})`);
    }
  }
  let numFrames = 0;
  let numStacks = 0;
  let numStackFrames = 0;
  let numSamples = 0;
  for (const p of profiles) {
    numFrames += p.frames.length;
    numStacks += p.stackOffsets.length - 1;
    numStackFrames += p.stackFrames.length;
    numSamples += p.sampleStack.length;
  }
  const frames = new Array(numFrames);
  const stackOffsets = new Uint32Array(numStacks + 1);
  const stackFrames = new Uint32Array(numStackFrames);
  const sampleStack = new Uint32Array(numSamples);
  const values = first.sampleTypes.map(() => new Float64Array(numSamples));
  const sampleLabelSet = new Uint32Array(numSamples);
  const labelSets: Label[][] = [[]];
  let fOff = 0;
  let stOff = 0;
  let sfOff = 0;
  let sOff = 0;
  for (const p of profiles) {
    for (let i = 0; i < p.frames.length; i++) frames[fOff + i] = p.frames[i];
    const ns = p.stackOffsets.length - 1;
    for (let i = 0; i < ns; i++) stackOffsets[stOff + i + 1] = p.stackOffsets[i + 1]! + sfOff;
    for (let i = 0; i < p.stackFrames.length; i++) stackFrames[sfOff + i] = p.stackFrames[i]! + fOff;
    const lsOff = labelSets.length - 1;
    for (let i = 1; i < p.labelSets.length; i++) labelSets.push(p.labelSets[i]!);
    for (let s = 0; s < p.sampleStack.length; s++) {
      sampleStack[sOff + s] = p.sampleStack[s]! + stOff;
      const ls = p.sampleLabelSet[s]!;
      sampleLabelSet[sOff + s] = ls === 0 ? 0 : ls + lsOff;
    }
    p.values.forEach((col, t) => {
      values[t]!.set(col, sOff);
    });
    fOff += p.frames.length;
    stOff += ns;
    sfOff += p.stackFrames.length;
    sOff += p.sampleStack.length;
  }
  const times = profiles.map((p) => p.timeNanos).filter((t) => t !== 0);
  return {
    ...first,
    timeNanos: times.length > 0 ? minOf(times) : 0,
    durationNanos: profiles.reduce((a, p) => a + p.durationNanos, 0),
    comments: profiles.flatMap((p) => p.comments),
    stats: {
      numSamples,
      numLocations: profiles.reduce((a, p) => a + p.stats.numLocations, 0),
      numFunctions: profiles.reduce((a, p) => a + p.stats.numFunctions, 0),
      numMappings: profiles.reduce((a, p) => a + p.stats.numMappings, 0),
    },
    frames,
    stackOffsets,
    stackFrames,
    sampleStack,
    values,
    sampleLabelSet,
    labelSets,
  };
}
