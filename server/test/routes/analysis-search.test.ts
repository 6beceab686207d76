/**
 * Search through the HTTP API, over a real socket, on the demo's real CPU profiles: the share of the
 * total whose stacks hold a matching frame and the heaviest matching frames agree with the stage's
 * whole, untrimmed call tree (the flamegraph at minFraction 0, a separate code path); the matches
 * include frames the drawn tree trimmed away, and each one's call path opens as a subtree; the diff's
 * search is each side's; a bad term or a wrong pair of parameters is a 400 naming its parameter;
 * the answer is cached and revalidated like any view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

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
  const c = await createComparison(app, 'search');
  id = c.id;
  before = await addStage(app, id, c.auth, 'baseline');
  after = await addStage(app, id, c.auth, 'pooled');
  expect((await upload(app, id, before, c.auth, [cpu('baseline')])).statusCode).toBe(200);
  expect((await upload(app, id, after, c.auth, [cpu('pooled')])).statusCode).toBe(200);
}, 60_000);
afterAll(async () => {
  await app.close();
});

async function get(
  path: string,
  q: [string, string][],
  headers: Record<string, string> = {},
  // biome-ignore lint/suspicious/noExplicitAny: the test reads response shapes by path; a wrong path fails the assertion
): Promise<{ status: number; body: any; etag: string | null }> {
  const r = await fetch(`${base}/api/comparisons/${id}/${path}?${new URLSearchParams(q)}`, { headers });
  const text = await r.text();
  return { status: r.status, body: text.startsWith('{') ? JSON.parse(text) : null, etag: r.headers.get('etag') };
}

/** What a search of `tree` must answer, read off the whole tree: matching nodes by value, and the matched total. */
function expected(tree: Node, match: (name: string) => boolean) {
  const hits: { path: string[]; value: number }[] = [];
  let matched = 0;
  const walk = (n: Node, path: string[], under: boolean) => {
    for (const c of n.children) {
      const p = [...path, c.name];
      const m = match(c.name);
      if (m) hits.push({ path: p, value: c.value });
      // A sample holding matches passes through exactly one outermost matching frame.
      if (m && !under) matched += c.value;
      walk(c, p, under || m);
    }
  };
  walk(tree, [], false);
  hits.sort((a, b) => b.value - a.value);
  return { hits, matched };
}

function nodeAt(tree: Node, path: string[]): Node | null {
  let n: Node | undefined = tree;
  for (const name of path) {
    n = n.children.find((c) => c.name === name);
    if (!n) return null;
  }
  return n;
}

describe('search over the whole call tree', () => {
  it('agrees with the untrimmed tree, finds frames the drawn tree left out, and each opens as a subtree', async () => {
    const whole = await get('flamegraph', [
      ['stage', before],
      ['minFraction', '0'],
      ['maxNodes', '500000'],
    ]);
    expect(whole.status).toBe(200);
    expect(whole.body.trim.prunedNodes).toBe(0);
    for (const term of ['runtime\\.mallocgc', 'SERVEORDERS', 'json|bufio', '^syscall\\.']) {
      const re = new RegExp(term, 'i');
      const want = expected(whole.body.tree, (n) => re.test(n));
      const r = await get('search', [
        ['stage', before],
        ['q', term],
        ['limit', '200'],
      ]);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.q).toBe(term);
      expect(r.body.stages).toEqual([before]);
      expect(r.body.totals).toEqual([whole.body.total]);
      expect(r.body.matched).toEqual([want.matched]);
      expect(want.matched).toBeGreaterThan(0);
      expect(r.body.frames).toBe(want.hits.length);
      expect(r.body.names).toBe(new Set(want.hits.map((h) => h.path[h.path.length - 1])).size);
      // The heaviest matches, by value (ties in either order).
      const got = r.body.hits as { path: string[]; values: number[] }[];
      expect(got.length).toBe(Math.min(200, want.hits.length));
      expect(got.map((h) => h.values[0])).toEqual(want.hits.slice(0, got.length).map((h) => h.value));
      for (const h of got) expect(nodeAt(whole.body.tree, h.path)?.value).toBe(h.values[0]);
    }

    // The tree as the page draws it leaves frames out; the search still finds them, and each opens.
    const drawn = await get('flamegraph', [
      ['stage', before],
      ['minFraction', '0.0005'],
      ['maxNodes', '300'],
    ]);
    expect(drawn.body.trim.prunedNodes).toBeGreaterThan(0);
    const r = await get('search', [
      ['stage', before],
      ['q', 'runtime\\.'],
      ['limit', '200'],
    ]);
    const trimmed = (r.body.hits as { path: string[]; values: number[] }[]).find(
      (h) => nodeAt(drawn.body.tree, h.path) === null,
    );
    expect(trimmed).toBeDefined();
    const sub = await get('flamegraph', [
      ['stage', before],
      ['minFraction', '0.0005'],
      ...trimmed!.path.map((f): [string, string] => ['root', f]),
    ]);
    expect(sub.status).toBe(200);
    expect(sub.body.tree.name).toBe(trimmed!.path[trimmed!.path.length - 1]);
    expect(sub.body.tree.value).toBe(trimmed!.values[0]);
  }, 120_000);

  it("searches a diff's two sides, each as its own stage", async () => {
    const one = await get('search', [
      ['stage', before],
      ['q', 'mallocgc'],
    ]);
    const two = await get('search', [
      ['stage', after],
      ['q', 'mallocgc'],
    ]);
    const pair = await get('search', [
      ['base', before],
      ['target', after],
      ['q', 'mallocgc'],
    ]);
    expect(pair.status).toBe(200);
    expect(pair.body.stages).toEqual([before, after]);
    expect(pair.body.totals).toEqual([one.body.totals[0], two.body.totals[0]]);
    expect(pair.body.matched).toEqual([one.body.matched[0], two.body.matched[0]]);
    // The heaviest frame of either side is in the pair's list with both sides' values.
    const heaviest = one.body.hits[0] as { path: string[]; values: number[] };
    const same = (pair.body.hits as { path: string[]; values: number[] }[]).find(
      (h) => h.path.join('\n') === heaviest.path.join('\n'),
    );
    expect(same?.values[0]).toBe(heaviest.values[0]);
  }, 60_000);

  it('refuses a bad term or a wrong pair of stages naming the parameter; answers are cached', async () => {
    const cases: [[string, string][], string][] = [
      [
        [
          ['stage', before],
          ['q', '(unclosed'],
        ],
        'q',
      ],
      [
        [
          ['stage', before],
          ['q', '(a)\\1'],
        ],
        'q',
      ],
      [
        [
          ['stage', before],
          ['q', 'x'.repeat(513)],
        ],
        'q',
      ],
      [[['stage', before]], 'q'],
      [
        [
          ['stage', before],
          ['base', before],
          ['target', after],
          ['q', 'a'],
        ],
        'stage',
      ],
      [
        [
          ['base', before],
          ['q', 'a'],
        ],
        'target',
      ],
      [[['q', 'a']], 'base'],
      [
        [
          ['stage', 'no-such-stage'],
          ['q', 'a'],
        ],
        'stage',
      ],
    ];
    for (const [q, param] of cases) {
      const r = await get('search', q);
      expect([400, 404], JSON.stringify(r.body)).toContain(r.status);
      expect(r.body.error.param ?? r.body.error.message, JSON.stringify(r.body)).toContain(param);
    }
    const q: [string, string][] = [
      ['stage', before],
      ['q', 'bufio'],
    ];
    const first = await get('search', q);
    expect(first.status).toBe(200);
    expect(first.etag).toBeTruthy();
    const again = await get('search', q, { 'if-none-match': first.etag as string });
    expect(again.status).toBe(304);
  }, 60_000);
});
