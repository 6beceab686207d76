/**
 * The source view's cost is counted by size: a view of a usual file costs its client 1 of its
 * per-minute analysis budget (ANALYSIS_CLIENT_JOBS_PER_MINUTE), like any view; a view of a
 * million-line file (a 1 MB file, read for each side) costs several, charged once it is computed, so
 * the client that asks for many is refused long before it spends the budget of as many small views,
 * while another address is served all along.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { COST_BYTES, sourceViewCost } from '../../src/services/source-view.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { encodePprof } from '../helpers/pprof-encode.ts';

const tmp = mkdtempSync(join(tmpdir(), 'stagediff-source-cost-'));
const FILE = '/build/app/main.go';
const BUDGET = 30;
let app: StagediffApp;
let c: { id: string; auth: Record<string, string> };

/** A tar.gz of go.mod and a main.go of `lines` lines (`package main`, then empty ones). */
function archive(name: string, lines: number): Buffer {
  const dir = mkdtempSync(join(tmp, `${name}-`));
  writeFileSync(join(dir, 'go.mod'), 'module example.com/app\n\ngo 1.26\n');
  writeFileSync(join(dir, 'main.go'), `package main\n${'\n'.repeat(lines - 1)}`);
  execFileSync('tar', ['-czf', join(dir, 'src.tar.gz'), '-C', dir, 'go.mod', 'main.go']);
  return readFileSync(join(dir, 'src.tar.gz'));
}

/** A stage whose CPU profile samples main.hot at `lines` of main.go, with a main.go of `fileLines` lines. */
async function stage(name: string, lines: number[], fileLines: number): Promise<void> {
  const prof = encodePprof({
    sampleTypes: [
      ['samples', 'count'],
      ['cpu', 'nanoseconds'],
    ],
    locations: lines.map((line) => ({ lines: [{ fn: 'main.hot', file: FILE, line }] })),
    samples: lines.map((_, i) => ({ stack: [i], values: [1, 10_000_000] })),
  });
  const p = join(tmp, `${name}.pb`);
  writeFileSync(p, prof);
  const id = await addStage(app, c.id, c.auth, name);
  expect((await upload(app, c.id, id, c.auth, [p])).statusCode).toBe(200);
  const r = await app.inject({
    method: 'PUT',
    url: `/api/comparisons/${c.id}/stages/${id}/sources?filename=src.tar.gz`,
    headers: { ...c.auth, 'content-type': 'application/octet-stream' },
    payload: archive(name, fileLines),
  });
  expect(r.statusCode, r.body).toBe(200);
}

beforeAll(async () => {
  app = await testApp({
    MAX_SOURCE_FILE_BYTES: String(4 * 1024 * 1024),
    ANALYSIS_CLIENT_JOBS_PER_MINUTE: String(BUDGET),
  });
  c = await createComparison(app, 'source cost');
  await stage('huge', [1, 2, 1_000_000], 1_000_000);
  await stage('small', [3, 10, 20], 40);
});
afterAll(async () => {
  await app.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A new (uncached) source view of `s` against itself from `address`. */
function view(s: string, address: string, n: number) {
  return app.inject({
    url: `/api/comparisons/${c.id}/source?base=${s}&target=${s}&fn=main.hot&hide=nothing${n}`,
    remoteAddress: address,
  });
}

describe("the source view's cost", () => {
  it('is 1 for a usual file, and grows with the bytes read and the lines aligned', () => {
    expect(sourceViewCost(2 * 40, 30)).toBe(1);
    // The million-line file, read for both sides: 2 MB.
    expect(sourceViewCost(2 * 1_000_000, 10)).toBe(1 + Math.floor(2_000_000 / COST_BYTES));
    expect(sourceViewCost(0, 4000)).toBe(5);
  });

  it("is charged to the client by size: a million-line file's views spend its budget in a few", async () => {
    const cost = sourceViewCost(2 * 1_000_000, 0);
    expect(cost).toBeGreaterThan(4);
    // Each view is admitted while a unit of budget is left, then charged the rest of its cost.
    const admitted = Math.ceil(BUDGET / cost);
    for (let n = 0; n < admitted; n++) {
      const r = await view('huge', '10.0.0.1', n);
      expect(r.statusCode, `view ${n}: ${r.body.slice(0, 300)}`).toBe(200);
      expect(r.body.length).toBeLessThan(64 * 1024);
    }
    const refused = await view('huge', '10.0.0.1', admitted);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error.message).toMatch(/ANALYSIS_CLIENT_JOBS_PER_MINUTE=30/);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is served all along, its usual views costing 1 each: more than `admitted` of them.
    for (let n = 0; n < 2 * admitted; n++) {
      const r = await view('small', '10.0.0.2', n);
      expect(r.statusCode, `small view ${n}: ${r.body.slice(0, 300)}`).toBe(200);
      expect(r.json().rows.length).toBeGreaterThan(0);
    }
    // A view already computed costs nothing: the refused client is still served it.
    expect((await view('huge', '10.0.0.1', 0)).statusCode).toBe(200);
  });
});
