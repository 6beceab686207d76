import type { Profile } from '../model/profile.ts';
import { IngestError } from '../model/errors.ts';
import { compareNames } from './names.ts';
import { type KeyTotals, keyTotals, stackTotals, total } from './flat-cum.ts';
import { CallPathNotFound } from './call-tree.ts';
import { exactSums } from '../model/exact-sums.ts';
import { type FrameKeys, functionKeys, pathKeyIds, unionKeys } from './frame-keys.ts';
import {
  MAX_TREE_DEPTH,
  type MergedStacks,
  type TreeSide,
  buildStackTree,
  mergeStacks,
  mergedKeyTotals,
} from './stack-tree.ts';

/**
 * How two profiles are put on one scale before subtracting:
 * - absolute: raw values, exactly `go tool pprof -diff_base=BASE TARGET`;
 * - normalize: pprof's `-normalize`: the target is scaled so its total equals the base's (each
 *   target sample multiplied by baseTotal/targetTotal and rounded half away from zero, as pprof
 *   does), so the diff shows how the *distribution* changed at the base's scale;
 * - share: every value divided by its own profile's total (a fraction of the profile);
 * - per-request: every value divided by the requests its stage served in the profile's window.
 */
export type DiffMode = 'absolute' | 'normalize' | 'share' | 'per-request';

export interface DiffOptions {
  sampleType: string;
  mode: DiffMode;
  /** Requests served during each profile's window; required for `per-request`. */
  baseRequests?: number;
  targetRequests?: number;
  /** Drop tree nodes whose combined weight is below this fraction of the combined total. */
  minFraction?: number;
  /** Most tree nodes: minFraction is raised until the tree holds at most this many (see callTree). */
  maxNodes?: number;
  /**
   * The totals `normalize` and `share` scale by, when the profiles given were filtered: those of the
   * profiles before filtering. pprof normalizes when it loads the files, before -focus and the rest
   * apply, and its percentages are of the unfiltered total too. Default: the given profiles' totals.
   */
  scaleTotals?: { base: number; target: number };
  /**
   * The call path to root the tree at, as frame keys from the outermost; absent or empty: the whole
   * tree. minFraction is then of that node's own weight and the depth limit counts from it (rows and
   * totals stay those of the whole profiles). A path through no sample of either side throws
   * CallPathNotFound.
   */
  root?: readonly string[];
  /**
   * false: rows and totals only (the CLI's table), no tree: `tree` is then the bare root with both
   * totals and no children, and `trim` all zeros but `nodes: 1`. Default true.
   */
  tree?: boolean;
  /** The granularity of rows and tree nodes: each profile's frame keys; functions when absent. */
  keys?: (p: Profile) => FrameKeys;
}

export type DiffStatus = 'new' | 'removed' | 'changed' | 'unchanged';

/** One function in a diff: its figures in both profiles (after scaling) and the change. */
export interface DiffRow {
  name: string;
  base: { flat: number; cum: number };
  target: { flat: number; cum: number };
  deltaFlat: number;
  deltaCum: number;
  status: DiffStatus;
}

/**
 * A diff call-tree node, as the web client's canvas diff flamegraph draws it: `delta` is
 * target − base; `value` (the width) is base + target so that both sides fit and children nest.
 */
export interface DiffNode {
  name: string;
  value: number;
  delta: number;
  base: number;
  target: number;
  children: DiffNode[];
}

export interface DiffResult {
  mode: DiffMode;
  sampleType: string;
  /** Unit of every figure: the sample type's unit, "fraction" (share) or "UNIT/request". */
  unit: string;
  baseTotal: number;
  targetTotal: number;
  /** Factors applied to base and target values. */
  scale: { base: number; target: number };
  rows: DiffRow[];
  tree: DiffNode;
  trim: {
    /** Tree nodes left out because their weight was below minFraction of the root's (descendants included). */
    prunedNodes: number;
    /** Weight (|base| + |target|) of the subtrees left out, at their roots; it stays in their parents. */
    prunedValue: number;
    /** Nodes kept. */
    nodes: number;
    /** Stacks deeper than MAX_TREE_DEPTH, folded at that depth. */
    depthTruncatedStacks: number;
    /** The fraction of the root's weight below which subtrees were left out (above minFraction when capped). */
    minFraction: number;
    /** The node cap, when it raised the threshold above minFraction; else null. */
    nodeCap: number | null;
  };
}

function typeIndex(p: Profile, type: string, which: string): number {
  const i = p.sampleTypes.findIndex((t) => t.type === type);
  if (i < 0) {
    throw new IngestError(
      'malformed',
      `the ${which} profile has no sample type "${type}" (it has ${p.sampleTypes.map((t) => t.type).join(', ')})`,
    );
  }
  return i;
}

/**
 * Diffs target against base. Sample types must match by name and unit, as pprof requires.
 * Rows are sorted by |deltaFlat| desc, then name (then |deltaCum| desc).
 */
export function diffProfiles(base: Profile, target: Profile, opts: DiffOptions): DiffResult {
  const bi = typeIndex(base, opts.sampleType, 'base');
  const ti = typeIndex(target, opts.sampleType, 'target');
  const unitB = base.sampleTypes[bi]!.unit;
  const unitT = target.sampleTypes[ti]!.unit;
  if (unitB !== unitT)
    throw new IngestError(
      'malformed',
      `sample type ${opts.sampleType} has unit ${unitB} in the base and ${unitT} in the target`,
    );

  // The totals normalize and share scale by (a pass over every sample each: not made otherwise).
  const rawBaseTotal = (): number => opts.scaleTotals?.base ?? total(base, bi);
  const rawTargetTotal = (): number => opts.scaleTotals?.target ?? total(target, ti);
  let bScale = 1;
  let tScale = 1;
  let unit = unitB;
  let baseStacks: Float64Array;
  let targetStacks: Float64Array;
  if (opts.mode === 'normalize') {
    const bt = rawBaseTotal();
    const tt = rawTargetTotal();
    tScale = tt !== 0 ? bt / tt : 0;
    baseStacks = stackTotals(base, bi);
    targetStacks = roundedScaledStackTotals(target, ti, tScale);
  } else {
    if (opts.mode === 'share') {
      const bt = rawBaseTotal();
      const tt = rawTargetTotal();
      bScale = bt !== 0 ? 1 / bt : 0;
      tScale = tt !== 0 ? 1 / tt : 0;
      unit = 'fraction';
    } else if (opts.mode === 'per-request') {
      if (!(opts.baseRequests! > 0) || !(opts.targetRequests! > 0)) {
        throw new IngestError('malformed', 'per-request diff needs the requests served by both stages');
      }
      bScale = 1 / opts.baseRequests!;
      tScale = 1 / opts.targetRequests!;
      unit = `${unitB}/request`;
    }
    baseStacks = scaled(stackTotals(base, bi), bScale);
    targetStacks = scaled(stackTotals(target, ti), tScale);
  }

  const keys = unionKeys((opts.keys ?? functionKeys)(base), (opts.keys ?? functionKeys)(target));
  const sides: TreeSide[] = [
    { stackOffsets: base.stackOffsets, stackFrames: base.stackFrames, frameKey: keys.base, stackValues: baseStacks },
    {
      stackOffsets: target.stackOffsets,
      stackFrames: target.stackFrames,
      frameKey: keys.target,
      stackValues: targetStacks,
    },
  ];
  const numKeys = keys.keys.length;
  // The tree merges both sides' stacks; the rows' sums then take one walk of the merged entries
  // rather than one of each side's stacks, where that adds up to the same (exact sums).
  const merged = opts.tree === false ? null : mergeStacks(sides);
  const [bt, tt] =
    merged && exactSums(baseStacks) && exactSums(targetStacks)
      ? mergedKeyTotals(sides, merged, numKeys)
      : sides.map((x) => keyTotals(x.stackOffsets, x.stackFrames, x.frameKey, x.stackValues, numKeys));
  const rows = diffRows(keys.keys, bt!, tt!);
  const { tree, trim } = merged
    ? diffTree(sides, merged, keys.keys, opts.minFraction ?? 0, opts.root ?? [], opts.maxNodes)
    : bareRoot(sum(baseStacks), sum(targetStacks));
  return {
    mode: opts.mode,
    sampleType: opts.sampleType,
    unit,
    // Every sample belongs to a stack (an empty stack included), so these are the profiles' totals.
    baseTotal: sum(baseStacks),
    targetTotal: sum(targetStacks),
    scale: { base: bScale, target: tScale },
    rows,
    tree,
    trim,
  };
}

/**
 * One row per key that either side's table (flatCum) has: a key is in a side's table when a stack
 * of non-zero value holds it and its flat or cum there is not 0. Sorted by |deltaFlat| desc, then
 * name, then |deltaCum| desc (names are unique, so the order is total).
 */
function diffRows(labels: readonly string[], b: KeyTotals, t: KeyTotals): DiffRow[] {
  const rows: DiffRow[] = [];
  for (let k = 0; k < labels.length; k++) {
    const bf = b.flat[k]!;
    const bc = b.cum[k]!;
    const tf = t.flat[k]!;
    const tc = t.cum[k]!;
    const inBase = b.touched[k] === 1 && (bf !== 0 || bc !== 0);
    const inTarget = t.touched[k] === 1 && (tf !== 0 || tc !== 0);
    if (!inBase && !inTarget) continue;
    const status: DiffStatus = !inBase
      ? 'new'
      : !inTarget
        ? 'removed'
        : bf === tf && bc === tc
          ? 'unchanged'
          : 'changed';
    rows.push({
      name: labels[k]!,
      base: inBase ? { flat: bf, cum: bc } : { flat: 0, cum: 0 },
      target: inTarget ? { flat: tf, cum: tc } : { flat: 0, cum: 0 },
      deltaFlat: (inTarget ? tf : 0) - (inBase ? bf : 0),
      deltaCum: (inTarget ? tc : 0) - (inBase ? bc : 0),
      status,
    });
  }
  return rows.sort(
    (p, q) =>
      Math.abs(q.deltaFlat) - Math.abs(p.deltaFlat) ||
      compareNames(p.name, q.name) ||
      Math.abs(q.deltaCum) - Math.abs(p.deltaCum),
  );
}

function scaled(v: Float64Array, k: number): Float64Array {
  if (k === 1) return v;
  for (let i = 0; i < v.length; i++) v[i] = v[i]! * k;
  return v;
}

/** pprof's -normalize scales each sample and rounds it (half away from zero) before summing. */
function roundedScaledStackTotals(p: Profile, idx: number, k: number): Float64Array {
  const values = p.values[idx]!;
  const out = new Float64Array(p.stackOffsets.length - 1);
  for (let s = 0; s < values.length; s++) {
    const x = values[s]! * k;
    out[p.sampleStack[s]!]! += k === 1 ? values[s]! : Math.sign(x) * Math.round(Math.abs(x));
  }
  return out;
}

function sum(v: Float64Array): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i]!;
  return s;
}

/**
 * The diff tree: both sides' stacks in one key space, trimmed as it is grown (see stack-tree.ts), so
 * the untrimmed tree is never built. A node's width is |base| + |target|.
 */
function bareRoot(base: number, target: number): { tree: DiffNode; trim: DiffResult['trim'] } {
  return {
    tree: { name: 'root', value: Math.abs(base) + Math.abs(target), delta: target - base, base, target, children: [] },
    trim: { prunedNodes: 0, prunedValue: 0, nodes: 1, depthTruncatedStacks: 0, minFraction: 0, nodeCap: null },
  };
}

function diffTree(
  sides: readonly TreeSide[],
  merged: MergedStacks,
  labels: readonly string[],
  minFraction: number,
  root: readonly string[],
  maxNodes: number | undefined,
): { tree: DiffNode; trim: DiffResult['trim'] } {
  const t = buildStackTree(
    sides,
    labels,
    {
      minFraction,
      maxDepth: MAX_TREE_DEPTH,
      rootPath: pathKeyIds(labels, root),
      prunedCount: 'to-max-depth',
      countDepthTruncated: false,
      ...(maxNodes !== undefined ? { maxNodes } : {}),
    },
    merged,
  );
  if (!t.found) throw new CallPathNotFound(root);
  const objs: DiffNode[] = new Array(t.size);
  for (let i = 0; i < t.size; i++) {
    const b = t.valueA[i]!;
    const g = t.valueB[i]!;
    objs[i] = {
      name: i === 0 ? (root.length > 0 ? root[root.length - 1]! : 'root') : labels[t.nodeKey[i]!]!,
      value: Math.abs(b) + Math.abs(g),
      delta: g - b,
      base: b,
      target: g,
      children: [],
    };
  }
  for (let i = 0; i < t.size; i++) {
    const n = t.childCount[i]!;
    const s = t.childStart[i]!;
    const kids = objs[i]!.children;
    for (let c = s; c < s + n; c++) kids.push(objs[c]!);
  }
  return {
    tree: objs[0]!,
    trim: {
      prunedNodes: t.prunedNodes,
      prunedValue: t.prunedWeight,
      nodes: t.size,
      depthTruncatedStacks: t.depthTruncatedStacks,
      minFraction: t.minFraction,
      nodeCap: t.capped ? maxNodes! : null,
    },
  };
}
