/**
 * Operations endpoints: /healthz answers in constant time (one trivial statement, the process's own
 * counters; no table counts, no directory scans), /metrics has everything and is private — by token
 * when METRICS_TOKEN is set, else to this machine only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { testApp } from '../helpers/app.ts';

describe('/healthz', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => app.close());

  it('checks the database with one statement and never counts the store', async () => {
    const store = app.ctx.store;
    const calls: string[] = [];
    for (const k of ['stats', 'ping', 'getComparison', 'getComparisonTree', 'storedBytes'] as const) {
      const f = store[k].bind(store) as (...a: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[k] = (...a: unknown[]) => {
        calls.push(k);
        return f(...a);
      };
    }
    const r = await app.inject({ url: '/healthz' });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toMatchObject({
      status: 'ok',
      store: 'sqlite',
      blobs: 'files',
      analysis: { workers: 2, queued: 0 },
    });
    expect(calls).toEqual(['ping']);
  });

  it('answers 503 when the database does not', async () => {
    const store = app.ctx.store;
    const f = store.ping;
    store.ping = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    };
    try {
      const r = await app.inject({ url: '/healthz' });
      expect(r.statusCode).toBe(503);
      expect(r.json().status).toBe('unavailable');
    } finally {
      store.ping = f;
    }
  });
});

describe('/metrics', () => {
  it('answers this machine without a token, and no one else', async () => {
    const app = await testApp();
    try {
      const local = await app.inject({ url: '/metrics' });
      expect(local.statusCode).toBe(200);
      expect(local.body).toMatch(/^stagediff_store_objects\{kind="comparisons"\} \d+$/m);
      expect(local.body).toMatch(/^stagediff_storage_max_bytes \d+$/m);
      const remote = await app.inject({ url: '/metrics', remoteAddress: '203.0.113.9' });
      expect(remote.statusCode).toBe(403);
      expect(remote.json().error.message).toMatch(/METRICS_TOKEN/);
      // A proxy on this machine passing a visitor on is not this machine asking.
      const proxied = await app.inject({ url: '/metrics', headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect(proxied.statusCode).toBe(403);
    } finally {
      await app.close();
    }
  });

  it('answers the bearer of METRICS_TOKEN from anywhere, and no one else', async () => {
    const app = await testApp({ METRICS_TOKEN: 'scrape-secret-1' });
    try {
      const url = '/metrics';
      expect((await app.inject({ url })).statusCode).toBe(401);
      expect((await app.inject({ url, headers: { authorization: 'Bearer wrong' } })).statusCode).toBe(401);
      const ok = await app.inject({
        url,
        remoteAddress: '203.0.113.9',
        headers: { authorization: 'Bearer scrape-secret-1' },
      });
      expect(ok.statusCode).toBe(200);
      expect(ok.body).toMatch(/# TYPE stagediff_http_requests_total counter/);
    } finally {
      await app.close();
    }
  });
});
