/** Generic helpers over `{name, value, children}` trees (API trees and d3 hierarchy nodes alike). */

export interface TreeLike<T> {
  children?: T[] | null;
}

/** Number of nodes, iteratively (profiles can be thousands of frames deep). */
export function countNodes<T extends TreeLike<T>>(root: T): number {
  let n = 0;
  const stack: T[] = [root];
  while (stack.length) {
    const node = stack.pop() as T;
    n++;
    if (node.children) for (const c of node.children) stack.push(c);
  }
  return n;
}

/** The widest node matching `match` (ties: the shallowest, then the first), or null. */
export function findWidest<T extends TreeLike<T>>(
  root: T,
  match: (n: T) => boolean,
  value: (n: T) => number,
): T | null {
  let best: T | null = null;
  let bestValue = -Infinity;
  const stack: T[] = [root];
  while (stack.length) {
    const node = stack.pop() as T;
    if (match(node)) {
      const v = value(node);
      if (v > bestValue) {
        best = node;
        bestValue = v;
      }
    }
    if (node.children) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as T);
  }
  return best;
}

/** Case-insensitive search matcher: a valid regex is used as a regex, anything else as a plain substring. */
export function makeMatcher(term: string): (name: string) => boolean {
  if (!term) return () => false;
  try {
    const re = new RegExp(term, 'i');
    return (name) => re.test(name);
  } catch {
    const lower = term.toLowerCase();
    return (name) => name.toLowerCase().includes(lower);
  }
}

export interface ValueTree {
  name: string;
  value: number;
  children: ValueTree[];
}

/**
 * Client-side safety net for very large trees: drop subtrees narrower than `minValue` (by |value|), keeping
 * parents' values so widths stay true (the dropped part shows as the parent's self time). Returns the
 * same object when nothing is dropped. Iterative, so deep stacks cannot overflow the call stack.
 */
export function pruneTree<T extends ValueTree>(root: T, minValue: number): { tree: T; dropped: number } {
  let dropped = 0;
  const copy = (n: T): T => ({ ...n, children: [] as T[] }) as T;
  const out = copy(root);
  const stack: [T, T][] = [[root, out]];
  while (stack.length) {
    const [src, dst] = stack.pop() as [T, T];
    for (const c of src.children as T[]) {
      if (Math.abs(c.value) < minValue) {
        dropped += countNodes<ValueTree>(c);
        continue;
      }
      const cc = copy(c);
      (dst.children as T[]).push(cc);
      stack.push([c, cc]);
    }
  }
  return dropped === 0 ? { tree: root, dropped } : { tree: out, dropped };
}
