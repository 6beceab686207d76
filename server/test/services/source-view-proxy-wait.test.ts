/**
 * A source view waiting for a module fetch does not hold its analysis worker: with one worker and a
 * module proxy slow to answer, another comparison's view is computed while the source view waits,
 * and the source view, once the zip arrives, gets its text in the same answer (computed again from
 * the cache).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const fx = join(fixturesDir, 'goproxy');
const DEP_FN = 'github.com/BurntSushi/toml.(*lexer).next';
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-proxy-wait-'));
let proxy: Server;
let app: StagediffApp;
/** Called to let the proxy send the zip it holds. */
let answer: () => void = () => {};
let asked = 0;

beforeAll(async () => {
  proxy = createServer((req, res) => {
    asked++;
    const zip = readFileSync(join(fx, 'proxy', decodeURIComponent(new URL(req.url!, 'http://x').pathname)));
    answer = () => res.writeHead(200, { 'content-type': 'application/zip', 'content-length': zip.length }).end(zip);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  app = await testApp({
    ANALYSIS_WORKERS: '1',
    SOURCE_GOPROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    SOURCE_GOPROXY_WAIT_MS: '120000',
    // (The proxy answers when the test says: no deadline of the fetch's may pass first on a loaded machine.)
    SOURCE_GOPROXY_TIMEOUT_MS: '120000',
  });
});
afterAll(async () => {
  await app.close();
  proxy.closeAllConnections();
  await new Promise((r) => proxy.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

describe('a source view waiting for the module proxy', () => {
  it("leaves its worker to other views meanwhile, and answers with the module's text once it arrives", async () => {
    const deps = await createComparison(app, 'deps');
    const s = await addStage(app, deps.id, deps.auth, 'app');
    expect((await upload(app, deps.id, s, deps.auth, [join(fx, 'cpu.pb.gz')])).statusCode).toBe(200);
    const dir = mkdtempSync(join(tmp, 'app-'));
    for (const f of ['go.mod', 'go.sum', 'main.go']) writeFileSync(join(dir, f), readFileSync(join(fx, 'app', f)));
    execFileSync('tar', ['-czf', join(dir, 'app.tar.gz'), '-C', dir, 'go.mod', 'go.sum', 'main.go']);
    const put = await app.inject({
      method: 'PUT',
      url: `/api/comparisons/${deps.id}/stages/${s}/sources?filename=app.tar.gz`,
      headers: { ...deps.auth, 'content-type': 'application/octet-stream' },
      payload: readFileSync(join(dir, 'app.tar.gz')),
    });
    expect(put.statusCode, put.body).toBe(200);
    const other = await createComparison(app, 'other');
    const o = await addStage(app, other.id, other.auth, 'demo');
    const demo = join(fixturesDir, 'demo', 'baseline', 'run-1', 'cpu.pb.gz');
    expect((await upload(app, other.id, o, other.auth, [demo])).statusCode).toBe(200);

    const order: string[] = [];
    const source = app
      .inject({ url: `/api/comparisons/${deps.id}/source?base=app&target=app&fn=${encodeURIComponent(DEP_FN)}` })
      .then((r) => {
        order.push('source');
        return r;
      });
    // The proxy has the request: the view is waiting for the zip.
    while (asked === 0) await new Promise((r) => setTimeout(r, 20));
    // The only worker is free for another comparison's view meanwhile.
    const flame = await app.inject({ url: `/api/comparisons/${other.id}/flamegraph?stage=demo` });
    order.push('flamegraph');
    expect(flame.statusCode, flame.body).toBe(200);
    answer();
    const r = await source;
    expect(order).toEqual(['flamegraph', 'source']);
    expect(r.statusCode, r.body).toBe(200);
    const v = r.json();
    // The zip matched the stage's go.sum (hashed on its own thread), and the text is the module's.
    expect(v.base).toMatchObject({
      textFrom: 'proxy',
      problem: null,
      module: { module: 'github.com/BurntSushi/toml' },
    });
    expect(v.rows.some((row: { baseText: string | null }) => row.baseText?.includes('func (lx *lexer) next()'))).toBe(
      true,
    );
    expect(asked).toBe(1);
  });
});
