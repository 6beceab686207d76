/**
 * A database that leaves the network without closing anything (a host gone, a cable pulled): packets
 * just stop. A TCP relay between the server and a real PostgreSQL goes silent on command: it keeps
 * every connection open and passes nothing either way, and accepts new ones it never answers. Every
 * request must still end, as 503 storage-unavailable, within the configured connect and statement
 * timeouts, and the server must recover by itself once the database answers again.
 */
import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { PgTestDatabases } from './pg-databases.ts';

const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;
if (!adminUrl) console.warn('\n*** PostgreSQL outage test SKIPPED: STAGEDIFF_TEST_DATABASE_URL is not set ***\n');

/** Relays TCP to `target`; `silent` stops all traffic without closing anything. */
class SilentableRelay {
  silent = false;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  constructor(target: { host: string; port: number }) {
    this.server = createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.on('error', () => {});
      if (this.silent) return; // accepted, never answered
      const upstream = connect(target);
      this.sockets.add(upstream);
      upstream.on('close', () => this.sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('data', (d) => {
        if (!this.silent) upstream.write(d);
      });
      upstream.on('data', (d) => {
        if (!this.silent) client.write(d);
      });
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve) =>
      this.server.listen(0, '127.0.0.1', () => resolve((this.server.address() as { port: number }).port)),
    );
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

/** A request that must end by itself; the abort is only a backstop against a hung test run. */
async function get(url: string): Promise<{ status: number; body: { error?: { code: string } } }> {
  const r = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  return { status: r.status, body: (await r.json()) as { error?: { code: string } } };
}

describe.skipIf(!adminUrl)('a database that leaves the network', () => {
  const dbs = new PgTestDatabases(adminUrl ?? '', 'outage');
  let relay: SilentableRelay;
  let app: StagediffApp;
  let base: string;

  beforeAll(async () => {
    await dbs.setup();
    const direct = new URL(await dbs.fresh());
    relay = new SilentableRelay({ host: direct.hostname, port: Number(direct.port || 5432) });
    const via = new URL(direct);
    via.hostname = '127.0.0.1';
    via.port = String(await relay.listen());
    app = await testApp({
      DATABASE_URL: via.toString(),
      DATABASE_CONNECT_TIMEOUT_MS: '1000',
      DATABASE_STATEMENT_TIMEOUT_MS: '2000',
      ANALYSIS_WORKERS: '0',
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await relay?.close();
    await dbs.teardown();
  });

  it('answers 503 within the timeouts instead of hanging, and recovers without a restart', async () => {
    const c = await createComparison(app, 'outage');
    const stage = await addStage(app, c.id, c.auth, 'baseline');
    expect((await upload(app, c.id, stage, c.auth, [`${fixturesDir}demo/baseline/run-1/wrk.txt`])).statusCode).toBe(
      200,
    );
    expect((await get(`${base}/api/comparisons/${c.id}`)).status).toBe(200);

    relay.silent = true;
    try {
      // Pooled connections hang mid-query (the client's read timeout ends them); new ones never
      // get past the start-up exchange (the connect timeout ends them). Several at once: the pool
      // queue must not hold any of them forever either.
      const answers = await Promise.all([
        get(`${base}/api/comparisons/${c.id}`),
        get(`${base}/api/comparisons/${c.id}/top?stage=${stage}`),
        get(`${base}/healthz`),
        get(`${base}/api/comparisons/${c.id}`),
      ]);
      for (const a of answers) expect(a.status).toBe(503);
      for (const a of [answers[0]!, answers[1]!, answers[3]!]) expect(a.body.error?.code).toBe('storage-unavailable');
      // And once more, now that the pool holds only dead connections or none.
      const again = await get(`${base}/api/comparisons/${c.id}`);
      expect([again.status, again.body.error?.code]).toEqual([503, 'storage-unavailable']);
    } finally {
      relay.silent = false;
    }

    let back = await get(`${base}/api/comparisons/${c.id}`);
    for (let i = 0; i < 20 && back.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 500));
      back = await get(`${base}/api/comparisons/${c.id}`);
    }
    expect(back.status).toBe(200);
    expect((await get(`${base}/healthz`)).status).toBe(200);
  }, 120_000);
});
