import type { KeyTotals } from './flat-cum.ts';

/**
 * Trimmed call trees straight from columnar stacks, for one profile (a flamegraph) or two (a diff),
 * without ever building the untrimmed tree.
 *
 * The input is what the model already holds: each side's stacks as frame ids (leaf first), a key id
 * per frame (the granularity, see frame-keys.ts) and one value per stack. The tree is grown from
 * the root down by partitioning the stacks: at a node, the stacks passing through it are grouped by
 * their key at the next depth (a counting sort on key ids), each group's sums decide whether that
 * child is drawn (its weight at least minFraction of the root's), and only the children drawn are
 * grown further. A child too small to draw is not grown; its descendants are only counted (how many
 * distinct frames the trim removed), which needs the same grouping but no node. Every frame of every
 * stack is visited at most once, so the work is linear in the frames, and the memory is a few
 * integers per stack plus the nodes drawn: a profile of a million distinct stacks and ten million
 * tree nodes draws its few thousand nodes in a few arrays of a million entries.
 */

/**
 * Deepest call path kept in a JSON tree. Deeper frames fold into their ancestor at this depth (their
 * value stays in it), so serialisers and renderers never recurse 10,000 levels deep.
 */
export const MAX_TREE_DEPTH = 1024;

/** One profile's stacks, keyed, with a value per stack (see stackTotals). */
export interface TreeSide {
  /** stack i is stackFrames[stackOffsets[i] .. stackOffsets[i+1]), frame ids, leaf first. */
  stackOffsets: Uint32Array;
  stackFrames: Uint32Array;
  /** Key id of each frame id, in the key space shared by every side. */
  frameKey: Uint32Array;
  /** Value of each stack; stacks of value 0 are left out, as if absent. */
  stackValues: Float64Array;
}

export interface StackTreeOptions {
  /** A child is drawn when its weight is at least this fraction of the root's weight (0: all). */
  minFraction: number;
  /** Deepest node drawn, counted from the root of the tree returned. */
  maxDepth: number;
  /**
   * The call path (key ids, outermost first) whose subtree is wanted; empty for the whole tree,
   * null for a path that cannot exist (a label that is no key). The root returned is that path's
   * last node, and minFraction is taken of its own weight.
   */
  rootPath: Uint32Array | null;
  /**
   * How the frames removed below a node too small to draw are counted: 'all' counts every one of
   * them at any depth; 'to-max-depth' only those within maxDepth (nodes deeper never exist).
   */
  prunedCount: 'all' | 'to-max-depth';
  /** Whether to count the frames below a drawn node at maxDepth (folded into it). */
  countDepthTruncated: boolean;
  /**
   * Most nodes drawn. When minFraction would draw more, the threshold is raised to just above the
   * weight of the (maxNodes + 1)-th heaviest node, so the tree holds the heaviest nodes only, all
   * of a weight alike in or out (at most maxNodes of them). Absent: no cap.
   */
  maxNodes?: number;
}

/**
 * A trimmed tree as parallel arrays. Node 0 is the root; node i's children are the nodes
 * childStart[i] .. childStart[i] + childCount[i] - 1, in the order of their keys' labels; parents
 * always come before their children. A node's weight is |valueA| + |valueB| (valueB is 0 with one side).
 */
export interface StackTree {
  /** False when the root path passes through no stack (the tree is then an empty root). */
  found: boolean;
  size: number;
  /** Key id of each node; -1 for the root of the whole tree. */
  nodeKey: Int32Array;
  /** Sum of side 0's (A) and side 1's (B) stack values through each node. */
  valueA: Float64Array;
  valueB: Float64Array;
  childStart: Uint32Array;
  childCount: Uint32Array;
  /** Frames not drawn because they were too small (whole subtrees, each frame once). */
  prunedNodes: number;
  /** Weight and values of the subtrees not drawn (their roots': it stays counted in their parents). */
  prunedWeight: number;
  prunedValueA: number;
  prunedValueB: number;
  /** Frames below drawn nodes at maxDepth (when countDepthTruncated). */
  depthTruncatedNodes: number;
  /** Stacks (per side) within the root path that are deeper than maxDepth below it. */
  depthTruncatedStacks: number;
  /** The threshold applied, as a fraction of the root's weight (above minFraction when capped). */
  minFraction: number;
  /** True when maxNodes raised the threshold above minFraction. */
  capped: boolean;
}

/** Marks a counting task: frames below a node too small to draw, or past maxDepth. */
const PRUNED = -1;
const TOO_DEEP = -2;

/** Ranks of labels in JavaScript string order (how trees order children). */
function labelRanks(labels: readonly string[]): { rank: Uint32Array; byRank: Uint32Array } {
  const byRank = new Uint32Array(labels.length);
  for (let i = 0; i < byRank.length; i++) byRank[i] = i;
  byRank.sort((a, b) => {
    const x = labels[a]!;
    const y = labels[b]!;
    return x < y ? -1 : x > y ? 1 : 0;
  });
  const rank = new Uint32Array(labels.length);
  for (let r = 0; r < byRank.length; r++) rank[byRank[r]!] = r;
  return { rank, byRank };
}

/**
 * The merged stacks of one or two sides: the distinct key sequences among the stacks of non-zero
 * value of every side, each with its value on either side. Stacks that differ only in frames of the
 * same key (two lines of one function), and a stack both profiles have, travel as one entry.
 */
export interface MergedStacks {
  /** Side whose stack stands for the entry, and where that stack ends and how long it is. */
  eSide: Uint8Array;
  /** Which sides have a stack of non-zero value in the entry: bit 0 side 0, bit 1 side 1. */
  eIn: Uint8Array;
  eEnd: Uint32Array;
  eLen: Uint32Array;
  /** The entry's value on side 0 and side 1. */
  eA: Float64Array;
  eB: Float64Array;
  entries: number;
}

/** Stacks merged in one batch (see mergeStacks). */
const BATCH = 16;
/** Where mergeStacks leaves the reads it makes only to bring lines into the cache. */
let _touchSink = 0;

/**
 * The merge's arrays, kept from one merge to the next when they are small enough: a merge of the
 * 1M-sample pair allocated some 18 MB of typed arrays, and memory allocated outside the JS heap at
 * that rate makes V8 run a full collection every other diff. Above MERGE_SCRATCH_BYTES (the
 * profiles of millions of stacks) each merge allocates its own and nothing is kept. The arrays of a
 * merge are valid until the next merge (every caller uses them before it returns).
 */
type MergeScratch = Omit<MergedStacks, 'entries'> & { table: Int32Array };
const MERGE_SCRATCH_BYTES = 48 * 1024 * 1024;
let kept: MergeScratch | null = null;

/** Arrays for `n` entries and a table of `slots` slots, its slots empty. */
function mergeScratch(n: number, slots: number): MergeScratch {
  const bytes = n * 26 + slots * 16;
  if (kept && kept.eA.length >= n && kept.table.length >= slots * 4) {
    const table = kept.table.subarray(0, slots * 4);
    table.fill(0);
    return { ...kept, table };
  }
  const fresh: MergeScratch = {
    eSide: new Uint8Array(n),
    eIn: new Uint8Array(n),
    eEnd: new Uint32Array(n),
    eLen: new Uint32Array(n),
    eA: new Float64Array(n),
    eB: new Float64Array(n),
    table: new Int32Array(slots * 4),
  };
  if (bytes <= MERGE_SCRATCH_BYTES) kept = fresh;
  return fresh;
}

/**
 * Merges the stacks of one or two sides into entries (see MergedStacks).
 *
 * A function of its own (not inlined in buildStackTree) so the engine optimises its loops on their
 * own, whichever side first finds a stack already seen.
 */
export function mergeStacks(sides: readonly TreeSide[]): MergedStacks {
  if (sides.length < 1 || sides.length > 2) throw new RangeError('a stack tree has one or two sides');
  const sfA = sides[0]!.stackFrames;
  const fkA = sides[0]!.frameKey;
  let n = 0;
  for (const s of sides) for (let i = 0; i < s.stackValues.length; i++) if (s.stackValues[i] !== 0) n++;
  // Open addressing, four ints a slot: [hash, entry + 1 (0: empty), end, length × 2 + side], so a
  // probe and the check of a stack already seen read one cache line, not one per array. At most
  // three quarters full (when no two stacks merge; a diff of two runs of one program fills about
  // two fifths): about the memory two-int slots take at half full.
  let slots = 1024;
  while (slots * 3 < n * 4) slots *= 2;
  const { eSide, eIn, eEnd, eLen, eA, eB, table } = mergeScratch(n, slots);
  const mask = slots - 1;
  let entries = 0;
  // Stacks go in batches. Before a batch's probes and comparisons (each likely a cache miss: the
  // table and the stacks are far larger than the caches, and a stack seen before lies anywhere),
  // two passes only read what they will need — each stack's first slot, then, when its hash
  // matches, the stack that slot holds (a frame in every 16, one a cache line, and its last) — so
  // those misses are waited for together rather than one after the other. What these reads return
  // is not used (but kept in `touch`, so the engine keeps them); the probes and comparisons then
  // find the lines cached.
  const bSt = new Int32Array(BATCH);
  const bHash = new Int32Array(BATCH);
  let touch = 0;
  let vTouch = 0;
  for (let side = 0; side < sides.length; side++) {
    const s = sides[side]!;
    const v = s.stackValues;
    const off = s.stackOffsets;
    const sf = s.stackFrames;
    const fk = s.frameKey;
    const vals = side === 0 ? eA : eB;
    const bit = side + 1;
    for (let st0 = 0; st0 < v.length; st0 += BATCH) {
      const st1 = Math.min(st0 + BATCH, v.length);
      let nb = 0;
      for (let st = st0; st < st1; st++) {
        if (v[st] === 0) continue;
        const h = hashKeys(sf, fk, off[st]!, off[st + 1]!);
        bSt[nb] = st;
        bHash[nb++] = h;
      }
      for (let b = 0; b < nb; b++) touch ^= table[4 * (bHash[b]! & mask) + 3]!;
      for (let b = 0; b < nb; b++) {
        const q = 4 * (bHash[b]! & mask);
        const t = table[q + 1]!;
        if (t === 0 || table[q] !== bHash[b]) continue;
        const end = table[q + 2]!;
        const ls = table[q + 3]!;
        const other = (ls & 1) === 0 ? sfA : sf;
        for (let i = end - (ls >>> 1); i < end; i += 16) touch ^= other[i]!;
        touch ^= other[end - 1]! ^ eIn[t - 1]!;
        vTouch += vals[t - 1]!;
      }
      for (let b = 0; b < nb; b++) {
        const st = bSt[b]!;
        const h = bHash[b]!;
        const x = v[st]!;
        const start = off[st]!;
        const end = off[st + 1]!;
        const len = end - start;
        let slot = h & mask;
        let found = -1;
        for (;;) {
          const q = 4 * slot;
          const t = table[q + 1]!;
          if (t === 0) break;
          if (table[q] === h) {
            const ls = table[q + 3]!;
            if (ls >>> 1 === len) {
              const same =
                (ls & 1) === 0
                  ? sameKeys(sf, fk, start, sfA, fkA, table[q + 2]! - len, len)
                  : sameKeys(sf, fk, start, sf, fk, table[q + 2]! - len, len);
              if (same) {
                found = t - 1;
                break;
              }
            }
          }
          slot = (slot + 1) & mask;
        }
        if (found >= 0) {
          vals[found] = vals[found]! + x;
          eIn[found] = eIn[found]! | bit;
          continue;
        }
        const e = entries++;
        const q = 4 * slot;
        table[q] = h;
        table[q + 1] = e + 1;
        table[q + 2] = end;
        table[q + 3] = len * 2 + side;
        eSide[e] = side;
        eIn[e] = bit;
        eEnd[e] = end;
        eLen[e] = len;
        // Every field of a new entry is written: the arrays may hold an earlier merge's entries.
        eA[e] = side === 0 ? x : 0;
        eB[e] = side === 0 ? 0 : x;
      }
    }
  }
  _touchSink = touch + vTouch;
  return { eSide, eIn, eEnd, eLen, eA, eB, entries };
}

/**
 * keyTotals (flat-cum.ts) of both sides at once, from the merged entries instead of each side's
 * stacks: the entries hold every stack of non-zero value, each entry's keys are those of each of
 * its stacks, so a key's flat and cum on a side are the sums of that side's values over the
 * entries, and a side "touches" a key when one of its stacks in an entry holding it does. One walk
 * of the entries' frames, where the stacks of both sides are about twice as many frames for two
 * runs of one program. The sums are added in another order than keyTotals adds them: equal only
 * when every partial sum is exact (integer values, see model/exact-sums.ts), which the caller checks.
 */
export function mergedKeyTotals(sides: readonly TreeSide[], m: MergedStacks, numKeys: number): [KeyTotals, KeyTotals] {
  const sf0 = sides[0]!.stackFrames;
  const fk0 = sides[0]!.frameKey;
  const sf1 = sides[1]!.stackFrames;
  const fk1 = sides[1]!.frameKey;
  // Both sides' sums of a key side by side (2k: side 0, 2k + 1: side 1), one cache line for both.
  const flat = new Float64Array(2 * numKeys);
  const cum = new Float64Array(2 * numKeys);
  // Per key, the sides (eIn's bits) whose stacks hold it.
  const sidesOf = new Uint8Array(numKeys);
  // lastEntry[key] = entry + 1 of the last entry that counted this key (0 = none yet).
  const lastEntry = new Int32Array(numKeys);
  const { eSide, eIn, eEnd, eLen, eA, eB, entries } = m;
  for (let e = 0; e < entries; e++) {
    const len = eLen[e]!;
    if (len === 0) continue;
    const end = eEnd[e]!;
    const start = end - len;
    const sf = eSide[e] === 0 ? sf0 : sf1;
    const fk = eSide[e] === 0 ? fk0 : fk1;
    const bits = eIn[e]!;
    // A side without stacks in the entry has 0 there (never -0: sums start at +0 and add values
    // that are not 0), and adding it changes no sum, so both sides add without a test.
    const a = eA[e]!;
    const b = eB[e]!;
    const leaf = 2 * fk[sf[start]!]!;
    flat[leaf] = flat[leaf]! + a;
    flat[leaf + 1] = flat[leaf + 1]! + b;
    const mark = e + 1;
    for (let i = start; i < end; i++) {
      const k = fk[sf[i]!]!;
      if (lastEntry[k] === mark) continue;
      lastEntry[k] = mark;
      cum[2 * k] = cum[2 * k]! + a;
      cum[2 * k + 1] = cum[2 * k + 1]! + b;
      sidesOf[k] = sidesOf[k]! | bits;
    }
  }
  const out: [KeyTotals, KeyTotals] = [
    { flat: new Float64Array(numKeys), cum: new Float64Array(numKeys), touched: new Uint8Array(numKeys) },
    { flat: new Float64Array(numKeys), cum: new Float64Array(numKeys), touched: new Uint8Array(numKeys) },
  ];
  for (let k = 0; k < numKeys; k++) {
    for (let side = 0; side < 2; side++) {
      out[side]!.flat[k] = flat[2 * k + side]!;
      out[side]!.cum[k] = cum[2 * k + side]!;
      out[side]!.touched[k] = (sidesOf[k]! >>> side) & 1;
    }
  }
  return out;
}

function mix(h: number): number {
  h ^= h >>> 15;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h;
}

/** A hash of the keys of frames sf[start, end). */
function hashKeys(sf: Uint32Array, fk: Uint32Array, start: number, end: number): number {
  // Two chains (even and odd frames), so one multiply need not wait for the other.
  let h = 0x811c9dc5 ^ (end - start);
  let g = 0x01000193;
  let i = start;
  for (; i + 1 < end; i += 2) {
    h = Math.imul(h ^ fk[sf[i]!]!, 0x01000193);
    g = Math.imul(g ^ fk[sf[i + 1]!]!, 0x01000193);
  }
  if (i < end) h = Math.imul(h ^ fk[sf[i]!]!, 0x01000193);
  return mix(h ^ Math.imul(g, 0x9e3779b1));
}

/** Whether the keys of the `len` frames from sf1[i] and from sf2[j] are the same. */
function sameKeys(
  sf1: Uint32Array,
  fk1: Uint32Array,
  i: number,
  sf2: Uint32Array,
  fk2: Uint32Array,
  j: number,
  len: number,
): boolean {
  for (let k = 0; k < len; k++) if (fk1[sf1[i + k]!] !== fk2[sf2[j + k]!]) return false;
  return true;
}

/**
 * The trimmed tree of one side (a flamegraph) or two (a diff). `merged` is mergeStacks(sides) when
 * the caller has it already (the diff sums its rows over it too).
 */
export function buildStackTree(
  sides: readonly TreeSide[],
  labels: readonly string[],
  o: StackTreeOptions,
  merged: MergedStacks = mergeStacks(sides),
): StackTree {
  const numKeys = labels.length;
  const A = sides[0]!;
  const B = sides[1] ?? A;
  const sfA = A.stackFrames;
  const fkA = A.frameKey;
  const sfB = B.stackFrames;
  const fkB = B.frameKey;

  const { eSide, eEnd, eLen, eA, eB, entries } = merged;
  const keyAt = (e: number, d: number): number =>
    eSide[e] === 0 ? fkA[sfA[eEnd[e]! - 1 - d]!]! : fkB[sfB[eEnd[e]! - 1 - d]!]!;

  // The entries under the root path.
  const path = o.rootPath;
  const P = path ? path.length : 0;
  const ent = new Uint32Array(entries);
  let m = 0;
  const under = (e: number): boolean => {
    if (eLen[e]! < P) return false;
    for (let d = 0; d < P; d++) if (keyAt(e, d) !== path![d]) return false;
    return true;
  };
  if (path) for (let e = 0; e < entries; e++) if (under(e)) ent[m++] = e;
  const maxDepth = o.maxDepth;
  let rootA = 0;
  let rootB = 0;
  for (let i = 0; i < m; i++) {
    rootA += eA[ent[i]!]!;
    rootB += eB[ent[i]!]!;
  }
  // Stacks (of each side, as given) deeper than maxDepth below the root path.
  let depthTruncatedStacks = 0;
  if (path) {
    for (let side = 0; side < sides.length; side++) {
      const s = sides[side]!;
      for (let st = 0; st < s.stackValues.length; st++) {
        const len = s.stackOffsets[st + 1]! - s.stackOffsets[st]!;
        if (s.stackValues[st] === 0 || len - P <= maxDepth) continue;
        let ok = true;
        for (let d = 0; d < P && ok; d++) ok = s.frameKey[s.stackFrames[s.stackOffsets[st + 1]! - 1 - d]!] === path[d];
        if (ok) depthTruncatedStacks++;
      }
    }
  }
  const rootWeight = Math.abs(rootA) + Math.abs(rootB);
  let threshold = o.minFraction > 0 ? o.minFraction * rootWeight : 0;
  // The entries' order as found, so a second growth sums in the same order as the first.
  const ent0 = ent.slice(0, m);

  // Nodes drawn, grown as needed.
  let cap = 1024;
  let nodeKey = new Int32Array(cap);
  let valueA = new Float64Array(cap);
  let valueB = new Float64Array(cap);
  let childStart = new Uint32Array(cap);
  let childCount = new Uint32Array(cap);
  let size = 0;
  const newNode = (key: number, a: number, b: number): number => {
    if (size === cap) {
      cap *= 2;
      const k = new Int32Array(cap);
      k.set(nodeKey);
      nodeKey = k;
      const va = new Float64Array(cap);
      va.set(valueA);
      valueA = va;
      const vb = new Float64Array(cap);
      vb.set(valueB);
      valueB = vb;
      const cs = new Uint32Array(cap);
      cs.set(childStart);
      childStart = cs;
      const cc = new Uint32Array(cap);
      cc.set(childCount);
      childCount = cc;
    }
    nodeKey[size] = key;
    valueA[size] = a;
    valueB[size] = b;
    return size++;
  };

  let prunedNodes = 0;
  let prunedWeight = 0;
  let prunedValueA = 0;
  let prunedValueB = 0;
  let depthTruncatedNodes = 0;

  // Scratch of the grouping step, per key and per entry position.
  const cnt = new Uint32Array(numKeys);
  const sumA = new Float64Array(numKeys);
  const sumB = new Float64Array(numKeys);
  const groupEnd = new Uint32Array(numKeys);
  const touched = new Uint32Array(numKeys);
  const ekey = new Int32Array(m);
  const tmp = new Uint32Array(m);
  let ranks: { rank: Uint32Array; byRank: Uint32Array } | null = null;

  /**
   * Groups ent[lo, hi) by the key at depth d (entries ending above d first), leaving each touched
   * key's group at [groupEnd[k] - cnt[k], groupEnd[k]). Returns the number of keys touched.
   */
  const group = (lo: number, hi: number, d: number, sums: boolean): number => {
    let nt = 0;
    let ended = 0;
    for (let i = lo; i < hi; i++) {
      const e = ent[i]!;
      if (eLen[e]! <= d) {
        ekey[i] = -1;
        ended++;
        continue;
      }
      const k = eSide[e] === 0 ? fkA[sfA[eEnd[e]! - 1 - d]!]! : fkB[sfB[eEnd[e]! - 1 - d]!]!;
      ekey[i] = k;
      const c = cnt[k]!;
      cnt[k] = c + 1;
      if (c === 0) touched[nt++] = k;
      if (sums) {
        sumA[k] = sumA[k]! + eA[e]!;
        sumB[k] = sumB[k]! + eB[e]!;
      }
    }
    if (nt === 1 && ended === 0) {
      groupEnd[touched[0]!] = hi;
      return nt;
    }
    let p = lo + ended;
    for (let t = 0; t < nt; t++) {
      const k = touched[t]!;
      p += cnt[k]!;
      groupEnd[k] = p;
    }
    // Place back to front so each group keeps its entries' order (a stable counting sort).
    for (let i = hi - 1; i >= lo; i--) {
      const k = ekey[i]!;
      if (k < 0) tmp[--ended + lo] = ent[i]!;
      else tmp[--groupEnd[k]!] = ent[i]!;
    }
    for (let t = 0; t < nt; t++) {
      const k = touched[t]!;
      groupEnd[k] = groupEnd[k]! + cnt[k]!;
    }
    for (let i = lo; i < hi; i++) ent[i] = tmp[i]!;
    return nt;
  };

  const sortTouched = (nt: number): void => {
    ranks ??= labelRanks(labels);
    const { rank, byRank } = ranks;
    if (nt < 16) {
      for (let i = 1; i < nt; i++) {
        const k = touched[i]!;
        const r = rank[k]!;
        let j = i - 1;
        while (j >= 0 && rank[touched[j]!]! > r) {
          touched[j + 1] = touched[j]!;
          j--;
        }
        touched[j + 1] = k;
      }
      return;
    }
    const rs = new Uint32Array(nt);
    for (let i = 0; i < nt; i++) rs[i] = rank[touched[i]!]!;
    rs.sort();
    for (let i = 0; i < nt; i++) touched[i] = byRank[rs[i]!]!;
  };

  const clear = (nt: number): void => {
    for (let t = 0; t < nt; t++) {
      const k = touched[t]!;
      cnt[k] = 0;
      sumA[k] = 0;
      sumB[k] = 0;
    }
  };

  /**
   * The weight of the (n + 1)-th heaviest node of the tree at `threshold` (nodes counted from the
   * root, within maxDepth). A child weighs no more than its parent, so taking the heaviest node not
   * yet taken, from a heap of the children of those taken, visits nodes by decreasing weight; a
   * group of one stack is a chain of nodes of one weight, taken at once. Only the nodes taken are
   * grouped: the work is that of growing the n heaviest nodes.
   */
  const heaviestBeyond = (n: number): number => {
    const hw: number[] = [];
    const hLo: number[] = [];
    const hHi: number[] = [];
    const hD: number[] = [];
    const hLen: number[] = [];
    const heap: number[] = [];
    const above = (i: number, j: number) => hw[i]! > hw[j]!;
    const push = (w: number, lo: number, hi: number, d: number, len: number) => {
      const id = hw.length;
      hw.push(w);
      hLo.push(lo);
      hHi.push(hi);
      hD.push(d);
      hLen.push(len);
      let c = heap.length;
      heap.push(id);
      while (c > 0) {
        const p = (c - 1) >> 1;
        if (!above(heap[c]!, heap[p]!)) break;
        [heap[c], heap[p]] = [heap[p]!, heap[c]!];
        c = p;
      }
    };
    const pop = (): number => {
      const top = heap[0]!;
      const last = heap.pop()!;
      if (heap.length > 0) {
        heap[0] = last;
        let c = 0;
        for (;;) {
          const l = 2 * c + 1;
          const r = l + 1;
          let b = c;
          if (l < heap.length && above(heap[l]!, heap[b]!)) b = l;
          if (r < heap.length && above(heap[r]!, heap[b]!)) b = r;
          if (b === c) break;
          [heap[c], heap[b]] = [heap[b]!, heap[c]!];
          c = b;
        }
      }
      return top;
    };
    push(rootWeight, 0, m, P, 1);
    let taken = 0;
    while (heap.length > 0) {
      const id = pop();
      taken += hLen[id]!;
      if (taken > n) return hw[id]!;
      const lo = hLo[id]!;
      const hi = hHi[id]!;
      const d = hD[id]!;
      if (hLen[id]! > 1 || d - P >= maxDepth || hi === lo) continue;
      const nt = group(lo, hi, d, true);
      for (let t = 0; t < nt; t++) {
        const k = touched[t]!;
        const w = Math.abs(sumA[k]!) + Math.abs(sumB[k]!);
        if (w < threshold) continue;
        const end = groupEnd[k]!;
        const start = end - cnt[k]!;
        if (cnt[k] === 1) {
          // A chain: its nodes down to the stack's end or the depth limit.
          const len = Math.min(eLen[ent[start]!]!, P + maxDepth) - d;
          push(w, start, end, d + 1, len);
        } else push(w, start, end, d + 1, 1);
      }
      clear(nt);
    }
    return 0;
  };

  // Work list: (lo, hi, depth, node or PRUNED / TOO_DEEP), depth counted from the whole tree's root.
  /** Depth (from the whole tree's root) past which frames below a node not drawn are not counted. */
  const prunedLimit = o.prunedCount === 'to-max-depth' ? P + maxDepth : Number.MAX_SAFE_INTEGER;
  /** Grows the tree at `threshold` from scratch; false (unfinished) as soon as it holds more than `maxSize` nodes. */
  const grow = (maxSize: number): boolean => {
    size = 0;
    prunedNodes = 0;
    prunedWeight = 0;
    prunedValueA = 0;
    prunedValueB = 0;
    depthTruncatedNodes = 0;
    ent.set(ent0);
    // A node is a leaf until its children are grown (a chain's last node never is).
    childCount.fill(0);
    newNode(P > 0 ? path![P - 1]! : -1, rootA, rootB);
    const tasks: number[] = m > 0 ? [0, m, P, 0] : [];
    while (tasks.length > 0) {
      if (size > maxSize) return false;
      const node = tasks.pop()!;
      const d = tasks.pop()!;
      const hi = tasks.pop()!;
      const lo = tasks.pop()!;
      if (node < 0) {
        // Counting the frames of a subtree not drawn.
        const limit = node === PRUNED ? prunedLimit : Number.MAX_SAFE_INTEGER;
        if (d >= limit) continue;
        let counted = 0;
        if (hi - lo === 1) {
          const rest = Math.min(eLen[ent[lo]!]!, limit) - d;
          if (rest > 0) counted = rest;
        } else if (hi - lo === 2) {
          // Two stacks: their frames below d, less the prefix they share.
          const e1 = ent[lo]!;
          const e2 = ent[lo + 1]!;
          const l1 = Math.min(eLen[e1]!, limit);
          const l2 = Math.min(eLen[e2]!, limit);
          const l = Math.min(l1, l2);
          let dd = d;
          while (dd < l && keyAt(e1, dd) === keyAt(e2, dd)) dd++;
          counted = Math.max(0, l1 - d) + Math.max(0, l2 - d) - (dd - d);
        } else {
          const nt = group(lo, hi, d, false);
          counted = nt;
          for (let t = 0; t < nt; t++) {
            const k = touched[t]!;
            const end = groupEnd[k]!;
            // A group of one stack is a chain: counted here rather than as a task of its own.
            if (cnt[k] === 1) {
              const rest = Math.min(eLen[ent[end - 1]!]!, limit) - (d + 1);
              if (rest > 0) counted += rest;
            } else tasks.push(end - cnt[k]!, end, d + 1, node);
          }
          clear(nt);
        }
        if (node === PRUNED) prunedNodes += counted;
        else depthTruncatedNodes += counted;
        continue;
      }
      if (d - P >= maxDepth) {
        if (o.countDepthTruncated) tasks.push(lo, hi, d, TOO_DEEP);
        continue;
      }
      if (hi - lo === 1) {
        // One stack: a chain of nodes of its weight, all drawn if the first is.
        const e = ent[lo]!;
        const a = eA[e]!;
        const b = eB[e]!;
        const len = eLen[e]!;
        if (len > d && Math.abs(a) + Math.abs(b) >= threshold) {
          let parent = node;
          let dd = d;
          for (; dd < len && dd - P < maxDepth; dd++) {
            const c = newNode(keyAt(e, dd), a, b);
            childStart[parent] = c;
            childCount[parent] = 1;
            parent = c;
          }
          if (dd < len && o.countDepthTruncated) depthTruncatedNodes += len - dd;
          continue;
        }
      }
      const nt = group(lo, hi, d, true);
      sortTouched(nt);
      childStart[node] = size;
      let kids = 0;
      for (let t = 0; t < nt; t++) {
        const k = touched[t]!;
        const a = sumA[k]!;
        const b = sumB[k]!;
        const w = Math.abs(a) + Math.abs(b);
        const end = groupEnd[k]!;
        const start = end - cnt[k]!;
        if (w >= threshold) {
          const c = newNode(k, a, b);
          kids++;
          tasks.push(start, end, d + 1, c);
        } else {
          prunedNodes++;
          prunedWeight += w;
          prunedValueA += a;
          prunedValueB += b;
          if (end - start > 1) tasks.push(start, end, d + 1, PRUNED);
          else {
            const rest = Math.min(eLen[ent[start]!]!, prunedLimit) - (d + 1);
            if (rest > 0) prunedNodes += rest;
          }
        }
      }
      childCount[node] = kids;
      clear(nt);
    }
    return size <= maxSize;
  };

  let capped = false;
  const maxNodes = o.maxNodes ?? Number.POSITIVE_INFINITY;
  if (!grow(maxNodes)) {
    // Too many nodes at minFraction: draw those heavier than the (maxNodes + 1)-th heaviest.
    ent.set(ent0);
    threshold = nextUp(heaviestBeyond(maxNodes));
    capped = true;
    grow(Number.POSITIVE_INFINITY);
  }

  return {
    found: path !== null && (P === 0 || m > 0),
    size,
    nodeKey,
    valueA,
    valueB,
    childStart,
    childCount,
    prunedNodes,
    prunedWeight,
    prunedValueA,
    prunedValueB,
    depthTruncatedNodes,
    depthTruncatedStacks,
    minFraction: rootWeight > 0 ? threshold / rootWeight : 0,
    capped,
  };
}

/** The least double above x (x ≥ 0). */
function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  const f = new Float64Array([x]);
  const bits = new BigInt64Array(f.buffer);
  bits[0] = bits[0]! + 1n;
  return f[0]!;
}
