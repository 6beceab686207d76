/**
 * How views are served: from the cache as they were stored (compressed once), under canonical keys so
 * near-identical URLs cost one job, and admitted per client and per comparison when they miss — never
 * refusing an answer that is already computed.
 */
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const demo = (p: string) => join(fixturesDir, 'demo', p);

async function story(app: StagediffApp) {
  const c = await createComparison(app, 'serving');
  const a = await addStage(app, c.id, c.auth, 'baseline');
  const b = await addStage(app, c.id, c.auth, 'pooled');
  expect((await upload(app, c.id, a, c.auth, [demo('baseline/run-1/cpu.pb.gz')])).statusCode).toBe(200);
  expect((await upload(app, c.id, b, c.auth, [demo('pooled/run-1/cpu.pb.gz')])).statusCode).toBe(200);
  return { ...c, a, b };
}

async function metric(app: StagediffApp, line: RegExp): Promise<number> {
  const text = (await app.inject({ url: '/metrics' })).body;
  const m = new RegExp(`^${line.source} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('cached views as stored', () => {
  let app: StagediffApp;
  let s: Awaited<ReturnType<typeof story>>;
  beforeAll(async () => {
    app = await testApp();
    s = await story(app);
  }, 60_000);
  afterAll(async () => app.close());

  it('sends the stored brotli or gzip bytes with their Content-Encoding and Vary, and plain JSON to a client that takes neither', async () => {
    const url = `/api/comparisons/${s.id}/flamegraph?stage=${s.a}&minFraction=0.001`;
    const plain = await app.inject({ url });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/accept-encoding/i);
    const json = plain.json();
    expect(json.total).toBeGreaterThan(0);
    const br = await app.inject({ url, headers: { 'accept-encoding': 'br, gzip' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(br.rawPayload).toString())).toEqual(json);
    const gz = await app.inject({ url, headers: { 'accept-encoding': 'gzip, deflate' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.rawPayload).toString())).toEqual(json);
    const preferGzip = await app.inject({ url, headers: { 'accept-encoding': 'br;q=0.5, gzip' } });
    expect(preferGzip.headers['content-encoding']).toBe('gzip');
    const none = await app.inject({ url, headers: { 'accept-encoding': 'identity' } });
    expect(none.headers['content-encoding']).toBeUndefined();
    expect(none.json()).toEqual(json);
    // All answered from the one computation: every later request was a hit.
    expect(await metric(app, /stagediff_result_cache_misses_total/)).toBe(1);
    expect(await metric(app, /stagediff_result_cache_hits_total/)).toBe(4);
    // The same bytes a browser gets, a HEAD announces.
    const head = await app.inject({ method: 'HEAD', url, headers: { 'accept-encoding': 'br, gzip' } });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-encoding']).toBe('br');
  });

  it('keeps PNG as it is (no second compression)', async () => {
    const url = `/api/comparisons/${s.id}/diff.png?base=${s.a}&target=${s.b}&width=600`;
    const r = await app.inject({ url, headers: { 'accept-encoding': 'br, gzip' } });
    expect(r.statusCode).toBe(200);
    expect(r.headers['content-type']).toBe('image/png');
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.rawPayload.subarray(1, 4).toString()).toBe('PNG');
  });

  it('costs one job for a flood of near-identical image URLs', async () => {
    const misses = await metric(app, /stagediff_result_cache_misses_total/);
    const base = `/api/comparisons/${s.id}/diff.svg?base=${s.a}&target=${s.b}`;
    const urls = [
      `${base}&noise=0.0021&width=1010`,
      `${base}&width=990&noise=0.00195`,
      `${base}&noise=0.002&width=1000&limit=10`,
      `${base}&noise=2e-3&width=1000&sort=cum&focus=`,
    ];
    const answers = await Promise.all(urls.map((url) => app.inject({ url })));
    for (const r of answers) expect(r.statusCode).toBe(200);
    expect(new Set(answers.map((r) => r.body)).size).toBe(1);
    expect(answers[0]!.body).toMatch(/width="1000"/);
    expect((await metric(app, /stagediff_result_cache_misses_total/)) - misses).toBeLessThanOrEqual(urls.length);
    // …and exactly one of them was computed: the rest waited for it or found it stored.
    expect(await metric(app, /stagediff_analysis_jobs_total\{op="diffSvg"\}/)).toBe(1);
  });

  it('refuses an image wider than IMAGE_MAX_WIDTH with a 400 naming width', async () => {
    const r = await app.inject({ url: `/api/comparisons/${s.id}/flamegraph.png?stage=${s.a}&width=4000` });
    expect(r.statusCode).toBe(400);
    expect(r.json().error).toMatchObject({ code: 'invalid-request', param: 'width' });
    expect(r.json().error.message).toMatch(/IMAGE_MAX_WIDTH/);
  });
});

describe('fair share of uncached work', () => {
  it('refuses a client past its budget with 429 and Retry-After, still serves what is cached, and counts the reason', async () => {
    const app = await testApp({ ANALYSIS_CLIENT_JOBS_PER_MINUTE: '3' });
    try {
      const s = await story(app);
      const view = (f: string) => `/api/comparisons/${s.id}/flamegraph?stage=${s.a}&minFraction=${f}`;
      for (const f of ['0.01', '0.02', '0.03']) expect((await app.inject({ url: view(f) })).statusCode).toBe(200);
      const refused = await app.inject({ url: view('0.04') });
      expect(refused.statusCode).toBe(429);
      expect(refused.json().error.code).toBe('rate-limited');
      expect(refused.json().error.message).toMatch(/ANALYSIS_CLIENT_JOBS_PER_MINUTE=3/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // Cached answers are never refused, however far past its budget the client is.
      for (const f of ['0.01', '0.02', '0.03', '0.010'])
        expect((await app.inject({ url: view(f) })).statusCode).toBe(200);
      // Another address has its own budget.
      expect((await app.inject({ url: view('0.05'), remoteAddress: '198.51.100.7' })).statusCode).toBe(200);
      expect(await metric(app, /stagediff_analysis_rejected_total\{reason="client-rate"\}/)).toBe(1);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('counts clients by address as TRUST_PROXY says: a forwarded address is believed only from a trusted proxy', async () => {
    for (const [trust, fresh] of [
      ['', false],
      ['127.0.0.1', true],
    ] as const) {
      const app = await testApp({ ANALYSIS_CLIENT_JOBS_PER_MINUTE: '1', ...(trust ? { TRUST_PROXY: trust } : {}) });
      try {
        const s = await story(app);
        const view = (f: string) => `/api/comparisons/${s.id}/top?stage=${s.a}&focus=${f}`;
        expect((await app.inject({ url: view('a'), headers: { 'x-forwarded-for': '203.0.113.1' } })).statusCode).toBe(
          200,
        );
        // A second address named in the header: a new budget only when the proxy is trusted.
        const second = await app.inject({ url: view('b'), headers: { 'x-forwarded-for': '203.0.113.2' } });
        expect(second.statusCode, `TRUST_PROXY=${trust}`).toBe(fresh ? 200 : 429);
      } finally {
        await app.close();
      }
    }
  }, 60_000);
});

describe('a full disk is a write problem only', () => {
  it('answers an uncached view when its cache write fails, and counts the failed write', async () => {
    // In process, so the database connection that writes the cache is this one; SQLite is then made
    // unable to grow its file, as on a full disk (SQLITE_FULL).
    const app = await testApp({ ANALYSIS_WORKERS: '0' });
    try {
      const s = await story(app);
      const db = (app.ctx.store as unknown as { db: Database.Database }).db;
      const pages = db.pragma('page_count', { simple: true }) as number;
      db.pragma('wal_checkpoint(TRUNCATE)');
      db.pragma(`max_page_count = ${pages}`);
      const r = await app.inject({ url: `/api/comparisons/${s.id}/top?stage=${s.a}` });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.json().rows.length).toBeGreaterThan(0);
      expect(await metric(app, /stagediff_result_cache_write_failures_total\{code="SQLITE_FULL"\}/)).toBe(2);
      // Nothing was stored, yet the view is answered (this process keeps it in memory).
      expect((await app.inject({ url: `/api/comparisons/${s.id}/top?stage=${s.a}` })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  }, 60_000);
});
