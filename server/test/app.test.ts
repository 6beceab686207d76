/**
 * The HTTP a public instance needs, as buildApp sets it up: compression whose bytes inflate back to
 * the plain response, long-lived immutable caching of hashed assets, ETag/304 on comparisons and
 * analysis results, security headers, a write rate limit answering 429 with Retry-After, HEAD
 * wherever GET, and a page that says the web client is missing.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { firstViewRequests } from '../src/api/page-requests.ts';
import type { StagediffApp } from '../src/app.ts';
import { addStage, createComparison, testApp, upload } from './helpers/app.ts';
import { fixturesDir } from './helpers/paths.ts';

const CPU = `${fixturesDir}demo/baseline/run-1/cpu.pb.gz`;
const WRK = `${fixturesDir}demo/baseline/run-1/wrk.txt`;

/** A built web client in miniature: index.html, one hashed script with its .br/.gz, one plain file. */
function webDist(): { dir: string; script: Buffer; scriptUrl: string } {
  const dir = mkdtempSync(join(tmpdir(), 'stagediff-web-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><html><head><script type="module" src="/assets/index-Dp8mOEYF.js"></script></head><body><div id="root"></div></body></html>',
  );
  const script = Buffer.from(
    Array.from({ length: 400 }, (_, i) => `export const value${i} = ${i} * Math.PI; // line ${i}\n`).join(''),
  );
  writeFileSync(join(dir, 'assets', 'index-Dp8mOEYF.js'), script);
  writeFileSync(join(dir, 'assets', 'index-Dp8mOEYF.js.br'), brotliCompressSync(script));
  writeFileSync(join(dir, 'assets', 'index-Dp8mOEYF.js.gz'), gzipSync(script));
  writeFileSync(join(dir, 'robots.txt'), 'User-agent: *\nDisallow: /c/\n');
  return { dir, script, scriptUrl: '/assets/index-Dp8mOEYF.js' };
}

function decode(encoding: string | undefined, body: Buffer): Buffer {
  if (encoding === 'br') return brotliDecompressSync(body);
  if (encoding === 'gzip') return gunzipSync(body);
  return body;
}

describe('HTTP of a public instance', () => {
  let app: StagediffApp;
  let web: ReturnType<typeof webDist>;
  let id: string;
  let stage: string;
  let auth: Record<string, string>;
  const flameUrl = () => `/api/comparisons/${id}/flamegraph?stage=${stage}`;

  beforeAll(async () => {
    web = webDist();
    app = await testApp({ WEB_DIST: web.dir, ANALYSIS_WORKERS: '0' });
    ({ id, auth } = await createComparison(app, 'http'));
    stage = await addStage(app, id, auth, 'baseline');
    const r = await upload(app, id, stage, auth, [CPU, WRK]);
    expect(r.json().results.map((x: { ok: boolean }) => x.ok)).toEqual([true, true]);
  });
  afterAll(async () => app?.close());

  it('compresses analysis JSON with br and gzip, and the inflated bytes are the plain response', async () => {
    const plain = await app.inject({ method: 'GET', url: flameUrl(), headers: { 'accept-encoding': 'identity' } });
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(10_000);
    for (const enc of ['br', 'gzip']) {
      const r = await app.inject({ method: 'GET', url: flameUrl(), headers: { 'accept-encoding': enc } });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-encoding']).toBe(enc);
      expect(r.headers.vary).toMatch(/accept-encoding/i);
      expect(r.rawPayload.length).toBeLessThan(plain.rawPayload.length / 3);
      expect(decode(enc, r.rawPayload).equals(plain.rawPayload)).toBe(true);
    }
    // The comparison itself, preferring br when both are offered.
    const both = await app.inject({
      method: 'GET',
      url: `/api/comparisons/${id}`,
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    });
    const raw = await app.inject({ method: 'GET', url: `/api/comparisons/${id}` });
    expect(both.headers['content-encoding']).toBe('br');
    expect(JSON.parse(decode('br', both.rawPayload).toString())).toEqual(raw.json());
  });

  it('sends uploaded files as they were uploaded, whatever the client accepts', async () => {
    const view = (await app.inject({ method: 'GET', url: `/api/comparisons/${id}` })).json();
    for (const a of view.stages[0].artifacts as { id: string; filename: string }[]) {
      const original = readFileSync(a.filename === 'cpu.pb.gz' ? CPU : WRK);
      const r = await app.inject({
        method: 'GET',
        url: `/api/artifacts/${a.id}/raw`,
        headers: { 'accept-encoding': 'br, gzip' },
      });
      expect(r.headers['content-encoding'], a.filename).toBeUndefined();
      expect(r.rawPayload.equals(original), a.filename).toBe(true);
    }
  });

  it('serves hashed assets precompressed and immutable, everything else revalidated', async () => {
    for (const enc of ['br', 'gzip']) {
      const r = await app.inject({ method: 'GET', url: web.scriptUrl, headers: { 'accept-encoding': enc } });
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-encoding']).toBe(enc);
      expect(r.headers['content-type']).toMatch(/javascript/);
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      // The file written at build time, byte for byte.
      expect(r.rawPayload.equals(readFileSync(join(web.dir, `${web.scriptUrl}.${enc === 'br' ? 'br' : 'gz'}`)))).toBe(
        true,
      );
      expect(decode(enc, r.rawPayload).equals(web.script)).toBe(true);
    }
    const plain = await app.inject({ method: 'GET', url: web.scriptUrl });
    expect(plain.rawPayload.equals(web.script)).toBe(true);
    for (const url of ['/', '/c/some-comparison', '/robots.txt']) {
      const r = await app.inject({ method: 'GET', url });
      expect(r.statusCode, url).toBe(200);
      expect(r.headers['cache-control'], url).toBe('no-cache');
    }
  });

  it('names the requests a comparison page draws first in its head, for the browser to preload', async () => {
    const search = `?base=${stage}&target=${stage}`;
    const page = await app.inject({ method: 'GET', url: `/c/${id}${search}` });
    expect(page.statusCode).toBe(200);
    const links = [...page.body.matchAll(/<link rel="preload" as="fetch" crossorigin href="([^"]+)">/g)].map((m) =>
      m[1]!.replaceAll('&amp;', '&'),
    );
    // The comparison, its stage table and the stage's flamegraph: each answered by the API.
    expect(links).toEqual(firstViewRequests(`/c/${id}`, search));
    expect(links).toHaveLength(3);
    for (const u of links) expect((await app.inject({ method: 'GET', url: u })).statusCode, u).toBe(200);
    // In the head; and nothing on a page that is not a comparison.
    expect(page.body.indexOf('rel="preload"')).toBeLessThan(page.body.indexOf('</head>'));
    for (const url of ['/', '/about'])
      expect((await app.inject({ method: 'GET', url })).body, url).not.toContain('rel="preload"');
  });

  it('answers a repeated analysis request with If-None-Match by 304, until the comparison changes', async () => {
    const first = await app.inject({ method: 'GET', url: flameUrl() });
    const tag = first.headers.etag as string;
    expect(tag).toMatch(/^W\/"/);
    expect(first.headers['cache-control']).toBe('no-cache');
    const again = await app.inject({ method: 'GET', url: flameUrl(), headers: { 'if-none-match': tag } });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
    expect(again.headers.etag).toBe(tag);
    // A changed comparison is a new revision: the old tag no longer matches.
    const r = await app.inject({
      method: 'PATCH',
      url: `/api/comparisons/${id}`,
      headers: auth,
      payload: { title: 'http, renamed' },
    });
    expect(r.statusCode).toBe(200);
    const changed = await app.inject({ method: 'GET', url: flameUrl(), headers: { 'if-none-match': tag } });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(tag);
    expect(changed.json()).toEqual(first.json());
  });

  it('answers a repeated comparison request with If-None-Match by 304', async () => {
    const first = await app.inject({ method: 'GET', url: `/api/comparisons/${id}` });
    const tag = first.headers.etag as string;
    expect(tag).toBeTruthy();
    const again = await app.inject({
      method: 'GET',
      url: `/api/comparisons/${id}`,
      headers: { 'if-none-match': tag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
  });

  it('sends security headers with a strict Content-Security-Policy on pages and API alike', async () => {
    for (const url of ['/', '/c/x', `/api/comparisons/${id}`]) {
      const r = await app.inject({ method: 'GET', url });
      const csp = String(r.headers['content-security-policy']);
      expect(csp, url).toContain("default-src 'none'");
      expect(csp, url).toContain("script-src 'self'");
      expect(csp, url).toContain("frame-ancestors 'none'");
      expect(csp, url).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(r.headers['referrer-policy'], url).toBe('no-referrer');
      expect(r.headers['x-content-type-options'], url).toBe('nosniff');
      // Plain HTTP without an https PUBLIC_URL: no HSTS (it would bind the whole host).
      expect(r.headers['strict-transport-security'], url).toBeUndefined();
    }
  });

  it('answers HEAD wherever GET answers, with the same status and headers and no body', async () => {
    for (const url of [
      '/',
      '/c/some-comparison',
      web.scriptUrl,
      `/api/comparisons/${id}`,
      flameUrl(),
      '/healthz',
      '/api/openapi.json',
    ]) {
      const get = await app.inject({ method: 'GET', url });
      const head = await app.inject({ method: 'HEAD', url });
      expect(head.statusCode, url).toBe(get.statusCode);
      expect(head.statusCode, url).toBe(200);
      expect(head.headers['content-type'], url).toBe(get.headers['content-type']);
      expect(head.rawPayload.length, url).toBe(0);
    }
    expect((await app.inject({ method: 'HEAD', url: '/api/comparisons/nope' })).statusCode).toBe(404);
  });
});

describe('write rate limit', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp({ RATE_LIMIT_WRITES: '3', RATE_LIMIT_WINDOW: '60' });
  });
  afterAll(async () => app?.close());

  it('answers the write over the limit with 429 and Retry-After, and leaves reads alone', async () => {
    const post = () => app.inject({ method: 'POST', url: '/api/comparisons', payload: { title: 'x' } });
    const created = [await post(), await post(), await post()];
    expect(created.map((r) => r.statusCode)).toEqual([201, 201, 201]);
    const over = await post();
    expect(over.statusCode).toBe(429);
    const retry = Number(over.headers['retry-after']);
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(over.json()).toEqual({ error: { code: 'rate-limited', message: expect.stringMatching(/retry in/) } });
    // One budget for every write of a client: a stage on an existing comparison is refused too.
    const { id, editToken } = created[0]!.json() as { id: string; editToken: string };
    const stage = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${id}/stages`,
      headers: { authorization: `Bearer ${editToken}` },
      payload: { name: 's' },
    });
    expect(stage.statusCode).toBe(429);
    // Another client address has its own budget; reads are never limited.
    const other = await app.inject({
      method: 'POST',
      url: '/api/comparisons',
      payload: { title: 'y' },
      remoteAddress: '10.1.2.3',
    });
    expect(other.statusCode).toBe(201);
    expect((await app.inject({ method: 'GET', url: `/api/comparisons/${id}` })).statusCode).toBe(200);
    // A client cannot buy itself a new budget by naming another address: no proxy is trusted by default.
    const spoofed = await app.inject({
      method: 'POST',
      url: '/api/comparisons',
      payload: { title: 'z' },
      headers: { 'x-forwarded-for': '192.0.2.77' },
    });
    expect(spoofed.statusCode).toBe(429);
  });

  it('behind a named proxy, counts the client the proxy names', async () => {
    const proxied = await testApp({ RATE_LIMIT_WRITES: '1', RATE_LIMIT_WINDOW: '60', TRUST_PROXY: '127.0.0.1' });
    try {
      const post = (client: string, remoteAddress = '127.0.0.1') =>
        proxied.inject({
          method: 'POST',
          url: '/api/comparisons',
          payload: { title: 'x' },
          headers: { 'x-forwarded-for': client },
          remoteAddress,
        });
      expect((await post('198.51.100.1')).statusCode).toBe(201);
      expect((await post('198.51.100.1')).statusCode).toBe(429);
      expect((await post('198.51.100.2')).statusCode).toBe(201);
      // The header of a peer that is not the proxy is ignored: the peer itself is the client.
      expect((await post('198.51.100.3', '203.0.113.9')).statusCode).toBe(201);
      expect((await post('198.51.100.4', '203.0.113.9')).statusCode).toBe(429);
    } finally {
      await proxied.close();
    }
  });
});

describe('without a built web client', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp({ WEB_DIST: '/nonexistent/web-dist' });
  });
  afterAll(async () => app?.close());

  it('answers every page with a page that says how to build it, and the API as usual', async () => {
    for (const url of ['/', '/c/demo', '/c/abc?tab=diff']) {
      for (const method of ['GET', 'HEAD'] as const) {
        const r = await app.inject({ method, url });
        expect(r.statusCode, `${method} ${url}`).toBe(503);
        expect(r.headers['content-type'], url).toMatch(/^text\/html/);
        if (method === 'GET') {
          expect(r.body).toContain('the web client is not built');
          // The server's file system stays private.
          expect(r.body).not.toContain('/nonexistent');
          expect(r.body).toContain('npm run build');
        }
      }
    }
    const api = await app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(api.statusCode).toBe(404);
    expect(api.json().error.code).toBe('not-found');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
