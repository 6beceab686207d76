/** Generic helpers over `{name, value, children}` trees (API trees and d3 hierarchy nodes alike). */
import type { RE2JS } from 're2js';

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

let engine: typeof RE2JS | null = null;
let engineLoad: Promise<void> | null = null;
let lastMatcher: { term: string; match: (name: string) => boolean } | null = null;

/** True once the search's regular-expression engine is loaded (see loadSearchEngine). */
export function searchEngineReady(): boolean {
  return engine !== null;
}

/**
 * Loads the search's regular-expression engine: a chunk of its own (~47 kB gzip), fetched the first
 * time a search is made rather than with every page.
 */
export function loadSearchEngine(): Promise<void> {
  engineLoad ??= import('re2js').then((m) => {
    engine = m.RE2JS;
    lastMatcher = null;
  });
  return engineLoad;
}

/**
 * Case-insensitive search matcher: a valid Go regular expression (the filters' syntax) is used as one,
 * anything else as a plain substring; so is every term until the engine is loaded. RE2 runs in linear
 * time, so a search term from a shared link cannot hang the page however the names are made
 * (JavaScript's RegExp backtracks: `(a+)+b` against a long run of "a" never returns). The last
 * term's matcher is kept: the flamegraph asks once per node.
 */
export function makeMatcher(term: string): (name: string) => boolean {
  if (!term) return () => false;
  if (lastMatcher?.term === term) return lastMatcher.match;
  const lower = term.toLowerCase();
  let match = (name: string) => name.toLowerCase().includes(lower);
  if (engine) {
    try {
      const re = engine.compile(term, engine.CASE_INSENSITIVE);
      match = (name) => re.test(name);
    } catch {
      // not a valid expression: the substring matcher stays
    }
  }
  lastMatcher = { term, match };
  return match;
}

/**
 * Why a search term is not a valid regular expression (RE2, as the matcher compiles it), or null: valid,
 * empty, or the engine not loaded yet. Such a term is still searched, as the text typed.
 */
export function searchTermProblem(term: string): string | null {
  if (!term || !engine) return null;
  try {
    engine.compile(term, engine.CASE_INSENSITIVE);
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
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
