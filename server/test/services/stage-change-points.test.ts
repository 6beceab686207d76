/**
 * Change points over a comparison of many stages, on real runs: fixtures/regression-runs holds wrk runs
 * (each with its CPU profile) of the demo's pooled stage, a re-run of it, and of a build made slower on
 * purpose, recorded interleaved. Fifteen stages of one run each — the ten runs of the pooled builds, then
 * the five slow ones — give one change point of QPS, at the first slow stage, for the worse; the stage
 * table of the demo (four stages) gives none. The marks equal the analysis's own answer on the medians
 * (that answer equals apache-otava's on its series: analysis/change-points.test.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changePoints } from '../../src/analysis/change-points.ts';
import type { StagediffApp } from '../../src/app.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { fixturesDir } from '../helpers/paths.ts';

const runs = join(fixturesDir, 'regression-runs');
const ORDER = [
  ...[1, 2, 3, 4, 5].map((k) => ['pooled', k] as const),
  ...[1, 2, 3, 4, 5].map((k) => ['pooled-rerun', k] as const),
  ...[1, 2, 3, 4, 5].map((k) => ['pooled-slow', k] as const),
];
const ORDER_NAMES = ORDER.map(([stage, k]) => `${stage}-${k}`);

let app: StagediffApp;
let id: string;
let base: string;
beforeAll(async () => {
  app = await testApp();
  await seedDemo(app.ctx);
  const c = await createComparison(app, 'fifteen stages');
  id = c.id;
  for (const [stage, k] of ORDER) {
    const st = await addStage(app, id, c.auth, `${stage}-${k}`);
    const r = await upload(app, id, st, c.auth, [join(runs, stage, `run-${k}`, 'wrk.txt')]);
    expect(r.statusCode, r.body).toBe(200);
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}, 300_000);
afterAll(async () => {
  await app?.close();
});

describe('change points on the stage table', () => {
  it('one QPS change point, at the first slow stage, for the worse', async () => {
    const t = (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json();
    const rps = t.changePoints.filter((c: { figure: string }) => c.figure === 'rps');
    expect(rps).toHaveLength(1);
    expect(rps[0]).toMatchObject({
      stageName: 'pooled-slow-1',
      previousStageName: 'pooled-rerun-5',
      direction: 'worse',
    });
    expect(rps[0].pValue).toBeLessThanOrEqual(0.001);
    expect(rps[0].changePercent).toBeLessThan(-20);
    // The same answer as the analysis on the stage medians.
    const medians = t.rows.map((r: { figures: { rps: { median: number } } }) => r.figures.rps.median);
    const [cp] = changePoints(medians);
    expect(cp!.index).toBe(10);
    expect([rps[0].pValue, rps[0].meanBefore, rps[0].meanAfter]).toEqual([cp!.pValue, cp!.meanBefore, cp!.meanAfter]);
  });

  it('the demo (four stages) has no change points: too few stages to look', async () => {
    const t = (await app.inject({ url: '/api/comparisons/demo/stage-table' })).json();
    expect(t.rows.length).toBe(4);
    expect(t.changePoints).toEqual([]);
  });

  it('the report carries them, in JSON and in Markdown', async () => {
    const json = await runCli(['report', '--server', base, '--comparison', id, '--format', 'json']);
    expect(json.status, json.stderr).toBe(0);
    const r = JSON.parse(json.stdout);
    expect(r.schema).toBe('stagediff-report/5');
    expect(r.changePoints.map((c: { figure: string; stageName: string }) => [c.figure, c.stageName])).toContainEqual([
      'rps',
      'pooled-slow-1',
    ]);
    const md = await runCli(['report', '--server', base, '--comparison', id]);
    expect(md.stdout).toContain('#### Change points');
    expect(md.stdout).toMatch(/🔴 \*\*QPS\*\* shifts between pooled-rerun-5 and pooled-slow-1: .* p=/);
  }, 120_000);

  it('the agent surface answers them (stage_table through the SDK client)', async () => {
    const client = new Client({ name: 'stagediff-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      const a = (await client.callTool({ name: 'stage_table', arguments: { comparison: id } })) as unknown as {
        structuredContent: { changePoints: { metric: string; between: string[]; direction: string }[] };
        content: { text?: string }[];
      };
      expect(a.structuredContent.changePoints).toContainEqual(
        expect.objectContaining({ metric: 'rps', between: ['pooled-rerun-5', 'pooled-slow-1'], direction: 'worse' }),
      );
      expect(a.content.map((c) => c.text ?? '').join('\n')).toContain(
        'change point of rps between pooled-rerun-5 and pooled-slow-1',
      );
    } finally {
      await client.close();
    }
  });

  it('/changes names the change points a pair straddles, in either order, and only those', async () => {
    const get = async (b: string, t: string, extra = '') =>
      (await app.inject({ url: `/api/comparisons/${id}/changes?base=${b}&target=${t}&functions=off${extra}` })).json();
    const around = await get('pooled-rerun-5', 'pooled-slow-1');
    expect(around.changePoints).toHaveLength(1);
    expect(around.changePoints[0]).toMatchObject({
      figure: 'rps',
      previousStageName: 'pooled-rerun-5',
      stageName: 'pooled-slow-1',
      direction: 'worse',
    });
    expect(around.sentences[0]).toMatch(
      /^Change point: QPS shifts for the worse between pooled-rerun-5 and pooled-slow-1 \(−\d+\.\d %/,
    );
    // The same mark as the stage table's.
    const table = (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json();
    expect(around.changePoints[0]).toEqual(table.changePoints.find((m: { figure: string }) => m.figure === 'rps'));
    // A wider pair straddles it too, base and target either way round.
    expect((await get('pooled-2', 'pooled-slow-4')).changePoints).toEqual(around.changePoints);
    expect((await get('pooled-slow-4', 'pooled-2')).changePoints).toEqual(around.changePoints);
    // Pairs on one side of it straddle none: no field, no sentence.
    for (const [b, t] of [
      ['pooled-1', 'pooled-rerun-5'],
      ['pooled-slow-1', 'pooled-slow-5'],
    ] as const) {
      const r = await get(b, t);
      expect(r.changePoints).toBeUndefined();
      expect(r.sentences.join(' ')).not.toContain('Change point');
    }
  }, 120_000);

  it('the window is a bounded query parameter: default 50, as the analysis with that window_len', async () => {
    const medians = (await app.inject({ url: `/api/comparisons/${id}/stage-table` }))
      .json()
      .rows.map((r: { figures: { rps: { median: number } } }) => r.figures.rps.median);
    for (const window of [4, 8, 15]) {
      const r = await app.inject({ url: `/api/comparisons/${id}/stage-table?window=${window}` });
      expect(r.statusCode, r.body).toBe(200);
      const got = r
        .json()
        .changePoints.filter((m: { figure: string }) => m.figure === 'rps')
        .map((m: { stageName: string; pValue: number }) => [m.stageName, m.pValue]);
      const want = changePoints(medians, { windowLen: window }).map((c) => [ORDER_NAMES[c.index], c.pValue]);
      expect(got).toEqual(want);
    }
    // A window of 4 sees the change only in short stretches: at this noise it is found in none of them.
    expect(changePoints(medians, { windowLen: 4 })).toEqual([]);
    for (const bad of ['1', '501', 'abc', '2.5']) {
      const r = await app.inject({ url: `/api/comparisons/${id}/stage-table?window=${bad}` });
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json().error.message).toMatch(/window/);
    }
    const r = await app.inject({
      url: `/api/comparisons/${id}/changes?base=pooled-rerun-5&target=pooled-slow-1&functions=off&window=1`,
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().error.message).toMatch(/window/);
  }, 120_000);

  it('what_changed (MCP) carries the change point of a straddling pair', async () => {
    const client = new Client({ name: 'stagediff-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)));
    try {
      const call = async (b: string, t: string) =>
        (await client.callTool({
          name: 'what_changed',
          arguments: { comparison: id, base: b, target: t, limit: 1 },
        })) as unknown as {
          structuredContent: { changePoints?: { metric: string; between: string[]; direction: string }[] };
          content: { text?: string }[];
        };
      const a = await call('pooled-rerun-5', 'pooled-slow-1');
      expect(a.structuredContent.changePoints).toEqual([
        expect.objectContaining({ metric: 'rps', between: ['pooled-rerun-5', 'pooled-slow-1'], direction: 'worse' }),
      ]);
      expect(a.content.map((c) => c.text ?? '').join('\n')).toContain(
        '- change point of rps between pooled-rerun-5 and pooled-slow-1',
      );
      const none = await call('pooled-1', 'pooled-2');
      expect(none.structuredContent.changePoints).toBeUndefined();
    } finally {
      await client.close();
    }
  }, 120_000);
});
