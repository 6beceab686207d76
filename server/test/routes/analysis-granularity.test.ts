/**
 * Granularity and tag filters through the HTTP API: `granularity=lines|files` on top, diff and
 * flamegraph gives go tool pprof's -lines/-files rows (the carried answers of the reference
 * corpus); tagfocus/tagignore/tagshow/taghide give pprof's -tagfocus… rows on a labelled profile;
 * a bad value is a 400 naming the parameter.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir, samplePath } from '../helpers/paths.ts';
import { parseTopRows } from '../helpers/pprof-text.ts';

let app: StagediffApp;
let c: { id: string; before: string; after: string; labelled: string };

beforeAll(async () => {
  app = await testApp();
  const a = await createComparison(app, 'granularity');
  const before = await addStage(app, a.id, a.auth, 'before');
  const after = await addStage(app, a.id, a.auth, 'after');
  const file = (v: string) => samplePath(`pprof/go_httpserver_${v}_cpu.pb.gz`);
  expect((await upload(app, a.id, before, a.auth, [file('before')])).statusCode).toBe(200);
  expect((await upload(app, a.id, after, a.auth, [file('after')])).statusCode).toBe(200);
  const labelled = await addStage(app, a.id, a.auth, 'labelled');
  expect((await upload(app, a.id, labelled, a.auth, [`${fixturesDir}profiles/labels/cpu.pb.gz`])).statusCode).toBe(200);
  c = { id: a.id, before, after, labelled };
});
afterAll(async () => {
  await app?.close();
});

const answer = (rel: string) =>
  parseTopRows(gunzipSync(readFileSync(samplePath(`pprof/expected/granularity/${rel}`))).toString('utf8'));
/** pprof prints a file node as the bare file; ours adds the function's start line and the binary. */
const bare = (n: string) => n.replace(/( \(function at line \d+\))?( \[[^\]]*\])?$/, '');
const byName = (rows: [string, number, number][]) =>
  [...rows].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || a[2] - b[2]));
const get = async (path: string, q: Record<string, string>) => {
  const r = await app.inject({ url: `/api/comparisons/${c.id}/${path}?${new URLSearchParams(q)}` });
  return { status: r.statusCode, body: r.json() };
};

describe('granularity over the API', () => {
  it.each(['lines', 'files'])('top?granularity=%s: every row of go tool pprof -top -%s', async (g) => {
    const r = await get('top', { stage: c.after, sampleType: 'cpu', granularity: g });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.granularity).toBe(g);
    const rows = r.body.rows as { name: string; flat: number; cum: number }[];
    const ref = answer(`go_httpserver_after_cpu.cpu.${g}.txt.gz`);
    expect(byName(rows.map((x) => [bare(x.name), x.flat, x.cum]))).toEqual(byName(ref));
  });

  it('diff?granularity=lines&mode=absolute: every row of go tool pprof -diff_base -lines', async () => {
    const r = await get('diff', {
      base: c.before,
      target: c.after,
      sampleType: 'cpu',
      mode: 'absolute',
      granularity: 'lines',
      limit: '1000000',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.granularity).toBe('lines');
    const rows = (r.body.top as { name: string; deltaFlat: number; deltaCum: number }[])
      .filter((x) => x.deltaFlat !== 0 || x.deltaCum !== 0)
      .map((x): [string, number, number] => [x.name, x.deltaFlat, x.deltaCum]);
    expect(byName(rows)).toEqual(byName(answer('diff/go_httpserver_cpu.cpu.lines.diff_base.txt.gz')));
  });

  it('flamegraph?granularity=lines names nodes by function and line', async () => {
    const r = await get('flamegraph', { stage: c.after, sampleType: 'cpu', granularity: 'lines' });
    expect(r.status).toBe(200);
    expect(r.body.granularity).toBe('lines');
    const names: string[] = [];
    const walk = (n: { name: string; children: unknown[] }) => {
      names.push(n.name);
      for (const k of n.children) walk(k as typeof n);
    };
    walk(r.body.tree);
    expect(names).toContain('main.appendJSONString example.com/httpserver/after.go:45');
  });

  it('flamegraph.svg?granularity=lines draws line frames, and says the tag filter in its subtitle', async () => {
    const q = new URLSearchParams({ stage: c.after, sampleType: 'cpu', granularity: 'lines', tagignore: 'x=y' });
    const r = await app.inject({ url: `/api/comparisons/${c.id}/flamegraph.svg?${q}` });
    expect(r.statusCode).toBe(200);
    expect(r.body).toContain('main.appendJSONString example.com/httpserver/after.go:');
    expect(r.body).toContain('tagignore=x=y');
  });

  it('refuses an unknown granularity with a 400 naming the parameter', async () => {
    const r = await get('top', { stage: c.after, granularity: 'bytes' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).toMatch(/granularity/);
  });
});

describe('tag filters over the API', () => {
  const labelAnswer = (id: string) =>
    parseTopRows(readFileSync(`${fixturesDir}profiles/labels/answers/${id}.txt`, 'utf8'));
  const rowsOf = (body: { rows: { name: string; flat: number; cum: number }[] }) =>
    byName(body.rows.map((x): [string, number, number] => [x.name, x.flat, x.cum]));

  it.each([
    ['endpoint-orders', { tagfocus: 'endpoint=/api/orders' }],
    ['key-alternatives', { tagfocus: 'endpoint=orders,search' }],
    ['focus-and-ignore', { tagfocus: 'endpoint=orders', tagignore: 'tenant=glob' }],
    ['name-and-tag', { focus: 'json', tagfocus: 'tenant=globex' }],
  ])('top with %s equals go tool pprof', async (id, q) => {
    const r = await get('top', { stage: c.labelled, sampleType: 'cpu', ...q });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const ref = labelAnswer(id);
    expect(ref.length).toBeGreaterThan(5);
    expect(rowsOf(r.body)).toEqual(byName(ref));
  });

  it('tagshow/taghide keep the figures, as pprof', async () => {
    const all = await get('top', { stage: c.labelled, sampleType: 'cpu' });
    const shown = await get('top', { stage: c.labelled, sampleType: 'cpu', tagshow: 'ten', taghide: 'end' });
    expect(shown.status).toBe(200);
    expect(rowsOf(shown.body)).toEqual(rowsOf(all.body));
  });

  it('refuses a tag regexp Go refuses and an over-long value, naming the parameter', async () => {
    const bad = await get('top', { stage: c.labelled, tagfocus: 'endpoint=(?=x)' });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toMatch(/tagfocus/);
    const long = await get('top', { stage: c.labelled, tagignore: 'x'.repeat(600) });
    expect(long.status).toBe(400);
    expect(JSON.stringify(long.body)).toMatch(/tagignore/);
    const check = await app.inject({ url: '/api/filters/check?tagfocus=endpoint%3Dorders&taghide=tenant' });
    expect(check.json()).toEqual({ tagfocus: 'endpoint=orders', taghide: 'tenant' });
  });
});
