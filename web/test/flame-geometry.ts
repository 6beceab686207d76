// Where a flamegraph draws a frame, worked out from the API's tree alone (shared by the end-to-end
// tests and the browser bench): root on top, one row per depth, each frame as wide as its value,
// children left to right in the tree's order.
import type { Locator } from 'playwright-core';

/** A tree as the API answers it (flamegraph or diff), enough to find where a frame is drawn. */
export interface DrawnNode {
  name: string;
  value: number;
  children: DrawnNode[];
}

/** Height of a flamegraph row in CSS pixels. */
export const FLAME_ROW = 18;

/** The call path (names below the root) of the widest frame whose name matches, or null. */
export function widestPath(tree: DrawnNode, match: (name: string) => boolean): string[] | null {
  let best: string[] | null = null;
  let bestValue = -1;
  const stack: [DrawnNode, string[]][] = tree.children.map((c) => [c, [c.name]]);
  while (stack.length > 0) {
    const [n, path] = stack.pop()!;
    if (match(n.name) && Math.abs(n.value) > bestValue) {
      best = path;
      bestValue = Math.abs(n.value);
    }
    for (const c of n.children) stack.push([c, [...path, c.name]]);
  }
  return best;
}

/**
 * Where the frame at `path` is drawn in `graph` (a `.flame-graph` figure showing `tree`), worked out from
 * the tree's values alone: root on top, one row per depth, each frame as wide as its value, children
 * left to right in the tree's order. In page coordinates; the graph is scrolled into view first.
 */
export async function framePoint(
  graph: Locator,
  tree: DrawnNode,
  path: readonly string[],
  at: 'centre' | 'top' = 'centre',
): Promise<{ x: number; y: number; width: number }> {
  const canvas = graph.locator('canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  if (!box) throw new Error('the flamegraph has no canvas in view');
  const total = Math.abs(tree.value);
  let node = tree;
  let left = 0;
  for (const name of path) {
    let found: DrawnNode | null = null;
    for (const c of node.children) {
      if (c.name === name) {
        found = c;
        break;
      }
      left += Math.abs(c.value);
    }
    if (!found) throw new Error(`no frame ${name} under ${node.name}`);
    node = found;
  }
  const width = (Math.abs(node.value) / total) * box.width;
  const x = box.x + (left / total) * box.width;
  const y = box.y + path.length * FLAME_ROW;
  return at === 'centre' ? { x: x + width / 2, y: y + FLAME_ROW / 2, width } : { x: x + width / 2, y: y + 2, width };
}
