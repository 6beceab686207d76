import type { Profile } from '../model/profile.ts';
import { stackTotals } from './flat-cum.ts';
import { nameIndex } from './names.ts';

/**
 * A call tree in the shape d3-flame-graph reads: each node's `value` is the total of the samples
 * whose stack passes through that call path (root first), in the sample type's unit. Children are
 * ordered by name, so two trees of the same program line up.
 */
export interface FlameNode {
  name: string;
  value: number;
  children: FlameNode[];
}

/**
 * Deepest call path kept in a JSON tree. Deeper frames fold into their ancestor at this depth (their
 * value stays in it), so serialisers and renderers never recurse 10,000 levels deep.
 */
export const MAX_TREE_DEPTH = 1024;

export interface TrimReport {
  /** Nodes removed because their value was below minFraction of the total (descendants included). */
  prunedNodes: number;
  /** Value of the removed subtrees' roots (it stays counted in their parents). */
  prunedValue: number;
  /** Nodes kept. */
  nodes: number;
  /** Nodes folded into an ancestor because they were deeper than MAX_TREE_DEPTH. */
  depthTruncatedNodes: number;
}

/**
 * A tree as flat parallel arrays: node i has a name id, a value, and a parent. Node 0 is the root.
 * Built once per (profile, sample type); views (JSON trees, diffs) are derived from it.
 */
export interface PathTree {
  names: string[];
  nodeName: Uint32Array;
  nodeParent: Int32Array;
  nodeValue: Float64Array;
  size: number;
}

/** Builds the path tree of one sample type from per-stack values (see stackTotals). */
export function buildPathTree(p: Profile, stackValues: Float64Array): PathTree {
  const { names, frameName } = nameIndex(p);
  const numNames = names.length + 1;
  let cap = 1024;
  let nodeName = new Uint32Array(cap);
  let nodeParent = new Int32Array(cap);
  let nodeValue = new Float64Array(cap);
  nodeParent[0] = -1;
  nodeName[0] = names.length; // the root's own name slot
  let size = 1;
  const child = new Map<number, number>();
  const { stackOffsets, stackFrames } = p;
  for (let st = 0; st < stackValues.length; st++) {
    const v = stackValues[st]!;
    if (v === 0) continue;
    nodeValue[0]! += v;
    let node = 0;
    const start = stackOffsets[st]!;
    for (let i = stackOffsets[st + 1]! - 1; i >= start; i--) {
      const n = frameName[stackFrames[i]!]!;
      const key = node * numNames + n;
      let c = child.get(key);
      if (c === undefined) {
        if (size === cap) {
          cap *= 2;
          const nn = new Uint32Array(cap);
          nn.set(nodeName);
          nodeName = nn;
          const np = new Int32Array(cap);
          np.set(nodeParent);
          nodeParent = np;
          const nv = new Float64Array(cap);
          nv.set(nodeValue);
          nodeValue = nv;
        }
        c = size++;
        nodeName[c] = n;
        nodeParent[c] = node;
        child.set(key, c);
      }
      nodeValue[c]! += v;
      node = c;
    }
  }
  return { names: [...names, 'root'], nodeName, nodeParent, nodeValue, size };
}

/**
 * Turns a path tree into nested nodes, dropping every subtree whose |value| is below
 * `minFraction` × |total| (0 keeps everything). The dropped value stays in the parent's value,
 * so widths remain true; the report says how much was dropped.
 */
export function toFlameTree(
  t: PathTree,
  minFraction = 0,
  rootName = 'root',
  maxDepth = MAX_TREE_DEPTH,
): { tree: FlameNode; trim: TrimReport } {
  const total = Math.abs(t.nodeValue[0]!);
  const threshold = minFraction > 0 ? minFraction * total : 0;
  const objs: (FlameNode | undefined)[] = new Array(t.size);
  const trim: TrimReport = { prunedNodes: 0, prunedValue: 0, nodes: 0, depthTruncatedNodes: 0 };
  const dropped = new Uint8Array(t.size);
  const depth = new Uint32Array(t.size);
  objs[0] = { name: rootName, value: t.nodeValue[0]!, children: [] };
  trim.nodes = 1;
  // Parents are always created before their children, so one forward pass suffices.
  for (let i = 1; i < t.size; i++) {
    const parent = t.nodeParent[i]!;
    if (dropped[parent]) {
      // Below a dropped node: dropped for the same reason (1 = small, 2 = too deep).
      dropped[i] = dropped[parent]!;
      if (dropped[i] === 2) trim.depthTruncatedNodes++;
      else trim.prunedNodes++;
      continue;
    }
    depth[i] = depth[parent]! + 1;
    if (depth[i]! > maxDepth) {
      dropped[i] = 2;
      trim.depthTruncatedNodes++;
      continue;
    }
    const v = t.nodeValue[i]!;
    if (threshold > 0 && Math.abs(v) < threshold) {
      dropped[i] = 1;
      trim.prunedNodes++;
      trim.prunedValue += v;
      continue;
    }
    const node: FlameNode = { name: t.names[t.nodeName[i]!]!, value: v, children: [] };
    objs[i] = node;
    objs[parent]!.children.push(node);
    trim.nodes++;
  }
  sortChildren(objs[0]!);
  return { tree: objs[0]!, trim };
}

function sortChildren(root: FlameNode): void {
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.children.length > 1) n.children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const c of n.children) stack.push(c);
  }
}

/** The call tree of one sample type, trimmed at minFraction. */
export function callTree(p: Profile, sampleIndex: number, minFraction = 0): { tree: FlameNode; trim: TrimReport } {
  return toFlameTree(buildPathTree(p, stackTotals(p, sampleIndex)), minFraction);
}
