import type { Profile } from '../model/profile.ts';
import { type FrameKeys, functionKeys } from './frame-keys.ts';
import { compareNames } from './names.ts';

/** One function's totals for one sample type, in that type's unit. */
export interface FunctionTotals {
  name: string;
  /** Sum of the values of samples whose leaf frame is this function. */
  flat: number;
  /** Sum of the values of samples whose stack contains this function (once per sample). */
  cum: number;
}

/**
 * Sums each stack's value for one sample type. Samples sharing a stack are added up first, so the
 * per-function pass below walks every distinct stack once.
 */
export function stackTotals(p: Profile, sampleIndex: number): Float64Array {
  const values = p.values[sampleIndex];
  if (!values) throw new RangeError(`sample index ${sampleIndex} out of range`);
  const totals = new Float64Array(p.stackOffsets.length - 1);
  const stacks = p.sampleStack;
  for (let s = 0; s < stacks.length; s++) totals[stacks[s]!]! += values[s]!;
  return totals;
}

/**
 * Flat and cum per function, as `go tool pprof -top` computes them at function granularity (or per
 * key of another granularity, `keys`). Recursion never double-counts: a function's cum takes a
 * sample's value once however often the function appears in that sample's stack. Functions whose
 * flat and cum are both 0 are left out. The result is unsorted; see `sortByFlat` / `sortByCum`.
 */
export function flatCum(
  p: Profile,
  sampleIndex: number,
  stackValues = stackTotals(p, sampleIndex),
  keys: FrameKeys = functionKeys(p),
): FunctionTotals[] {
  const names = keys.keys;
  const { flat, cum, touched } = keyTotals(p.stackOffsets, p.stackFrames, keys.frameKey, stackValues, names.length);
  const out: FunctionTotals[] = [];
  for (let n = 0; n < names.length; n++) {
    if (!touched[n]) continue;
    if (flat[n] === 0 && cum[n] === 0) continue;
    out.push({ name: names[n]!, flat: flat[n]!, cum: cum[n]! });
  }
  return out;
}

/** Flat and cum per key id, and which keys the stacks of non-zero value hold (see keyTotals). */
export interface KeyTotals {
  flat: Float64Array;
  cum: Float64Array;
  touched: Uint8Array;
}

/**
 * flatCum's sums as arrays indexed by key id (frameKey maps frame ids to key ids below numKeys):
 * flat takes a stack's value at its leaf's key, cum once at every key of the stack, in stack order.
 * A key whose flat and cum are both 0 is no row of flatCum's, touched or not.
 */
export function keyTotals(
  stackOffsets: Uint32Array,
  stackFrames: Uint32Array,
  frameKey: Uint32Array,
  stackValues: Float64Array,
  numKeys: number,
): KeyTotals {
  const flat = new Float64Array(numKeys);
  const cum = new Float64Array(numKeys);
  const touched = new Uint8Array(numKeys);
  // lastStack[key] = stack id + 1 of the last stack that counted this key (0 = none yet).
  const lastStack = new Uint32Array(numKeys);
  for (let st = 0; st < stackValues.length; st++) {
    const v = stackValues[st]!;
    const start = stackOffsets[st]!;
    const end = stackOffsets[st + 1]!;
    if (start === end) continue;
    // A stack whose samples sum to zero still makes its functions appear (with zero), as pprof's
    // nodes do when positive and negative samples cancel; a zero-valued stack contributes nothing.
    if (v === 0) continue;
    flat[frameKey[stackFrames[start]!]!]! += v;
    const mark = st + 1;
    for (let i = start; i < end; i++) {
      const n = frameKey[stackFrames[i]!]!;
      if (lastStack[n] === mark) continue;
      lastStack[n] = mark;
      cum[n]! += v;
      touched[n] = 1;
    }
  }
  return { flat, cum, touched };
}

/** pprof's `-top` order: |flat| desc, then name, then |cum| desc. Sorts in place. */
export function sortByFlat<T extends FunctionTotals>(rows: T[]): T[] {
  return rows.sort(
    (a, b) => Math.abs(b.flat) - Math.abs(a.flat) || compareNames(a.name, b.name) || Math.abs(b.cum) - Math.abs(a.cum),
  );
}

/** pprof's `-top -cum` order: |cum| desc, then name, then |flat| desc. Sorts in place. */
export function sortByCum<T extends FunctionTotals>(rows: T[]): T[] {
  return rows.sort(
    (a, b) => Math.abs(b.cum) - Math.abs(a.cum) || compareNames(a.name, b.name) || Math.abs(b.flat) - Math.abs(a.flat),
  );
}

/** Sum of one sample type over all samples (including samples with an empty stack). */
export function total(p: Profile, sampleIndex: number): number {
  const values = p.values[sampleIndex];
  if (!values) throw new RangeError(`sample index ${sampleIndex} out of range`);
  let t = 0;
  for (let i = 0; i < values.length; i++) t += values[i]!;
  return t;
}

/**
 * pprof's total, the base of its percentages ("… of X total"): the sum of the absolute sample
 * values, so a delta profile (net/http/pprof's ?seconds=N, with negative in-use values) is not
 * shown as a near-zero total; and for the output of `go tool pprof -proto -diff_base`, the sum over
 * the base samples only (those labelled pprof::base=true), as pprof computes it. Equals `total`
 * for a profile without negative values or base samples.
 */
export function percentageBase(p: Profile, sampleIndex: number): number {
  const values = p.values[sampleIndex];
  if (!values) throw new RangeError(`sample index ${sampleIndex} out of range`);
  const baseSet = p.labelSets.map((ls) => ls.some((l) => l.key === 'pprof::base' && l.str === 'true'));
  let all = 0;
  let base = 0;
  for (let i = 0; i < values.length; i++) {
    const v = Math.abs(values[i]!);
    all += v;
    if (baseSet[p.sampleLabelSet[i]!]) base += v;
  }
  return base > 0 ? base : all;
}
