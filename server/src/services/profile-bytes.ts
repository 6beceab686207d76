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

/**
 * Sample type names and units as the stores keep them: a NUL becomes U+FFFD (PostgreSQL cannot
 * hold NUL, see the stores' jsonText), so a type found in a stored summary is found in the model.
 */
export function storableSampleTypes(p: Profile): Profile {
  const clean = (s: string) => s.replaceAll('\u0000', '\ufffd');
  if (
    !p.sampleTypes.some((t) => t.type.includes('\u0000') || t.unit.includes('\u0000')) &&
    !p.defaultSampleType.includes('\u0000')
  )
    return p;
  return {
    ...p,
    sampleTypes: p.sampleTypes.map((t) => ({ type: clean(t.type), unit: clean(t.unit) })),
    defaultSampleType: clean(p.defaultSampleType),
    periodType: p.periodType ? { type: clean(p.periodType.type), unit: clean(p.periodType.unit) } : null,
  };
}
