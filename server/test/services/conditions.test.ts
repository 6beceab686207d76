/**
 * A stage's conditions and the change engine's "comparable or not", on real outputs: wrk runs against
 * k6 runs (fixtures/loadtests), a Go 1.22 trace against a Go 1.26 one (fixtures/traces), and the demo,
 * whose stages share one tool, one set of settings and one machine.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { verdict } from '../../src/analysis/significance.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { fixturesDir } from '../helpers/paths.ts';

const K6 = [
  'console-v1-ok.txt',
  'console-v0-ok.txt',
  'console-v1-errors-full.txt',
  'console-v0-errors.txt',
  'console-v050-errors.txt',
];
const LOAD_METRICS = ['rps', 'p50', 'p95', 'p99', 'error-rate'];

let app: StagediffApp;
let toolsId: string;
let goId: string;
let url: string;

beforeAll(async () => {
  app = await testApp();
  await seedDemo(app.ctx);
  const c = await createComparison(app, 'wrk against k6');
  toolsId = c.id;
  const wrk = await addStage(app, c.id, c.auth, 'pooled');
  // One file of three wrk runs (1 thread, 4 connections, 1 s each).
  let r = await upload(app, c.id, wrk, c.auth, [join(fixturesDir, 'loadtests', 'wrk', 'three-runs.txt')]);
  expect(r.statusCode, r.body).toBe(200);
  const k6 = await addStage(app, c.id, c.auth, 'async-log');
  for (const f of K6) {
    r = await upload(app, c.id, k6, c.auth, [join(fixturesDir, 'loadtests', 'k6', f)]);
    expect(r.statusCode, r.body).toBe(200);
  }
  const g = await createComparison(app, 'go versions');
  goId = g.id;
  for (const [name, file] of [
    ['before', 'demo-go1.22-baseline.trace'],
    ['after', 'demo-go1.26-baseline.trace'],
  ] as const) {
    const st = await addStage(app, g.id, g.auth, name);
    r = await upload(app, g.id, st, g.auth, [join(fixturesDir, 'traces', file)]);
    expect(r.statusCode, r.body).toBe(200);
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}, 120_000);

afterAll(async () => {
  await app?.close();
});

async function get(url: string) {
  const r = await app.inject({ method: 'GET', url });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

describe('load-test figures of different tools and settings', () => {
  it('each stage states its load tool and settings, per run', async () => {
    const t = await get(`/api/comparisons/${toolsId}/stage-table`);
    const [wrk, k6] = t.rows;
    expect(wrk.conditions.runs.map((r: { load: { text: string } }) => r.load.text)).toEqual([
      'wrk, 1 thread, 4 connections, 1s, /api/item',
      'wrk, 1 thread, 4 connections, 1s, /api/item',
      'wrk, 1 thread, 4 connections, 1s, /api/item',
    ]);
    expect(k6.conditions.summary).toContainEqual({
      key: 'load',
      label: 'load',
      values: ['k6, 10 VUs, 50 iterations/s, 2s'],
    });
  });

  it('the stage table gives no verdict on QPS or latency, and says why', async () => {
    const t = await get(`/api/comparisons/${toolsId}/stage-table`);
    const row = t.rows[1];
    for (const k of ['rps', 'p50', 'p95', 'p99', 'errorRate']) {
      expect(row.vsPrevious[k].status, k).toBe('not-comparable');
      expect(row.vsPrevious[k].ratio, k).toBeNull();
      expect(row.vsPrevious[k].p, k).toBeNull();
      expect(row.vsBaseline[k].status, k).toBe('not-comparable');
    }
    expect(row.vsPrevious.rps.reason).toBe(
      'different load: pooled: wrk, 1 thread, 4 connections, 1s, /api/item · async-log: k6, 10 VUs, 50 iterations/s, 2s',
    );
    expect(row.conditionsVsPrevious).toContain('load (pooled: wrk, 1 thread, 4 connections');
  });

  it('GET …/changes: not-comparable with both tools named, no ratio, no significant sentence', async () => {
    const c = await get(`/api/comparisons/${toolsId}/changes?base=pooled&target=async-log`);
    expect(c.conditions.loadComparable).toBe(false);
    expect(c.conditions.loadReason).toBe(
      'pooled: wrk, 1 thread, 4 connections, 1s, /api/item · async-log: k6, 10 VUs, 50 iterations/s, 2s',
    );
    for (const m of LOAD_METRICS) {
      const f = c.figures.find((x: { metric: string }) => x.metric === m);
      expect(f.verdict.status, m).toBe('not-comparable');
      expect(f.deltaPercent, m).toBeNull();
      expect(f.direction, m).toBeNull();
      expect(f.reason, m).toMatch(/^not comparable: different load: pooled: wrk, .* · async-log: k6, 10 VUs/);
    }
    // The medians of each side stay visible; only the comparison is withheld.
    expect(c.figures[0].base.n).toBe(3);
    expect(c.figures[0].target.n).toBe(5);
    expect(c.sentences[0]).toBe(
      'Load-test figures not comparable, the load differs (pooled: wrk, 1 thread, 4 connections, 1s, /api/item · async-log: k6, 10 VUs, 50 iterations/s, 2s): no QPS or latency verdict',
    );
    expect(c.sentences.join('\n')).not.toMatch(/QPS ×|P99 [+−]/);
  });

  it('without the rule these runs would get a verdict: the U test alone calls them significant', async () => {
    const c = await get(`/api/comparisons/${toolsId}/changes?base=pooled&target=async-log`);
    // (wrk without --latency prints no percentiles: QPS is the figure both sides have.)
    const f = c.figures.find((x: { metric: string }) => x.metric === 'rps');
    expect(verdict(f.base.values, f.target.values).status).toBe('significant');
  });
});

describe('stagediff check and report on wrk against k6', () => {
  const pair = () => ['--server', url, '--comparison', toolsId, '--base', 'pooled', '--target', 'async-log'];

  it('check --fail-on p50:+5% does not pass: exit 3, naming both tools and settings', async () => {
    const r = await runCli(['check', ...pair(), '--fail-on', 'p50:+5%', '--fail-on', 'rps:-3%']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(3);
    const lines = r.stdout.split('\n');
    expect(lines[1]).toBe(
      'N/C   p50:+5%  P50: not comparable, different load: pooled: wrk, 1 thread, 4 connections, 1s, /api/item · async-log: k6, 10 VUs, 50 iterations/s, 2s',
    );
    expect(lines[2]).toMatch(/^N\/C {3}rps:-3% {2}QPS: not comparable, different load: pooled: wrk/);
    expect(r.stdout).toContain('failed: not comparable (exit 3).');
    expect(r.stdout).not.toMatch(/passed/);
  });

  it('--json says the same, with the exit code and the differences', async () => {
    const r = await runCli(['check', ...pair(), '--fail-on', 'p50:+5%', '--json']);
    expect(r.status).toBe(3);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ failed: true, exitCode: 3, conditions: { loadComparable: false, allowed: [] } });
    expect(j.results[0].outcome).toBe('not-comparable');
    expect(j.conditions.differences[0].key).toBe('load');
  });

  it('--allow-different load leaves the rule unjudged instead; an unknown key is a usage error', async () => {
    const r = await runCli(['check', ...pair(), '--fail-on', 'p50:+5%', '--allow-different', 'load']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^- {5}p50:\+5% {2}P50: not judged, different load: pooled: wrk.* \(--allow-different load\)$/m,
    );
    const strict = await runCli([
      'check',
      ...pair(),
      '--fail-on',
      'p50:+5%',
      '--allow-different',
      'load',
      '--too-few-runs',
      'fail',
    ]);
    expect(strict.status).toBe(1);
    const bad = await runCli(['check', ...pair(), '--fail-on', 'p50:+5%', '--allow-different', 'weather']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('--allow-different "weather": unknown condition');
  });

  it('the report: no QPS or latency verdict, the reason in JSON and Markdown', async () => {
    const j = await runCli(['report', ...pair(), '--format', 'json']);
    expect(j.status, j.stderr).toBe(0);
    const rep = JSON.parse(j.stdout);
    expect(rep.schema).toBe('stagediff-report/5');
    expect(rep.conditions.loadComparable).toBe(false);
    expect(rep.summary.notComparable).toBeGreaterThanOrEqual(2);
    expect(rep.summary.improvements + rep.summary.regressions).toBe(0);
    for (const c of rep.changes)
      if (LOAD_METRICS.includes(c.metric)) {
        expect(c.verdict.status, c.metric).toBe('not-comparable');
        expect(c.deltaPercent).toBeNull();
      }
    expect(rep.stages[1].vsPrevious.rps.status).toBe('not-comparable');
    const md = await runCli(['report', ...pair()]);
    expect(md.status, md.stderr).toBe(0);
    // (Markdown escapes punctuation in names and reasons: read the text without the escapes.)
    const text = md.stdout.replaceAll('\\', '');
    expect(text).toContain('not comparable (different load)');
    expect(text).toMatch(/^> ⚠️ Measured under different conditions: load \(pooled: wrk, 1 thread, 4 connections/m);
    expect(text).toMatch(/\*\*QPS\*\* [\d,.]+\sreq\/s → [\d,.]+\sreq\/s: not comparable: different load: pooled: wrk/);
    expect(text).not.toMatch(/QPS[^\n]*(improved|regressed)/);
  });
});

describe('Go versions', () => {
  it('a Go 1.22 trace against a Go 1.26 one: a warning naming both versions', async () => {
    const c = await get(`/api/comparisons/${goId}/changes?base=before&target=after`);
    expect(c.conditions.differences).toContainEqual({
      key: 'go',
      label: 'Go version',
      base: ['go1.22'],
      target: ['go1.26'],
      text: 'Go version: before go1.22 · after go1.26',
    });
    expect(c.conditions.warning).toContain('go1.22');
    expect(c.conditions.warning).toContain('go1.26');
    expect(c.conditions.loadComparable).toBe(true);
    for (const f of c.runtime.figures) expect(f.warning).toBe(c.conditions.warning);
    expect(c.sentences[0]).toMatch(/^Measured under different conditions \(Go version/);
  });
});

describe('the API contract', () => {
  it('/api/openapi.json declares the conditions and the not-comparable verdict', async () => {
    const doc = JSON.stringify(await get('/api/openapi.json'));
    for (const word of ['not-comparable', 'loadComparable', 'conditionsVsPrevious', 'gomaxprocs', 'iterationRate'])
      expect(doc, word).toContain(word);
  });
});

describe('the demo', () => {
  it('every pair is comparable, with no difference named', async () => {
    const t = await get('/api/comparisons/demo/stage-table');
    for (const row of t.rows.slice(1)) {
      expect(row.conditionsVsPrevious, row.name).toBeNull();
      expect(row.conditionsVsBaseline, row.name).toBeNull();
      for (const k of ['rps', 'p50', 'p99'])
        expect(row.vsPrevious[k].status, `${row.name} ${k}`).not.toBe('not-comparable');
    }
    // What the demo's traces, runtime metrics and capture records state (demo README: Go 1.26, 2 cores).
    const summary = Object.fromEntries(
      t.rows[0].conditions.summary.map((x: { label: string; values: string[] }) => [x.label, x.values]),
    );
    expect(summary).toMatchObject({
      'Go version': ['go1.26'],
      GOMAXPROCS: ['2'],
      GOGC: ['100'],
      GOMEMLIMIT: ['none'],
      cores: ['2'],
      OS: ['linux/amd64'],
    });
    const load = t.rows[0].conditions.summary.find((s: { key: string }) => s.key === 'load');
    expect(load.values).toEqual(['wrk, 2 threads, 32 connections, 8s, /api/orders?n=20&currency=EUR']);
    const c = await get('/api/comparisons/demo/changes?base=baseline&target=pooled');
    expect(c.conditions.differences).toEqual([]);
    expect(c.conditions.warning).toBeNull();
  });
});
