/**
 * Detail on demand through the HTTP API, over a real socket: the flamegraph and the diff (and their
 * images) rooted at a call path come back re-trimmed at that subtree's own value, with the detail
 * the whole tree left out; a path no sample passes through is a 404 naming it; a node cap raises
 * the threshold and says so. On the demo's real CPU profiles.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { callTree } from '../../src/analysis/call-tree.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { formatTree } from '../helpers/profile-text.ts';

const cpu = (stage: string) => `${fixturesDir}demo/${stage}/run-1/cpu.pb.gz`;

interface Node {
  name: string;
  value: number;
  children: Node[];
}

let app: StagediffApp;
let base: string;
let id: string;
let before: string;
let after: string;

beforeAll(async () => {
  app = await testApp();
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  const c = await createComparison(app, 'subtrees');
  id = c.id;
  before = await addStage(app, id, c.auth, 'baseline');
  after = await addStage(app, id, c.auth, 'pooled');
  expect((await upload(app, id, before, c.auth, [cpu('baseline')])).statusCode).toBe(200);
  expect((await upload(app, id, after, c.auth, [cpu('pooled')])).statusCode).toBe(200);
}, 60_000);
afterAll(async () => {
  await app.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the test reads response shapes by path; a wrong path fails the assertion
async function get(path: string, q: [string, string][]): Promise<{ status: number; body: any; text: string }> {
  const r = await fetch(`${base}/api/comparisons/${id}/${path}?${new URLSearchParams(q)}`);
  const text = await r.text();
  return { status: r.status, body: text.startsWith('{') ? JSON.parse(text) : null, text };
}

const rootQ = (path: string[]) => path.map((f): [string, string] => ['root', f]);

/** The widest drawn node of `tree` whose children the trim left out (`whole` has some there), by its path. */
function trimmedLeaf(tree: Node, whole: Node): string[] | null {
  let best: { path: string[]; value: number } | null = null;
  const walk = (n: Node, w: Node, path: string[]) => {
    if (path.length > 1 && n.children.length === 0 && w.children.length > 0 && (!best || n.value > best.value))
      best = { path, value: n.value };
    for (const c of n.children) walk(c, w.children.find((x) => x.name === c.name)!, [...path, c.name]);
  };
  walk(tree, whole, []);
  return (best as { path: string[] } | null)?.path ?? null;
}

describe('flamegraph and diff rooted at a call path', () => {
  it('a subtree the whole tree trimmed comes back in detail, as the analysis draws it from the file', async () => {
    const whole = await get('flamegraph', [
      ['stage', before],
      ['minFraction', '0.01'],
    ]);
    expect(whole.status).toBe(200);
    expect(whole.body.root).toEqual([]);
    expect(whole.body.trim.minFraction).toBe(0.01);
    expect(whole.body.trim.nodeCap).toBe(null);
    const all = await get('flamegraph', [['stage', before]]);
    const path = trimmedLeaf(whole.body.tree, all.body.tree)!;
    expect(path).not.toBe(null);
    const sub = await get('flamegraph', [['stage', before], ['minFraction', '0.01'], ...rootQ(path)]);
    expect(sub.status, sub.text.slice(0, 300)).toBe(200);
    expect(sub.body.root).toEqual(path);
    expect(sub.body.tree.name).toBe(path[path.length - 1]);
    expect(sub.body.tree.children.length).toBeGreaterThan(0);
    // Exactly the engine's subtree of the same file, trimmed at 1 % of the subtree's own value.
    const p = parsePprof(readFileSync(cpu('baseline')));
    const want = callTree(
      p,
      p.sampleTypes.findIndex((t) => t.type === 'cpu'),
      0.01,
      { root: path },
    );
    expect(formatTree(sub.body.tree)).toEqual(formatTree(want.tree));
    expect(sub.body.trim.prunedNodes).toBe(want.trim.prunedNodes);
    // The total stays the stage's.
    expect(sub.body.total).toBe(whole.body.total);
    // A one-frame path is one value.
    const top = await get('flamegraph', [
      ['stage', before],
      ['root', path[0]!],
    ]);
    expect(top.status).toBe(200);
    expect(top.body.root).toEqual([path[0]]);
  });

  it('a path no sample passes through is a 404 naming the path and the parameter', async () => {
    const r = await get('flamegraph', [['stage', before], ...rootQ(['runtime.main', 'no.such<b>frame'])]);
    expect(r.status).toBe(404);
    expect(r.body.error.code).toBe('not-found');
    expect(r.body.error.param).toBe('root');
    expect(r.body.error.message).toContain('runtime.main → no.such<b>frame');
    expect(r.body.error.message).toContain('baseline');
    const d = await get('diff', [['base', before], ['target', after], ...rootQ(['no.such.frame'])]);
    expect(d.status).toBe(404);
    expect(d.body.error.param).toBe('root');
    const img = await get('flamegraph.svg', [['stage', before], ...rootQ(['no.such.frame'])]);
    expect(img.status).toBe(404);
  });

  it('the diff rooted at a path: its subtree re-trimmed, the rows and totals of the whole profiles', async () => {
    const q: [string, string][] = [
      ['base', before],
      ['target', after],
      ['mode', 'absolute'],
      ['minFraction', '0.01'],
    ];
    const whole = await get('diff', q);
    expect(whole.status).toBe(200);
    const all = await get('diff', q.slice(0, 3));
    const path = trimmedLeaf(whole.body.tree, all.body.tree)!;
    const sub = await get('diff', [...q, ...rootQ(path)]);
    expect(sub.status, sub.text.slice(0, 300)).toBe(200);
    expect(sub.body.root).toEqual(path);
    expect(sub.body.tree.name).toBe(path[path.length - 1]);
    expect(sub.body.tree.children.length).toBeGreaterThan(0);
    expect(sub.body.trim.minFraction).toBe(0.01);
    expect(sub.body.top).toEqual(whole.body.top);
    expect([sub.body.baseTotal, sub.body.targetTotal]).toEqual([whole.body.baseTotal, whole.body.targetTotal]);
    const img = await get('diff.svg', [...q, ...rootQ(path)]);
    expect(img.status).toBe(200);
    expect(img.text).toContain(
      `subtree ${path.map((f) => f.replaceAll('&', '&amp;').replaceAll('<', '&lt;')).join(' → ')}`,
    );
  });

  it('a node cap raises the threshold and says so; the default cap leaves small trees whole', async () => {
    const whole = await get('flamegraph', [['stage', before]]);
    expect(whole.status).toBe(200);
    expect(whole.body.trim.minFraction).toBe(0);
    expect(whole.body.trim.nodeCap).toBe(null);
    expect(whole.body.trim.prunedNodes).toBe(0);
    expect(whole.body.trim.nodes).toBeGreaterThan(200);
    const capped = await get('flamegraph', [
      ['stage', before],
      ['maxNodes', '200'],
    ]);
    expect(capped.status).toBe(200);
    expect(capped.body.trim.nodes).toBeLessThanOrEqual(200);
    expect(capped.body.trim.nodes).toBeGreaterThan(100);
    expect(capped.body.trim.nodeCap).toBe(200);
    expect(capped.body.trim.minFraction).toBeGreaterThan(0);
    expect(capped.body.trim.prunedNodes).toBe(whole.body.trim.nodes - capped.body.trim.nodes);
    const d = await get('diff', [
      ['base', before],
      ['target', after],
      ['maxNodes', '50'],
    ]);
    expect(d.status).toBe(200);
    expect(d.body.trim.nodes).toBeLessThanOrEqual(50);
    expect(d.body.trim.nodeCap).toBe(50);
    const bad = await get('flamegraph', [
      ['stage', before],
      ['maxNodes', '0'],
    ]);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('maxNodes');
  });
});
