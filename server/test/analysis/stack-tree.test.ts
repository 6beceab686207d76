/**
 * The columnar trees (call tree and diff grown from the stacks, trimmed as they grow) against a
 * plain reference written here: the whole tree built as nested objects, then trimmed by the rule
 * (a child is drawn when its weight is at least minFraction of the root's; what is left out is
 * counted frame by frame). On real profiles of the corpus, whole trees and subtrees at call paths.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CallPathNotFound, callTree, type FlameNode } from '../../src/analysis/call-tree.ts';
import { type DiffNode, diffProfiles } from '../../src/analysis/diff.ts';
import { stackTotals } from '../../src/analysis/flat-cum.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import type { Profile } from '../../src/model/profile.ts';
import { samplePath } from '../helpers/paths.ts';
import { formatTree, profileFromText } from '../helpers/profile-text.ts';

interface RefNode {
  name: string;
  a: number;
  b: number;
  kids: Map<string, RefNode>;
}

/** Every call path of one or two profiles (frame names, root first) as nested objects. */
function fullTree(sides: { p: Profile; values: Float64Array }[]): RefNode {
  const root: RefNode = { name: 'root', a: 0, b: 0, kids: new Map() };
  sides.forEach(({ p, values }, side) => {
    for (let st = 0; st < values.length; st++) {
      const v = values[st]!;
      if (v === 0) continue;
      let node = root;
      if (side === 0) node.a += v;
      else node.b += v;
      for (let i = p.stackOffsets[st + 1]! - 1; i >= p.stackOffsets[st]!; i--) {
        const name = p.frames[p.stackFrames[i]!]!.name;
        let c = node.kids.get(name);
        if (!c) {
          c = { name, a: 0, b: 0, kids: new Map() };
          node.kids.set(name, c);
        }
        if (side === 0) c.a += v;
        else c.b += v;
        node = c;
      }
    }
  });
  return root;
}

const weight = (n: RefNode) => Math.abs(n.a) + Math.abs(n.b);
const count = (n: RefNode): number => {
  let c = 1;
  for (const k of n.kids.values()) c += count(k);
  return c;
};

/** The reference trim: drawn nodes as text lines, and the frames left out. */
function trimmed(
  root: RefNode,
  minFraction: number,
  line: (n: RefNode) => string,
  keep = (w: number) => w >= minFraction * weight(root),
) {
  const lines: string[] = [];
  let prunedNodes = 0;
  let prunedWeight = 0;
  const walk = (n: RefNode, depth: number) => {
    lines.push(`${'  '.repeat(depth)}${line(n)}`);
    for (const k of [...n.kids.values()].sort((x, y) => (x.name < y.name ? -1 : 1))) {
      if (keep(weight(k))) walk(k, depth + 1);
      else {
        prunedNodes += count(k);
        prunedWeight += weight(k);
      }
    }
  };
  walk(root, 0);
  return { lines, prunedNodes, prunedWeight };
}

function at(root: RefNode, path: string[]): RefNode | undefined {
  let n: RefNode | undefined = root;
  for (const name of path) n = n?.kids.get(name);
  return n;
}

/** Call paths to try: the heaviest child at each level, and a light one, down to depth 12. */
function pathsOf(root: RefNode): string[][] {
  const out: string[][] = [];
  let n = root;
  const path: string[] = [];
  for (let d = 0; d < 12 && n.kids.size > 0; d++) {
    const kids = [...n.kids.values()].sort((x, y) => weight(y) - weight(x) || (x.name < y.name ? -1 : 1));
    const light = kids[kids.length - 1]!;
    out.push([...path, light.name]);
    n = kids[0]!;
    path.push(n.name);
    out.push([...path]);
  }
  return out;
}

const flameLines = (t: FlameNode) => formatTree(t);
const diffLines = (t: DiffNode) => formatTree(t);

const files = [
  'pprof/go_httpserver_before_cpu.pb.gz',
  'pprof/go_httpserver_after_cpu.pb.gz',
  'pprof/go_bench_net_http_mutex.pb.gz',
  'pprof/large/go_types_tests_cpu.pb.gz',
];
const load = (rel: string) => parsePprof(readFileSync(samplePath(rel)));

describe('call tree, against the whole tree built as objects', () => {
  for (const rel of files) {
    it(`${rel}: whole tree and subtrees, each re-trimmed at its own weight`, () => {
      const p = load(rel);
      const i = p.sampleTypes.findIndex((t) => t.type === p.defaultSampleType);
      const ref = fullTree([{ p, values: stackTotals(p, i) }]);
      for (const minFraction of [0, 0.001, 0.05]) {
        for (const path of [[], ...pathsOf(ref)]) {
          const node = at(ref, path)!;
          const want = trimmed(node, minFraction, (n) => `${n.name} ${n.a}`);
          const got = callTree(p, i, minFraction, { root: path });
          expect(flameLines(got.tree), `${path.join(';')} at ${minFraction}`).toEqual(want.lines);
          expect(got.trim.prunedNodes).toBe(want.prunedNodes);
          expect(got.trim.nodes).toBe(want.lines.length);
        }
      }
    }, 120_000);
  }

  it('a subtree brings back what the whole tree trimmed away', () => {
    const p = load('pprof/large/go_types_tests_cpu.pb.gz');
    const i = p.sampleTypes.findIndex((t) => t.type === p.defaultSampleType);
    const whole = callTree(p, i, 0.01);
    // a drawn node whose children were all cut
    let path: string[] = [];
    const find = (n: FlameNode, trail: string[]): boolean => {
      if (trail.length > 0 && n.children.length === 0) {
        path = trail;
        return true;
      }
      return n.children.some((c) => find(c, [...trail, c.name]));
    };
    expect(find(whole.tree, [])).toBe(true);
    const sub = callTree(p, i, 0.01, { root: path });
    expect(sub.tree.name).toBe(path[path.length - 1]);
    expect(sub.tree.children.length).toBeGreaterThan(0);
    expect(sub.trim.nodes).toBeGreaterThan(1);
  });

  it('refuses a call path no sample passes through', () => {
    const p = profileFromText('main;a;b 3\nmain;c 1');
    expect(() => callTree(p, 0, 0, { root: ['main', 'b'] })).toThrow(CallPathNotFound);
    expect(() => callTree(p, 0, 0, { root: ['nothing'] })).toThrow(/no sample passes through the call path nothing/);
    expect(formatTree(callTree(p, 0, 0, { root: ['main', 'a'] }).tree)).toEqual(['a 3', '  b 3']);
  });

  it('stacks deeper than the depth limit fold at it; a subtree below the limit shows them', () => {
    const deep = Array.from({ length: 1100 }, (_, d) => `f${d}`);
    const p = profileFromText(`${deep.join(';')} 5\nmain 1`);
    const whole = callTree(p, 0);
    expect(whole.trim.depthTruncatedNodes).toBe(1100 - 1024);
    expect(whole.trim.nodes).toBe(1 + 1024 + 1);
    const sub = callTree(p, 0, 0, { root: deep.slice(0, 200) });
    expect(sub.trim.depthTruncatedNodes).toBe(0);
    expect(sub.trim.nodes).toBe(1100 - 200 + 1);
  });
});

describe('diff tree, against both profiles built as objects', () => {
  const pairs: [string, string][] = [
    ['pprof/go_httpserver_before_cpu.pb.gz', 'pprof/go_httpserver_after_cpu.pb.gz'],
    ['pprof/go_httpserver_before_allocs.pb.gz', 'pprof/go_httpserver_after_allocs.pb.gz'],
  ];
  for (const [b, t] of pairs) {
    it(`${b} → ${t}: whole tree and subtrees`, () => {
      const base = load(b);
      const target = load(t);
      const type = target.defaultSampleType;
      const bi = base.sampleTypes.findIndex((x) => x.type === type);
      const ti = target.sampleTypes.findIndex((x) => x.type === type);
      const ref = fullTree([
        { p: base, values: stackTotals(base, bi) },
        { p: target, values: stackTotals(target, ti) },
      ]);
      for (const minFraction of [0, 0.002, 0.05]) {
        for (const path of [[], ...pathsOf(ref)]) {
          const node = at(ref, path)!;
          const want = trimmed(
            node,
            minFraction,
            (n) => `${n.name} ${n.a} → ${n.b} (Δ ${n.b - n.a >= 0 ? '+' : ''}${n.b - n.a})`,
          );
          const d = diffProfiles(base, target, { sampleType: type, mode: 'absolute', minFraction, root: path });
          expect(diffLines(d.tree), `${path.join(';')} at ${minFraction}`).toEqual(want.lines);
          expect(d.trim.prunedNodes).toBe(want.prunedNodes);
          expect(d.trim.prunedValue).toBe(want.prunedWeight);
          expect(d.tree.value).toBe(weight(node));
        }
      }
    }, 120_000);
  }

  it('a path in one profile only is found; rows and totals stay the whole profiles', () => {
    const base = profileFromText('main;old 4\nmain;both 1');
    const target = profileFromText('main;new 2\nmain;both 3');
    const d = diffProfiles(base, target, { sampleType: 'cpu', mode: 'absolute', root: ['main', 'new'] });
    expect(formatTree(d.tree)).toEqual(['new 0 → 2 (Δ +2)']);
    expect([d.baseTotal, d.targetTotal]).toEqual([5, 5]);
    expect(d.rows.map((r) => r.name).sort()).toEqual(['both', 'main', 'new', 'old']);
    expect(() => diffProfiles(base, target, { sampleType: 'cpu', mode: 'absolute', root: ['old'] })).toThrow(
      CallPathNotFound,
    );
  });

  it('tree: false leaves the tree out and keeps rows and totals', () => {
    const base = load('pprof/go_httpserver_before_cpu.pb.gz');
    const target = load('pprof/go_httpserver_after_cpu.pb.gz');
    const full = diffProfiles(base, target, { sampleType: 'cpu', mode: 'normalize' });
    const rowsOnly = diffProfiles(base, target, { sampleType: 'cpu', mode: 'normalize', tree: false });
    expect(rowsOnly.rows).toEqual(full.rows);
    expect([rowsOnly.baseTotal, rowsOnly.targetTotal]).toEqual([full.baseTotal, full.targetTotal]);
    expect(rowsOnly.tree.children).toEqual([]);
    expect([rowsOnly.tree.base, rowsOnly.tree.target]).toEqual([full.tree.base, full.tree.target]);
  });
});

/** Every node's weight in the reference tree (root included). */
function weights(root: RefNode): number[] {
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.push(weight(n));
    for (const k of n.kids.values()) stack.push(k);
  }
  return out.sort((x, y) => y - x);
}

describe('a node cap raises the threshold to the heaviest nodes', () => {
  it('keeps exactly the nodes heavier than the first one past the cap, and says so', () => {
    const p = load('pprof/large/go_types_tests_cpu.pb.gz');
    const i = p.sampleTypes.findIndex((t) => t.type === p.defaultSampleType);
    const ref = fullTree([{ p, values: stackTotals(p, i) }]);
    const all = weights(ref);
    for (const maxNodes of [1, 2, 10, 100, 1000, all.length - 1]) {
      // The reference: the (maxNodes + 1)-th heaviest weight, and every node heavier than it.
      const beyond = all[maxNodes]!;
      const kept = all.filter((w) => w > beyond).length;
      const got = callTree(p, i, 0, { maxNodes });
      expect(got.trim.nodes, `cap ${maxNodes}`).toBe(kept);
      expect(got.trim.nodes).toBeLessThanOrEqual(maxNodes);
      expect(got.trim.nodeCap).toBe(maxNodes);
      expect(got.trim.minFraction).toBeGreaterThan(beyond / weight(ref));
      // The reference tree of the nodes heavier than that weight, and what it leaves out.
      const want = trimmed(
        ref,
        0,
        (n) => `${n.name} ${n.a}`,
        (w) => w > beyond,
      );
      expect(formatTree(got.tree)).toEqual(want.lines);
      expect(got.trim.prunedNodes).toBe(want.prunedNodes);
    }
    // Within the cap nothing changes: minFraction is the one asked for.
    const whole = callTree(p, i, 0.001, { maxNodes: all.length });
    expect(whole.trim.nodeCap).toBe(null);
    expect(whole.trim.minFraction).toBe(0.001);
    expect(formatTree(whole.tree)).toEqual(formatTree(callTree(p, i, 0.001).tree));
    expect(callTree(p, i, 0, { maxNodes: all.length }).trim.nodes).toBe(all.length);
  });

  it('caps a subtree and a diff the same way', () => {
    const base = load('pprof/go_httpserver_before_cpu.pb.gz');
    const target = load('pprof/go_httpserver_after_cpu.pb.gz');
    const bi = base.sampleTypes.findIndex((x) => x.type === 'cpu');
    const ti = target.sampleTypes.findIndex((x) => x.type === 'cpu');
    const ref = fullTree([
      { p: base, values: stackTotals(base, bi) },
      { p: target, values: stackTotals(target, ti) },
    ]);
    const path = pathsOf(ref)[1]!;
    const node = at(ref, path)!;
    const all = weights(node);
    const maxNodes = Math.floor(all.length / 3);
    const kept = all.filter((w) => w > all[maxNodes]!).length;
    const d = diffProfiles(base, target, { sampleType: 'cpu', mode: 'absolute', root: path, maxNodes });
    expect(d.trim.nodes).toBe(kept);
    expect(d.trim.nodeCap).toBe(maxNodes);
    const want = trimmed(
      node,
      0,
      (n) => `${n.name} ${n.a} → ${n.b} (Δ ${n.b - n.a >= 0 ? '+' : ''}${n.b - n.a})`,
      (w) => w > all[maxNodes]!,
    );
    expect(formatTree(d.tree)).toEqual(want.lines);
    expect(d.trim.prunedNodes).toBe(want.prunedNodes);
    expect(d.trim.prunedValue).toBe(want.prunedWeight);
  });
});
