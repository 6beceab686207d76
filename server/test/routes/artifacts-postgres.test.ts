import { connect, type Socket } from 'node:net';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { pprofBytes } from '../helpers/pprof-bytes.ts';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';

/*
 * Uploads against a real PostgreSQL (STAGEDIFF_TEST_DATABASE_URL, see server/test/store/postgres.test.ts),
 * over a real socket: slow clients must not take the database pool, NUL bytes must not reach it,
 * and an outage is a 503 with a message.
 */
const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;

async function timed(url: string): Promise<{ status: number; ms: number }> {
  const t0 = performance.now();
  const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  await r.arrayBuffer();
  return { status: r.status, ms: performance.now() - t0 };
}

describe.skipIf(!adminUrl)('uploads on PostgreSQL', () => {
  const db = `stagediff_uploads_${process.pid}_${Date.now().toString(36)}`;
  let admin: pg.Client;
  let app: StagediffApp;
  let base: string;
  let c: { id: string; auth: Record<string, string> };
  let stage: string;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    const u = new URL(adminUrl!);
    u.pathname = `/${db}`;
    app = await testApp({ DATABASE_URL: u.toString() });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const addr = app.server.address() as { port: number };
    base = `http://127.0.0.1:${addr.port}`;
    c = await createComparison(app, 'pg uploads');
    stage = await addStage(app, c.id, c.auth, 'baseline');
  }, 60_000);

  afterAll(async () => {
    await app?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });

  it('keeps answering /healthz and reads while 25 uploads trickle in', async () => {
    const boundary = 'slowboundary';
    const sockets: Socket[] = [];
    for (let i = 0; i < 25; i++) {
      const s = connect({ host: '127.0.0.1', port: Number(new URL(base).port) });
      s.on('error', () => {});
      await new Promise((r) => s.once('connect', r));
      s.write(
        `POST /api/comparisons/${c.id}/stages/${stage}/artifacts HTTP/1.1\r\nHost: x\r\nAuthorization: ${c.auth.authorization}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 10000000\r\n\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow${i}.txt"\r\n\r\nRunning 10s test @ http://127.0.0.1\r\n`,
      );
      sockets.push(s);
    }
    try {
      await new Promise((r) => setTimeout(r, 300));
      for (let round = 0; round < 3; round++) {
        const h = await timed(`${base}/healthz`);
        expect(h.status).toBe(200);
        expect(h.ms).toBeLessThan(2000);
        const read = await timed(`${base}/api/comparisons/${c.id}`);
        expect(read.status).toBe(200);
        expect(read.ms).toBeLessThan(2000);
        for (const s of sockets) s.write('x'.repeat(100));
      }
      // and a whole upload still goes through meanwhile
      const up = await upload(app, c.id, stage, c.auth, [join(fixturesDir, 'demo/baseline/run-1/wrk.txt')]);
      expect(up.statusCode).toBe(200);
    } finally {
      for (const s of sockets) s.destroy();
    }
    // The abandoned uploads leave nothing behind in the spool.
    await new Promise((r) => setTimeout(r, 500));
    expect(readdirSync(join(app.ctx.config.dataDir, 'spool'))).toEqual([]);
  }, 60_000);

  it('takes NUL bytes in a profile and refuses them in a title with a 400', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-pg-nul-'));
    const p = join(dir, 'nul.pb.gz');
    writeFileSync(
      p,
      pprofBytes({
        sampleTypes: [['cpu\u0000', 'nanoseconds']],
        samples: [{ stack: ['a\u0000b', 'main'], values: [9] }],
      }),
    );
    const up = await upload(app, c.id, stage, c.auth, [p]);
    expect(up.statusCode).toBe(200);
    // The sample type is kept as "cpu\ufffd" (PostgreSQL cannot hold NUL), in the summary and the views.
    const types = up.json().results[0].artifact.summary.sampleTypes as { type: string }[];
    expect(types.map((t) => t.type)).toEqual(['cpu\ufffd']);
    const own = await createComparison(app, 'nul');
    const st = await addStage(app, own.id, own.auth, 'one');
    expect((await upload(app, own.id, st, own.auth, [p])).statusCode).toBe(200);
    for (const q of ['', `&sampleType=${encodeURIComponent('cpu\ufffd')}`]) {
      const top = await app.inject({ url: `/api/comparisons/${own.id}/top?stage=${st}${q}` });
      expect(top.statusCode).toBe(200);
      expect(top.json().total).toBe(9);
      expect(top.json().rows.map((r: { name: string }) => r.name)).toContain('a\u0000b');
    }
    const bad = await fetch(`${base}/api/comparisons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'a\u0000b' }),
    });
    expect(bad.status).toBe(400);
    const stageBad = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages`,
      headers: c.auth,
      payload: { name: 'x\u0000' },
    });
    expect(stageBad.statusCode).toBe(400);
  });

  it('answers 503 with a message while the database refuses connections, and recovers', async () => {
    await admin.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [db]);
    try {
      const r = await fetch(`${base}/api/comparisons/${c.id}`);
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBeTruthy();
      expect((await r.json()).error.code).toBe('storage-unavailable');
      expect((await fetch(`${base}/healthz`)).status).toBe(503);
    } finally {
      await admin.query(`ALTER DATABASE ${db} ALLOW_CONNECTIONS true`);
    }
    expect((await fetch(`${base}/api/comparisons/${c.id}`)).status).toBe(200);
  }, 30_000);
});
