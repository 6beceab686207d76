import type { Profile } from '../model/profile.ts';

/** Bytes a profile model occupies: its typed arrays plus an estimate per frame and label set. */
export function profileModelBytes(p: Profile): number {
  let n = p.stackOffsets.byteLength + p.stackFrames.byteLength + p.sampleStack.byteLength;
  n += p.sampleLabelSet.byteLength;
  for (const v of p.values) n += v.byteLength;
  for (const f of p.frames) n += 64 + 2 * (f.name.length + f.file.length);
  n += p.labelSets.length * 96;
  return n;
}
