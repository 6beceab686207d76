import { MAX_TREE_DEPTH, type TreeSide } from './stack-tree.ts';

/** One frame of the call tree whose name matches: its call path from the root, and its values per side. */
export interface SearchHit {
  /** Frame names below the root, outermost first; the last is the frame that matched. */
  path: string[];
  /** Total of the side's samples whose stack passes through this call path (side A; B is 0 with one side). */
  valueA: number;
  valueB: number;
}

export interface SearchResult {
  /** Total of the samples whose stack holds a matching frame, per side (each sample once). */
  matchedA: number;
  matchedB: number;
  /** Call-tree nodes (frames) whose name matches, drawn or not. */
  frames: number;
  /** Distinct names matching. */
  names: number;
  /** The heaviest matching frames (by |A| + |B|), at most `limit`. */
  hits: SearchHit[];
}

/**
 * Searches the whole call tree of one or two sides (the diff's) for frames whose label matches,
 * without building the tree: each stack is scanned for its deepest matching frame, and only stacks
 * holding one are walked into a trie of call paths down to that frame. So a term no frame matches
 * costs one pass over the stacks, and the trie holds the paths that lead to matches only. Frames
 * deeper than MAX_TREE_DEPTH are not searched (the trees fold them into their ancestor).
 */
export function searchStacks(
  sides: readonly TreeSide[],
  labels: readonly string[],
  match: (label: string) => boolean,
  limit: number,
): SearchResult {
  const numKeys = labels.length;
  // Whether each label matches, decided once per label.
  const matches = new Int8Array(numKeys).fill(-1);
  const isMatch = (k: number) => {
    let m = matches[k] as number;
    if (m < 0) {
      m = match(labels[k] as string) ? 1 : 0;
      matches[k] = m;
    }
    return m === 1;
  };
  // The trie: node 0 is the root; a child is found by parent × numKeys + key.
  const child = new Map<number, number>();
  const parent: number[] = [-1];
  const key: number[] = [-1];
  const valA: number[] = [0];
  const valB: number[] = [0];
  let matchedA = 0;
  let matchedB = 0;
  for (let side = 0; side < sides.length; side++) {
    const s = sides[side] as TreeSide;
    const vals = side === 0 ? valA : valB;
    const off = s.stackOffsets;
    const sf = s.stackFrames;
    const fk = s.frameKey;
    for (let st = 0; st < s.stackValues.length; st++) {
      const v = s.stackValues[st] as number;
      if (v === 0) continue;
      const start = off[st] as number;
      const end = off[st + 1] as number;
      // Frames are leaf first: the root is at end - 1. The deepest match within the depth limit.
      const top = Math.max(start, end - MAX_TREE_DEPTH);
      let deepest = -1;
      for (let i = top; i < end; i++) {
        if (isMatch(fk[sf[i] as number] as number)) {
          deepest = i;
          break;
        }
      }
      if (deepest < 0) continue;
      if (side === 0) matchedA += v;
      else matchedB += v;
      let node = 0;
      for (let i = end - 1; i >= deepest; i--) {
        const k = fk[sf[i] as number] as number;
        const slot = node * numKeys + k;
        let c = child.get(slot);
        if (c === undefined) {
          c = parent.length;
          parent.push(node);
          key.push(k);
          valA.push(0);
          valB.push(0);
          child.set(slot, c);
        }
        node = c;
        vals[node] = (vals[node] as number) + v;
      }
    }
  }
  const hitNodes: number[] = [];
  const names = new Set<number>();
  for (let n = 1; n < parent.length; n++)
    if (isMatch(key[n] as number)) {
      hitNodes.push(n);
      names.add(key[n] as number);
    }
  const weight = (n: number) => Math.abs(valA[n] as number) + Math.abs(valB[n] as number);
  hitNodes.sort((a, b) => weight(b) - weight(a) || a - b);
  const hits = hitNodes.slice(0, limit).map((n) => {
    const path: string[] = [];
    for (let m = n; m > 0; m = parent[m] as number) path.push(labels[key[m] as number] as string);
    return { path: path.reverse(), valueA: valA[n] as number, valueB: valB[n] as number };
  });
  return { matchedA, matchedB, frames: hitNodes.length, names: names.size, hits };
}
