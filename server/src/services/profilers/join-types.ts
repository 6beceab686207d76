import type { Frame, Label, Profile } from '../../model/profile.ts';

/**
 * One profile of several sample types from profiles of one type each, as a profiler that stores each
 * sample type on its own answers them (Pyroscope: alloc_objects and alloc_space of the same stacks).
 * Samples are matched stack by stack: two samples are one when their stacks hold the same frames
 * (function, file, line, mapping, inlining) and they carry the same labels; a stack one part lacks
 * gets 0 for that part's type. Each part's frame table is kept whole (frames of one location stay
 * consecutive), so nothing is renamed or re-ordered; only samples are joined. A type's total, and
 * each function's flat and cum, are then exactly the part's.
 */
export function joinSampleTypes(parts: Profile[]): Profile {
  if (parts.length === 0) throw new Error('joinSampleTypes needs at least one profile');
  if (parts.length === 1) return parts[0]!;
  const frameKey = (f: Frame) =>
    `${f.name}\u0000${f.file}\u0000${f.line}\u0000${f.mapping ?? ''}\u0000${f.inlined ? 1 : 0}\u0000${f.standIn ?? ''}\u0000${f.fullName ?? ''}`;
  let numFrames = 0;
  let numStacks = 0;
  let numStackFrames = 0;
  for (const p of parts) {
    numFrames += p.frames.length;
    numStacks += p.stackOffsets.length - 1;
    numStackFrames += p.stackFrames.length;
  }
  const frames: Frame[] = new Array(numFrames);
  const stackOffsets = new Uint32Array(numStacks + 1);
  const stackFrames = new Uint32Array(numStackFrames);
  const labelSets: Label[][] = [[]];
  const labelIds = new Map<string, number>([['[]', 0]]);
  const bySample = new Map<string, number>();
  const sampleStack: number[] = [];
  const sampleLabelSet: number[] = [];
  const columns: number[][] = parts.map(() => []);
  let fOff = 0;
  let stOff = 0;
  let sfOff = 0;
  parts.forEach((p, t) => {
    for (let i = 0; i < p.frames.length; i++) frames[fOff + i] = p.frames[i]!;
    const ns = p.stackOffsets.length - 1;
    for (let i = 0; i < ns; i++) stackOffsets[stOff + i + 1] = p.stackOffsets[i + 1]! + sfOff;
    for (let i = 0; i < p.stackFrames.length; i++) stackFrames[sfOff + i] = p.stackFrames[i]! + fOff;
    const stackKeys = new Map<number, string>();
    const stackKey = (s: number) => {
      let k = stackKeys.get(s);
      if (k === undefined) {
        const ids: string[] = [];
        for (let j = p.stackOffsets[s]!; j < p.stackOffsets[s + 1]!; j++)
          ids.push(frameKey(p.frames[p.stackFrames[j]!]!));
        k = ids.join('\u0001');
        stackKeys.set(s, k);
      }
      return k;
    };
    const col = p.values[0] ?? new Float64Array(p.sampleStack.length);
    for (let i = 0; i < p.sampleStack.length; i++) {
      const labels = p.labelSets[p.sampleLabelSet[i]!] ?? [];
      const lk = JSON.stringify(labels);
      let ls = labelIds.get(lk);
      if (ls === undefined) {
        ls = labelSets.length;
        labelSets.push(labels);
        labelIds.set(lk, ls);
      }
      const key = `${stackKey(p.sampleStack[i]!)}\u0002${ls}`;
      let s = bySample.get(key);
      if (s === undefined) {
        s = sampleStack.length;
        bySample.set(key, s);
        sampleStack.push(p.sampleStack[i]! + stOff);
        sampleLabelSet.push(ls);
        for (const c of columns) c.push(0);
      }
      columns[t]![s]! += col[i]!;
    }
    fOff += p.frames.length;
    stOff += ns;
    sfOff += p.stackFrames.length;
  });
  const first = parts[0]!;
  const sampleTypes = parts.map((p) => p.sampleTypes[0] ?? { type: 'samples', unit: 'count' });
  return {
    ...first,
    sampleTypes,
    defaultSampleType: sampleTypes[sampleTypes.length - 1]!.type,
    comments: [],
    stats: {
      numSamples: sampleStack.length,
      numLocations: parts.reduce((a, p) => a + p.stats.numLocations, 0),
      numFunctions: parts.reduce((a, p) => a + p.stats.numFunctions, 0),
      numMappings: parts.reduce((a, p) => a + p.stats.numMappings, 0),
    },
    frames,
    stackOffsets,
    stackFrames,
    sampleStack: Uint32Array.from(sampleStack),
    values: columns.map((c) => Float64Array.from(c)),
    sampleLabelSet: Uint32Array.from(sampleLabelSet),
    labelSets,
  };
}
