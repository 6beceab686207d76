import type { Profile } from '../model/profile.ts';
import { nameIndex } from './names.ts';
import { keyIdOf } from './short-names.ts';

/**
 * A granularity: what two frames must share to be the same node of a call tree or the same row of
 * a table. Every frame of a profile gets a dense key id; `keys[id]` is the key's label. Functions are
 * the granularity today (pprof's default); a source line (`-lines`) or a file (`-files`) would be
 * another FrameKeys of the same profile, and the trees and the diff take any of them.
 */
export interface FrameKeys {
  /** Label of each key id (a function name, "file:line", a file name, …). */
  keys: string[];
  /** frameKey[frameId] = key id. */
  frameKey: Uint32Array;
}

/** Function granularity: frames of the same function name share a key (cached per profile). */
export function functionKeys(p: Profile): FrameKeys {
  const { names, frameName } = nameIndex(p);
  return { keys: names, frameKey: frameName };
}

/**
 * Puts two profiles' keys in one key space, so that a key id means the same thing on both sides of
 * a diff: the base keeps its ids, the target's keys missing from the base are appended.
 */
export function unionKeys(
  base: FrameKeys,
  target: FrameKeys,
): { keys: string[]; base: Uint32Array; target: Uint32Array } {
  const ids = new Map<string, number>();
  const keys = base.keys.slice();
  for (let i = 0; i < keys.length; i++) ids.set(keys[i]!, i);
  const remap = new Uint32Array(target.keys.length);
  for (let i = 0; i < target.keys.length; i++) {
    const k = target.keys[i]!;
    let id = ids.get(k);
    if (id === undefined) {
      id = keys.length;
      keys.push(k);
      ids.set(k, id);
    }
    remap[i] = id;
  }
  const t = new Uint32Array(target.frameKey.length);
  for (let f = 0; f < t.length; f++) t[f] = remap[target.frameKey[f]!]!;
  return { keys, base: base.frameKey, target: t };
}

/**
 * A call path given by its keys' labels (outermost first) as key ids; null when a label is not a key
 * of this granularity (no such path can exist). A function's full name stands for its short one.
 */
export function pathKeyIds(keys: readonly string[], path: readonly string[]): Uint32Array | null {
  if (path.length === 0) return new Uint32Array(0);
  const want = new Map<string, number>();
  for (let i = 0; i < path.length; i++) want.set(path[i]!, -1);
  for (let k = 0; k < keys.length; k++) if (want.has(keys[k]!)) want.set(keys[k]!, k);
  const out = new Uint32Array(path.length);
  for (let i = 0; i < path.length; i++) {
    let id = want.get(path[i]!)!;
    if (id < 0) id = keyIdOf(keys, path[i]!);
    if (id < 0) return null;
    out[i] = id;
  }
  return out;
}
