import type { Profile } from '../model/profile.ts';

/**
 * Function-granularity view of a profile's frames: every frame gets a dense name id, so that
 * per-function sums can live in typed arrays. Two frames with the same function name share an id,
 * exactly as `go tool pprof` groups them at its default granularity.
 */
export interface NameIndex {
  names: string[];
  /** frameName[frameId] = name id */
  frameName: Uint32Array;
}

const cache = new WeakMap<Profile, NameIndex>();

export function nameIndex(p: Profile): NameIndex {
  let idx = cache.get(p);
  if (idx) return idx;
  const ids = new Map<string, number>();
  const names: string[] = [];
  const frameName = new Uint32Array(p.frames.length);
  p.frames.forEach((f, i) => {
    let id = ids.get(f.name);
    if (id === undefined) {
      id = names.length;
      names.push(f.name);
      ids.set(f.name, id);
    }
    frameName[i] = id;
  });
  idx = { names, frameName };
  cache.set(p, idx);
  return idx;
}

/**
 * Orders strings the way Go compares them (by UTF-8 bytes, i.e. by code point), so ties in a
 * ranking break exactly as pprof breaks them. UTF-16 order differs only around surrogates.
 */
export function compareNames(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}
