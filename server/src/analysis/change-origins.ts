/**
 * Where a change between two profiles starts, as an engineer reading a diff flame graph would name it.
 *
 * Ranking functions by how much their share of the total moved promotes the callers of whatever
 * vanished: when dialing disappears, every surviving frame's share grows though none of them changed.
 * This walks the diff's call tree instead, on values already put on one scale (per request, per second):
 * - a call path whose whole subtree disappeared (target 0) or appeared (base 0) is named at its highest
 *   frame, once, as `removed` or `added`;
 * - below any other path, each child with a notable change anywhere beneath it is followed, and its whole
 *   change is left to it; what the followed children do not explain (the path's own time, and the small
 *   changes of its other children) is the path's own change, named `grew` or `shrank` when it is notable
 *   itself.
 * So an ancestor whose change its callees explain is never named, and a change spread thinly over many
 * callees is named at the frame where it spreads. A child whose net change is small is still followed when
 * a notable change lies beneath it (a caller that swapped one callee for another nets out). An anonymous
 * closure (`….func1`) at the top of a removed or added subtree is named by the callee that does the work,
 * as a reader would. Occurrences of one function in several call paths add up. "Notable" is an absolute
 * threshold in the diff's units (the caller picks it, e.g. 1 % of the base total).
 */

/** A node of a diff tree on one scale: `base` and `target` are the call path's values (cum). */
export interface ChangeTreeNode {
  name: string;
  base: number;
  target: number;
  children: ChangeTreeNode[];
}

export type OriginKind = 'removed' | 'added' | 'shrank' | 'grew';

export interface ChangeOrigin {
  name: string;
  change: OriginKind;
  /** Summed over the function's origin paths: their base and target values, and the change named. */
  base: number;
  target: number;
  delta: number;
  /** The call path of the function's largest origin, root first (the tree's root itself left out). */
  path: string[];
}

export interface OriginOptions {
  /** Smallest |change| worth naming, in the tree's units. */
  minDelta: number;
  /** Most origins returned (largest |delta| first). */
  limit?: number;
}

/** An origin as the walk finds it, before merging by name. */
type Found = ChangeOrigin;

/** A compiler-made closure (`main.handler.func1`, `pkg.(*T).m.func2.1`) or method value wrapper (`-fm`). */
const CLOSURE = /\.func\d+(\.\d+)*$|-fm$/;

/** Below a closure that heads a removed or added subtree: the callee carrying ≥ 90 % of its weight, if any. */
function workingFrame(n: ChangeTreeNode, path: string[], side: 'base' | 'target'): [ChangeTreeNode, string[]] {
  let node = n;
  let p = path;
  while (CLOSURE.test(node.name)) {
    const heavy = node.children.find((c) => Math.abs(c[side]) >= 0.9 * Math.abs(node[side]));
    if (!heavy) break;
    node = heavy;
    p = [...p, heavy.name];
  }
  return [node, p];
}

/** The largest change anywhere in each subtree (a vanished or new node counts by its weight). */
function largestChanges(root: ChangeTreeNode): Map<ChangeTreeNode, number> {
  const out = new Map<ChangeTreeNode, number>();
  const order: ChangeTreeNode[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    order.push(n);
    for (const c of n.children) stack.push(c);
  }
  for (let i = order.length - 1; i >= 0; i--) {
    const n = order[i]!;
    let m = Math.abs(n.target - n.base);
    for (const c of n.children) m = Math.max(m, out.get(c)!);
    out.set(n, m);
  }
  return out;
}

/** The origins of the change from base to target in a diff tree (see the file comment). */
export function changeOrigins(root: ChangeTreeNode, opts: OriginOptions): ChangeOrigin[] {
  const min = Math.abs(opts.minDelta);
  const found: Found[] = [];
  const largest = largestChanges(root);
  // Iterative: call paths can be a thousand frames deep.
  const stack: { node: ChangeTreeNode; path: string[] }[] = [{ node: root, path: [] }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    const isRoot = node === root;
    if (!isRoot && node.target === 0 && node.base !== 0) {
      if (Math.abs(node.base) >= min) {
        const [w, p] = workingFrame(node, path, 'base');
        found.push({ name: w.name, change: 'removed', base: node.base, target: 0, delta: -node.base, path: p });
      }
      continue;
    }
    if (!isRoot && node.base === 0 && node.target !== 0) {
      if (Math.abs(node.target) >= min) {
        const [w, p] = workingFrame(node, path, 'target');
        found.push({ name: w.name, change: 'added', base: 0, target: node.target, delta: node.target, path: p });
      }
      continue;
    }
    let explained = 0;
    for (const c of node.children) {
      // A child is followed when any change beneath it is notable, and then its whole change is its own
      // subtree's to name: counting it here too would name a change twice (a child whose net change is
      // small can hold a notable one below it, and that one is named where it is).
      if (largest.get(c)! >= min) {
        explained += c.target - c.base;
        stack.push({ node: c, path: [...path, c.name] });
      }
    }
    if (isRoot) continue;
    const own = node.target - node.base - explained;
    if (Math.abs(own) >= min)
      found.push({
        name: node.name,
        change: own > 0 ? 'grew' : 'shrank',
        base: node.base,
        target: node.target,
        delta: own,
        path,
      });
  }
  // One entry per function and direction of change: a function named in several paths adds up.
  const byName = new Map<string, Found & { largest: number }>();
  for (const f of found) {
    const key = `${f.change === 'removed' || f.change === 'shrank' ? '-' : '+'}${f.name}`;
    const prev = byName.get(key);
    if (!prev) {
      byName.set(key, { ...f, largest: Math.abs(f.delta) });
      continue;
    }
    prev.base += f.base;
    prev.target += f.target;
    prev.delta += f.delta;
    if (Math.abs(f.delta) > prev.largest) {
      prev.largest = Math.abs(f.delta);
      prev.path = f.path;
    }
    // A function partly removed and partly shrunk reads as shrunk.
    if (prev.change !== f.change) prev.change = prev.delta > 0 ? 'grew' : 'shrank';
  }
  return [...byName.values()]
    .sort((a, b) => Math.abs(b.delta) - Math.abs(a.delta) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, opts.limit ?? 10)
    .map(({ largest: _l, ...o }) => ({ ...o, path: o.path.slice(-12) }));
}
