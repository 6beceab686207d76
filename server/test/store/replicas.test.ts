/**
 * Two app replicas sharing one PostgreSQL (each with its own store connection pool and in-process
 * caches): upload through one, read, diff and delete through the other; no result may be stale.
 * Runs when STAGEDIFF_TEST_DATABASE_URL is set (CI starts a throwaway PostgreSQL for it).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { samplePath } from '../helpers/paths.ts';

const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;
if (!adminUrl)
  console.warn('\n*** multi-replica PostgreSQL test SKIPPED: STAGEDIFF_TEST_DATABASE_URL is not set ***\n');

describe.skipIf(!adminUrl)('two replicas on one PostgreSQL', () => {
  const db = `stagediff_replicas_${process.pid}_${Date.now().toString(36)}`;
  let admin: pg.Client;
  let stores: Store[];
  let a: StagediffApp;
  let b: StagediffApp;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    const u = new URL(adminUrl!);
    u.pathname = `/${db}`;
    stores = await Promise.all([
      openStore({ dataDir: '/unused', databaseUrl: u.toString() }),
      openStore({ dataDir: '/unused', databaseUrl: u.toString() }),
    ]);
    a = await testApp({}, stores[0]);
    b = await testApp({}, stores[1]);
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    for (const s of stores ?? []) await s.close();
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });

  it('writes through one are read, diffed and deleted through the other', async () => {
    expect((await a.inject({ url: '/healthz' })).json().store).toBe('postgres');
    const { id, auth } = await createComparison(a, 'replicated');
    const s1 = await addStage(a, id, auth, 'before');
    const s2 = await addStage(b, id, auth, 'after');
    expect(
      (
        await upload(a, id, s1, auth, [
          samplePath('pprof/go_httpserver_before_cpu.pb.gz'),
          samplePath('loadtests/wrk/baseline-latency.txt'),
        ])
      ).statusCode,
    ).toBe(200);
    expect((await upload(b, id, s2, auth, [samplePath('pprof/go_httpserver_after_cpu.pb.gz')])).statusCode).toBe(200);
    const viaB = (await b.inject({ url: `/api/comparisons/${id}` })).json();
    expect(viaB.stages.map((s: { artifacts: unknown[] }) => s.artifacts.length)).toEqual([2, 1]);
    const diffUrl = `/api/comparisons/${id}/diff?base=${s1}&target=${s2}&sampleType=cpu`;
    const d1 = (await b.inject({ url: diffUrl })).json();
    expect(d1.baseTotal).toBe(7010000000);
    expect(d1.targetTotal).toBe(5460000000);
    // A change through A must be seen by B at once, though B has this diff cached.
    expect((await upload(a, id, s2, auth, [samplePath('pprof/go_httpserver_before_cpu.pb.gz')])).statusCode).toBe(200);
    const d2 = (await b.inject({ url: diffUrl })).json();
    expect(d2.targetTotal).toBe(5460000000 + 7010000000);
    const raw = await b.inject({ url: `/api/artifacts/${viaB.stages[0].artifacts[0].id}/raw` });
    expect(raw.statusCode).toBe(200);
    expect((await b.inject({ method: 'DELETE', url: `/api/comparisons/${id}`, headers: auth })).statusCode).toBe(204);
    expect((await a.inject({ url: `/api/comparisons/${id}` })).statusCode).toBe(404);
    expect((await a.inject({ url: diffUrl })).statusCode).toBe(404);
    expect((await stores[0]!.stats()).blobs).toBe(0);
  });
});
