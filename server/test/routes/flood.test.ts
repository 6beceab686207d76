/**
 * One anonymous client floods a shared server with distinct uncached views — images and JSON — from 40
 * connections for 30 s, while a teammate opens a not-yet-cached view of another comparison every 2 s
 * and a load balancer asks /healthz. The teammate is always served (200), so are the health checks,
 * and the flood is refused with 429s: the analysis workers are shared fairly. Latencies (the
 * teammate's worst, the slowest checks) are logged. On real SQLite and real PostgreSQL, with the
 * server in its own process as `stagediff serve` runs it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { FLOOD_SECONDS, type FloodResult, floodScenario, report } from '../helpers/flood.ts';
import { type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;

function expectFairShare(r: FloodResult): void {
  // The teammate: one request every 2 s for 30 s, each answered 200 (never refused, never a 503).
  // Latencies are logged by report(), not asserted: a shared test machine's load would make them flaky.
  expect(r.teamResults.length).toBeGreaterThanOrEqual(FLOOD_SECONDS / 2 - 1);
  for (const x of r.teamResults) expect(x.status, x.body).toBe(200);
  // The load balancer: every health check answered 200 while the flood runs.
  expect(r.health.length).toBeGreaterThan(FLOOD_SECONDS);
  for (const h of r.health) expect(h.status).toBe(200);
  // The flood: refused with 429s (its own share served), never a server error.
  expect(r.mix.get(429) ?? 0).toBeGreaterThan(100);
  expect(r.mix.get(200) ?? 0).toBeGreaterThan(0);
  expect([...r.samples]).toEqual([]);
  expect(r.metrics).toMatch(/^stagediff_analysis_rejected_total\{reason="client-(jobs|rate)"\} \d+$/m);
}

describe('a flood of distinct uncached views from one client', () => {
  const servers: ServerProcess[] = [];
  afterAll(async () => {
    for (const s of servers) await s.stop();
  });

  it('leaves the teammate and the health checks served, on SQLite', async () => {
    const srv = await startServerProcess({ DATA_DIR: mkdtempSync(join(tmpdir(), 'stagediff-flood-')) });
    servers.push(srv);
    const r = await floodScenario(srv);
    report('sqlite', r);
    expectFairShare(r);
  }, 180_000);

  it.skipIf(!adminUrl)(
    'leaves the teammate and the health checks served, on PostgreSQL',
    async () => {
      const db = `stagediff_flood_${process.pid}_${Date.now().toString(36)}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${db}`);
      try {
        const u = new URL(adminUrl!);
        u.pathname = `/${db}`;
        const srv = await startServerProcess({
          DATA_DIR: mkdtempSync(join(tmpdir(), 'stagediff-flood-pg-')),
          DATABASE_URL: u.toString(),
        });
        servers.push(srv);
        const r = await floodScenario(srv);
        report('postgres', r);
        expectFairShare(r);
        await srv.stop();
      } finally {
        await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
        await admin.end();
      }
    },
    180_000,
  );
});
