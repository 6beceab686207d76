import type { Profile } from '../model/profile.ts';
import type { FlameNode } from './call-tree.ts';
import { MAX_TREE_DEPTH } from './call-tree.ts';
import { stackTotals } from './flat-cum.ts';
import { type FrameKeys, functionKeys } from './frame-keys.ts';
import { keyIdOf } from './short-names.ts';

export interface Sandwich {
  name: string;
  flat: number;
  cum: number;
  /** Who calls the function: rooted at it, each child one caller further up. */
  callers: FlameNode;
  /** What the function calls: rooted at it, as in a flame graph. */
  callees: FlameNode;
}

/**
 * The callers and callees of one function (or one key of another granularity, `keys`) across all its
 * call paths. Under recursion, callees are
 * taken below the function's outermost occurrence and callers above its innermost one, so a
 * sample is counted once on each side.
 */
export function sandwich(p: Profile, sampleIndex: number, fn: string, keys: FrameKeys = functionKeys(p)): Sandwich {
  const { keys: names, frameKey: frameName } = keys;
  // a function's full name (hover, an old link) stands for the short one the views show
  const target = keyIdOf(names, fn);
  if (target >= 0) fn = names[target]!;
  const values = stackTotals(p, sampleIndex);
  const callers: FlameNode = { name: fn, value: 0, children: [] };
  const callees: FlameNode = { name: fn, value: 0, children: [] };
  let flat = 0;
  const add = (root: FlameNode, path: number[], v: number) => {
    root.value += v;
    let node = root;
    for (const n of path.slice(0, MAX_TREE_DEPTH)) {
      const name = names[n]!;
      let c = node.children.find((x) => x.name === name);
      if (!c) {
        c = { name, value: 0, children: [] };
        node.children.push(c);
      }
      c.value += v;
      node = c;
    }
  };
  if (target >= 0) {
    for (let st = 0; st < values.length; st++) {
      const v = values[st]!;
      if (v === 0) continue;
      const a = p.stackOffsets[st]!;
      const b = p.stackOffsets[st + 1]!;
      let inner = -1;
      let outer = -1;
      for (let i = a; i < b; i++) {
        if (frameName[p.stackFrames[i]!] === target) {
          if (inner < 0) inner = i;
          outer = i;
        }
      }
      if (inner < 0) continue;
      if (inner === a) flat += v;
      const up: number[] = [];
      for (let i = inner + 1; i < b; i++) up.push(frameName[p.stackFrames[i]!]!);
      add(callers, up, v);
      const down: number[] = [];
      for (let i = outer - 1; i >= a; i--) down.push(frameName[p.stackFrames[i]!]!);
      add(callees, down, v);
    }
  }
  return { name: fn, flat, cum: callees.value, callers, callees };
}
