import type { Profile } from '../model/profile.ts';
import { nameIndex } from './names.ts';

/** pprof's sample filters by function name (regular expressions, matched anywhere in the name). */
export interface FrameFilters {
  /** Keep only samples with a frame matching. */
  focus?: RegExp;
  /** Drop samples with a frame matching. */
  ignore?: RegExp;
  /** Remove matching frames from stacks (the samples stay). */
  hide?: RegExp;
}

export function hasFilters(f: FrameFilters): boolean {
  return !!(f.focus || f.ignore || f.hide);
}

/**
 * Applies focus, ignore and hide as `go tool pprof -focus/-ignore/-hide` do. Each regular expression
 * is evaluated once per distinct function name, never per sample.
 */
export function filterProfile(p: Profile, f: FrameFilters): Profile {
  if (!hasFilters(f)) return p;
  const { names, frameName } = nameIndex(p);
  const test = (re: RegExp | undefined) => (re ? Uint8Array.from(names, (n) => (re.test(n) ? 1 : 0)) : null);
  const focus = test(f.focus);
  const ignore = test(f.ignore);
  const hide = test(f.hide);
  const numStacks = p.stackOffsets.length - 1;
  const keepStack = new Uint8Array(numStacks);
  const offsets = new Uint32Array(numStacks + 1);
  const frames: number[] = [];
  for (let st = 0; st < numStacks; st++) {
    const a = p.stackOffsets[st]!;
    const b = p.stackOffsets[st + 1]!;
    let focused = !focus;
    let ignored = false;
    for (let i = a; i < b; i++) {
      const n = frameName[p.stackFrames[i]!]!;
      if (focus?.[n]) focused = true;
      if (ignore?.[n]) ignored = true;
    }
    keepStack[st] = focused && !ignored ? 1 : 0;
    if (keepStack[st])
      for (let i = a; i < b; i++) if (!hide?.[frameName[p.stackFrames[i]!]!]) frames.push(p.stackFrames[i]!);
    offsets[st + 1] = frames.length;
  }
  const kept: number[] = [];
  for (let s = 0; s < p.sampleStack.length; s++) if (keepStack[p.sampleStack[s]!]) kept.push(s);
  const idx = Uint32Array.from(kept);
  return {
    ...p,
    stackOffsets: offsets,
    stackFrames: Uint32Array.from(frames),
    sampleStack: idx.map((s) => p.sampleStack[s]!),
    values: p.values.map((col) => Float64Array.from(idx, (s) => col[s]!)),
    sampleLabelSet: idx.map((s) => p.sampleLabelSet[s]!),
    stats: { ...p.stats, numSamples: kept.length },
  };
}
