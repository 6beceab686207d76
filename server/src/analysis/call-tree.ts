import type { Profile } from '../model/profile.ts';
import { type FrameKeys, functionKeys, pathKeyIds } from './frame-keys.ts';
import { stackTotals } from './flat-cum.ts';
import { MAX_TREE_DEPTH, type StackTree, buildStackTree } from './stack-tree.ts';

export { MAX_TREE_DEPTH };

/**
 * A call tree as the web client's canvas flamegraph draws it: each node's `value` is the total of the samples
 * whose stack passes through that call path (root first), in the sample type's unit. Children are
 * ordered by name, so two trees of the same program line up.
 */
export interface FlameNode {
  name: string;
  value: number;
  children: FlameNode[];
}

export interface TrimReport {
  /** Nodes removed because their value was below minFraction of the total (descendants included). */
  prunedNodes: number;
  /** Value of the removed subtrees' roots (it stays counted in their parents). */
  prunedValue: number;
  /** Nodes kept. */
  nodes: number;
  /** Nodes folded into an ancestor because they were deeper than MAX_TREE_DEPTH. */
  depthTruncatedNodes: number;
  /** The fraction of the root's value below which subtrees were left out: minFraction, or above it when capped. */
  minFraction: number;
  /** The node cap, when it raised the threshold above the minFraction asked for; else null. */
  nodeCap: number | null;
}

export interface CallTreeOptions {
  /**
   * The call path to root the tree at, as frame keys from the outermost (`['main', 'handler']`);
   * absent or empty: the whole profile. minFraction is then of that node's own value, and the depth
   * limit counts from it, so a subtree the whole tree trimmed away comes back in detail.
   */
  root?: readonly string[];
  /** The granularity of the tree's nodes; functions (pprof's default) when absent. */
  keys?: FrameKeys;
  /**
   * Most nodes drawn: when minFraction would draw more, it is raised until the tree holds the
   * heaviest nodes only, at most this many (the report gives the fraction applied). Default: no cap.
   */
  maxNodes?: number;
}

/** A root call path that passes through no sample: nothing to draw there. */
export class CallPathNotFound extends Error {
  constructor(readonly path: readonly string[]) {
    super(`no sample passes through the call path ${path.join(' → ')}`);
    this.name = 'CallPathNotFound';
  }
}

/**
 * The call tree of one sample type, every subtree whose |value| is below `minFraction` × |total|
 * left out (0 keeps everything). The dropped value stays in the parent's value, so widths remain
 * true; the report says how much was dropped. With `opts.root`, the subtree at that call path.
 */
export function callTree(
  p: Profile,
  sampleIndex: number,
  minFraction = 0,
  opts: CallTreeOptions = {},
): { tree: FlameNode; trim: TrimReport } {
  const keys = opts.keys ?? functionKeys(p);
  const root = opts.root ?? [];
  const t = buildStackTree(
    [
      {
        stackOffsets: p.stackOffsets,
        stackFrames: p.stackFrames,
        frameKey: keys.frameKey,
        stackValues: stackTotals(p, sampleIndex),
      },
    ],
    keys.keys,
    {
      minFraction,
      maxDepth: MAX_TREE_DEPTH,
      rootPath: pathKeyIds(keys.keys, root),
      prunedCount: 'all',
      countDepthTruncated: true,
      ...(opts.maxNodes !== undefined ? { maxNodes: opts.maxNodes } : {}),
    },
  );
  if (!t.found) throw new CallPathNotFound(root);
  return {
    tree: flameNodes(t, keys.keys, root.length > 0 ? root[root.length - 1]! : 'root'),
    trim: {
      prunedNodes: t.prunedNodes,
      prunedValue: t.prunedValueA,
      nodes: t.size,
      depthTruncatedNodes: t.depthTruncatedNodes,
      minFraction: t.minFraction,
      nodeCap: t.capped ? opts.maxNodes! : null,
    },
  };
}

/** Nested nodes of a one-sided stack tree. */
function flameNodes(t: StackTree, labels: readonly string[], rootName: string): FlameNode {
  const objs: FlameNode[] = new Array(t.size);
  for (let i = 0; i < t.size; i++) {
    const k = t.nodeKey[i]!;
    objs[i] = { name: i === 0 ? rootName : labels[k]!, value: t.valueA[i]!, children: [] };
  }
  for (let i = 0; i < t.size; i++) {
    const n = t.childCount[i]!;
    if (n === 0) continue;
    const s = t.childStart[i]!;
    const kids = objs[i]!.children;
    for (let c = s; c < s + n; c++) kids.push(objs[c]!);
  }
  return objs[0]!;
}
