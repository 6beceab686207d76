/** A stage's source files over the API (a real socket): stored from real archives, refused cleanly, counted, removed. */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { paxFlood } from '../helpers/pax-flood.ts';

const dir = mkdtempSync(join(tmpdir(), 'stagediff-sources-api-'));
let app: StagediffApp;
let base: string;

function archive(name: string, files: Record<string, string>, format: 'tar.gz' | 'zip' = 'tar.gz'): Buffer {
  const root = join(dir, `${name}-src`);
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), text);
  }
  const out = join(dir, `${name}.${format}`);
  if (format === 'zip') execFileSync('zip', ['-qr', out, '.'], { cwd: root });
  else execFileSync('tar', ['-czf', out, '-C', root, '.']);
  return readFileSync(out);
}

async function put(id: string, stageId: string, auth: Record<string, string>, body: Buffer, filename: string) {
  return fetch(`${base}/api/comparisons/${id}/stages/${stageId}/sources?filename=${encodeURIComponent(filename)}`, {
    method: 'PUT',
    headers: { ...auth, 'content-type': 'application/octet-stream' },
    body: new Uint8Array(body),
  });
}

beforeAll(async () => {
  app = await testApp({ MAX_COMPARISON_BYTES: String(64 * 1024) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const addr = app.server.address() as { port: number };
  base = `http://127.0.0.1:${addr.port}`;
});
afterAll(async () => {
  await app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('stage sources over the API', () => {
  const v1 = {
    'go.mod': 'module example.com/shop\n\ngo 1.22\n',
    'main.go': 'package main\n\nfunc main() { println("<script>x</script>") }\n',
    'docs/notes.txt': 'not kept\n',
  };

  it('stores a tar.gz, lists it, shows it on the comparison, replaces it with a zip, and deletes it', async () => {
    const c = await createComparison(app, 'sources');
    const sid = await addStage(app, c.id, c.auth, 'baseline');
    const r = await put(c.id, sid, c.auth, archive('v1', v1), 'v1.tar.gz');
    expect(r.status).toBe(200);
    const info = await r.json();
    expect(info).toMatchObject({
      modulePath: 'example.com/shop',
      files: 2,
      origin: 'v1.tar.gz',
      revision: '',
      dirty: null,
    });
    const listing = await (await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}/sources`)).json();
    expect(listing.entries).toEqual([
      { path: 'go.mod', size: Buffer.byteLength(v1['go.mod']) },
      { path: 'main.go', size: Buffer.byteLength(v1['main.go']) },
    ]);
    const view = await (await fetch(`${base}/api/comparisons/${c.id}`)).json();
    expect(view.stages[0].sources).toEqual(info);
    expect(view.usage.bytes).toBe(info.size);

    const z = await put(c.id, sid, c.auth, archive('v2', { ...v1, 'pkg/a.go': 'package pkg\n' }, 'zip'), 'v2.zip');
    expect(z.status).toBe(200);
    expect((await z.json()).files).toBe(3);

    expect((await put(c.id, sid, {}, archive('v3', v1), 'v3.tar.gz')).status).toBe(401);
    const del = await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}/sources`, {
      method: 'DELETE',
      headers: c.auth,
    });
    expect(del.status).toBe(204);
    expect((await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}/sources`)).status).toBe(404);
    expect((await (await fetch(`${base}/api/comparisons/${c.id}`)).json()).stages[0]).not.toHaveProperty('sources');
  });

  it('refuses an unsafe archive with a 400 naming the archive and entry, keeping the sources it had', async () => {
    const c = await createComparison(app, 'refused');
    const sid = await addStage(app, c.id, c.auth, 'baseline');
    expect((await put(c.id, sid, c.auth, archive('ok', v1), 'ok.tar.gz')).status).toBe(200);
    // A tar that climbs out: GNU tar keeps "../" with --absolute-names.
    const inner = join(dir, 'climb', 'inner');
    mkdirSync(inner, { recursive: true });
    writeFileSync(join(dir, 'climb', 'evil.go'), 'package evil\n');
    const evil = join(dir, 'climb.tar.gz');
    execFileSync('tar', ['-czf', evil, '--absolute-names', '-C', inner, '../evil.go']);
    const r = await put(c.id, sid, c.auth, readFileSync(evil), 'climb.tar.gz');
    expect(r.status).toBe(400);
    const body = await r.json();
    expect(body.error.message).toBe(
      'source archive climb.tar.gz, entry "../evil.go": has a ".." path segment (it would leave the archive); nothing was stored',
    );
    expect(body.error.param).toBe('source');
    const still = await (await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}/sources`)).json();
    expect(still.origin).toBe('ok.tar.gz');

    const junk = await put(c.id, sid, c.auth, Buffer.from('not an archive'), 'junk.bin');
    expect(junk.status).toBe(400);
    expect((await junk.json()).error.message).toMatch(/^source archive junk\.bin: is neither a \.tar\.gz nor a \.zip/);
    const empty = await put(c.id, sid, c.auth, archive('empty', { 'README.md': 'x\n' }), 'empty.tar.gz');
    expect(empty.status).toBe(400);
  });

  it('counts sources against MAX_COMPARISON_BYTES and removes them with their stage', async () => {
    const c = await createComparison(app, 'quota');
    const sid = await addStage(app, c.id, c.auth, 'baseline');
    // Random text compresses poorly: about 100 KiB stored, past the 64 KiB bound.
    const noise = `// ${randomBytes(100 * 1024).toString('base64')}\n`;
    const r = await put(c.id, sid, c.auth, archive('big', { 'go.mod': 'module m\n', 'big.go': noise }), 'big.tar.gz');
    expect(r.status).toBe(413);
    expect((await r.json()).error.message).toMatch(/MAX_COMPARISON_BYTES/);
    expect((await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}/sources`)).status).toBe(404);

    expect((await put(c.id, sid, c.auth, archive('small', v1), 'small.tar.gz')).status).toBe(200);
    const del = await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}`, { method: 'DELETE', headers: c.auth });
    expect(del.status).toBe(204);
    expect((await (await fetch(`${base}/api/comparisons/${c.id}`)).json()).usage.bytes).toBe(0);
  });

  it('refuses 2.1 million pax headers naming the entry bound, at once and off the event loop', async () => {
    const c = await createComparison(app, 'pax flood');
    const sid = await addStage(app, c.id, c.auth, 'baseline');
    const body = paxFlood(1026);
    const t0 = performance.now();
    const r = await put(c.id, sid, c.auth, body, 'pax.tar.gz');
    const ms = performance.now() - t0;
    console.log(
      `[pax flood] ${(body.length / 1e6).toFixed(1)} MB, 2,101,248 pax headers: ${r.status} in ${ms.toFixed(0)} ms`,
    );
    expect(r.status).toBe(413);
    const e = (await r.json()).error;
    expect(e.message).toMatch(
      /^source archive pax\.tar\.gz, entry .*: has more than 20000 entries, metadata headers counted \(MAX_SOURCE_ARCHIVE_ENTRIES\); nothing was stored$/,
    );
    // A guard against reading all 2.1 M headers (seconds of CPU), not a measurement.
    expect(ms).toBeLessThan(10_000);
    expect((await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}/sources`)).status).toBe(404);
  });

  it('reads an archive in an analysis worker under ANALYSIS_TIMEOUT_MS: past it, 422 naming the archive', async () => {
    // With the entry bound lifted, reading 2.1 M headers takes seconds of CPU: the worker's deadline
    // stops it, and the server answers other requests meanwhile (the main thread never reads it).
    const own = await testApp({ MAX_SOURCE_ARCHIVE_ENTRIES: '10000000', ANALYSIS_TIMEOUT_MS: '300' });
    try {
      const c = await createComparison(own, 'slow archive');
      const sid = await addStage(own, c.id, c.auth, 'baseline');
      const pending = own.inject({
        method: 'PUT',
        url: `/api/comparisons/${c.id}/stages/${sid}/sources?filename=slow.tar.gz`,
        headers: { ...c.auth, 'content-type': 'application/octet-stream' },
        payload: paxFlood(1026),
      });
      expect((await own.inject({ url: '/healthz' })).statusCode).toBe(200);
      const r = await pending;
      expect(r.statusCode, r.body).toBe(422);
      expect(r.headers['retry-after']).toBeUndefined();
      expect(r.json().error.message).toMatch(
        /reading the source archive slow\.tar\.gz takes longer than the 300 ms allowed per job \(ANALYSIS_TIMEOUT_MS\)/,
      );
      expect((await own.inject({ url: `/api/comparisons/${c.id}/stages/${sid}/sources` })).statusCode).toBe(404);
    } finally {
      await own.close();
    }
  });

  it('refuses a non-archive content type with 415', async () => {
    const c = await createComparison(app, 'type');
    const sid = await addStage(app, c.id, c.auth, 'baseline');
    const r = await fetch(`${base}/api/comparisons/${c.id}/stages/${sid}/sources`, {
      method: 'PUT',
      headers: { ...c.auth, 'content-type': 'application/gzip' },
      body: new Uint8Array(gzipSync('x')),
    });
    expect(r.status).toBe(415);
  });
});
