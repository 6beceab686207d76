/**
 * The module proxy client on real module zips (fixtures/goproxy/proxy: github.com/BurntSushi/toml v1.4.0
 * as go mod download fetched it, and the fmt and strconv entries of the Go 1.26.8 toolchain module),
 * served from a file:// proxy and by an HTTP server on 127.0.0.1: files come out byte for byte as
 * unzip reads them, are cached in the store (a second client on the same store fetches nothing), and
 * every bad answer (404, 410, 5xx, a stalled or oversized body, a hostile zip) is an answer naming the
 * module and the problem, remembered so it is not asked again per request.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { GoProxy, keptModuleFile } from '../../src/services/goproxy.ts';
import { Metrics } from '../../src/services/metrics.ts';
import { Spool } from '../../src/services/spool.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { zipBytes } from '../helpers/zip.ts';

const proxyDir = join(fixturesDir, 'goproxy', 'proxy');
const TOML = 'github.com/BurntSushi/toml';
const TOML_ZIP = join(proxyDir, 'github.com/!burnt!sushi/toml/@v/v1.4.0.zip');
const TOOLCHAIN = 'golang.org/toolchain';
const GO_1_26_8 = 'v0.0.1-go1.26.8.linux-amd64';
const TOOLCHAIN_ZIP = join(proxyDir, `golang.org/toolchain/@v/${GO_1_26_8}.zip`);

const tmp = mkdtempSync(join(tmpdir(), 'stagediff-goproxy-'));
const stores: Store[] = [];
afterAll(async () => {
  for (const s of stores) await s.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A file of a zip as unzip reads it. */
function unzipped(zip: string, entry: string): string {
  return execFileSync('unzip', ['-p', zip, entry], { encoding: 'utf8' });
}

async function newStore(dir = mkdtempSync(join(tmp, 'store-'))): Promise<{ store: Store; dir: string }> {
  const store = await openStore({ dataDir: dir });
  stores.push(store);
  return { store, dir };
}

async function client(proxy: string, env: Record<string, string> = {}, store?: Store, now?: () => number) {
  const s = store ?? (await newStore()).store;
  const config = loadConfig({ DATA_DIR: tmp, SOURCE_GOPROXY: proxy, ...env });
  const metrics = new Metrics();
  const p = new GoProxy({
    config,
    store: s,
    spool: new Spool(join(tmp, 'spool')),
    metrics,
    ...(now ? { now } : {}),
  });
  return { proxy: p, store: s, metrics };
}

/** An HTTP proxy on 127.0.0.1 serving the fixture proxy's files, with `route` answering first when it likes. */
interface Served {
  url: string;
  requests: string[];
  /** Most requests in flight at once. */
  maxInFlight: number;
  route: ((req: IncomingMessage, res: ServerResponse) => boolean) | null;
  server: Server;
}

const servers: Served[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.server.closeAllConnections();
    await new Promise((r) => s.server.close(r));
  }
});

async function serve(route: Served['route'] = null, hold = 0): Promise<Served> {
  const served: Served = { url: '', requests: [], maxInFlight: 0, route, server: null as unknown as Server };
  let inFlight = 0;
  served.server = createServer((req, res) => {
    served.requests.push(req.url ?? '');
    inFlight++;
    served.maxInFlight = Math.max(served.maxInFlight, inFlight);
    res.on('close', () => inFlight--);
    if (served.route?.(req, res)) return;
    const answer = () => {
      let body: Buffer;
      try {
        body = readFileSync(join(proxyDir, decodeURIComponent(new URL(req.url!, 'http://x').pathname)));
      } catch {
        res.writeHead(404, { 'content-type': 'text/plain' }).end(`not found: ${req.url}`);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': body.length }).end(body);
    };
    if (hold > 0) setTimeout(answer, hold);
    else answer();
  });
  await new Promise<void>((r) => served.server.listen(0, '127.0.0.1', r));
  served.url = `http://127.0.0.1:${(served.server.address() as AddressInfo).port}`;
  servers.push(served);
  return served;
}

describe('a file:// proxy of real module zips', () => {
  it("answers a dependency's file byte for byte, and the standard library's from the toolchain module", async () => {
    const { proxy } = await client(pathToFileURL(proxyDir).href);
    const got = await proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' });
    expect(got).toEqual({ ok: true, from: 'proxy', text: unzipped(TOML_ZIP, `${TOML}@v1.4.0/decode.go`) });
    const fmt = await proxy.file({ module: TOOLCHAIN, version: GO_1_26_8, path: 'src/fmt/print.go' });
    expect(fmt).toEqual({
      ok: true,
      from: 'proxy',
      text: unzipped(TOOLCHAIN_ZIP, `${TOOLCHAIN}@${GO_1_26_8}/src/fmt/print.go`),
    });
    expect(proxy.fetches).toBe(2);
  });

  it('keeps source files only: no tests, no test data, and of the toolchain only src/ without cmd/', () => {
    expect(keptModuleFile(TOML, 'decode.go')).toBe(true);
    expect(keptModuleFile(TOML, 'go.mod')).toBe(true);
    expect(keptModuleFile(TOML, 'decode_test.go')).toBe(false);
    expect(keptModuleFile(TOML, 'internal/testdata/x.go')).toBe(false);
    expect(keptModuleFile(TOML, 'README.md')).toBe(false);
    expect(keptModuleFile(TOOLCHAIN, 'src/fmt/print.go')).toBe(true);
    expect(keptModuleFile(TOOLCHAIN, 'src/runtime/asm_amd64.s')).toBe(true);
    expect(keptModuleFile(TOOLCHAIN, 'src/cmd/go/main.go')).toBe(false);
    expect(keptModuleFile(TOOLCHAIN, 'pkg/tool/linux_amd64/compile')).toBe(false);
  });

  it('caches the module in the store: a second client on the same store answers without the proxy', async () => {
    const { store } = await newStore();
    const first = await client(pathToFileURL(proxyDir).href, {}, store);
    expect((await first.proxy.file({ module: TOML, version: 'v1.4.0', path: 'lex.go' })).ok).toBe(true);
    expect(first.proxy.fetches).toBe(1);
    // Another file of the same module, in a new client (a restart): the store's cache, no fetch.
    const second = await client(pathToFileURL(proxyDir).href, {}, store);
    const got = await second.proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' });
    expect(got).toEqual({ ok: true, from: 'cache', text: unzipped(TOML_ZIP, `${TOML}@v1.4.0/decode.go`) });
    // A test file is in the zip but never kept: a definite "no such file", from the cache too.
    const test = await second.proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode_test.go' });
    expect(test).toMatchObject({ ok: false, transient: false });
    expect(second.proxy.fetches).toBe(0);
  });

  it('answers a version the proxy lacks as such, remembered for SOURCE_GOPROXY_RETRY_SECONDS', async () => {
    let now = Date.parse('2026-11-28T12:00:00Z');
    const { proxy } = await client(
      pathToFileURL(proxyDir).href,
      { SOURCE_GOPROXY_RETRY_SECONDS: '60' },
      undefined,
      () => now,
    );
    const req = { module: TOML, version: 'v9.9.9', path: 'decode.go' };
    const got = await proxy.file(req);
    expect(got).toMatchObject({ ok: false, transient: false });
    expect(got.ok === false && got.problem).toContain(`has no ${TOML}@v9.9.9`);
    const again = await proxy.file(req);
    expect(again.ok === false && again.problem).toContain('remembered');
    expect(proxy.fetches).toBe(1);
    now += 61_000;
    await proxy.file(req);
    expect(proxy.fetches).toBe(2);
  });

  it('refuses names that are no module path or version without asking', async () => {
    const { proxy } = await client(pathToFileURL(proxyDir).href);
    for (const [module, version] of [
      ['../../etc', 'v1.0.0'],
      ['github.com/x/../../y', 'v1.0.0'],
      ['github.com/x/y', '../v1'],
      ['github.com/x/y', 'v1.0.0/../../z'],
      ['example', 'v1.0.0'],
    ] as const)
      expect(await proxy.file({ module, version, path: 'a.go' })).toMatchObject({ ok: false, transient: false });
    expect(proxy.fetches).toBe(0);
  });
});

describe('an http:// proxy on 127.0.0.1', () => {
  it('fetches the escaped URL once, however many views ask at once, and then serves from the cache', async () => {
    const served = await serve(null, 20);
    const { proxy } = await client(served.url);
    const asks = ['decode.go', 'lex.go', 'parse.go', 'decode.go'].map((path) =>
      proxy.file({ module: TOML, version: 'v1.4.0', path }),
    );
    const answers = await Promise.all(asks);
    expect(answers.every((a) => a.ok)).toBe(true);
    expect(served.requests).toEqual(['/github.com/!burnt!sushi/toml/@v/v1.4.0.zip']);
    expect(await proxy.file({ module: TOML, version: 'v1.4.0', path: 'type_toml.go' })).toMatchObject({
      ok: true,
      from: 'cache',
    });
    expect(served.requests).toHaveLength(1);
  });

  it('fetches at most SOURCE_GOPROXY_CONCURRENCY zips at once', async () => {
    const served = await serve(null, 30);
    const { proxy } = await client(served.url, { SOURCE_GOPROXY_CONCURRENCY: '1' });
    const answers = await Promise.all([
      proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' }),
      proxy.file({ module: TOOLCHAIN, version: GO_1_26_8, path: 'src/fmt/print.go' }),
      proxy.file({ module: TOML, version: 'v1.3.2', path: 'decode.go' }),
    ]);
    expect(answers.map((a) => a.ok)).toEqual([true, true, false]);
    expect(served.requests).toHaveLength(3);
    expect(served.maxInFlight).toBe(1);
  });

  for (const status of [404, 410]) {
    it(`answers ${status} as "the proxy has no such version", with the proxy's words, remembered`, async () => {
      const served = await serve((_req, res) => {
        res.writeHead(status, { 'content-type': 'text/plain' }).end('not found: unknown revision v1.4.0\n');
        return true;
      });
      const { proxy } = await client(served.url);
      const got = await proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' });
      expect(got).toEqual({
        ok: false,
        transient: false,
        problem: `${served.url} has no ${TOML}@v1.4.0 (HTTP ${status}: not found: unknown revision v1.4.0)`,
        // What a visitor sees: neither the proxy's address nor its words.
        reason: `source unavailable: the module proxy has no ${TOML}@v1.4.0`,
      });
      await proxy.file({ module: TOML, version: 'v1.4.0', path: 'lex.go' });
      expect(served.requests).toHaveLength(1);
    });
  }

  it('answers a 5xx as a failure that may pass (not kept with the view), remembered all the same', async () => {
    const served = await serve((_req, res) => {
      res.writeHead(503).end();
      return true;
    });
    const { proxy } = await client(served.url);
    const got = await proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' });
    expect(got).toMatchObject({ ok: false, transient: true });
    expect(got.ok === false && got.problem).toBe(`${served.url} answered HTTP 503 for ${TOML}@v1.4.0`);
    expect(got.ok === false && got.reason).toBe(
      `source unavailable: ${TOML}@v1.4.0 could not be fetched (asked again later)`,
    );
    await proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' });
    expect(served.requests).toHaveLength(1);
  });

  it('gives up on a proxy that never answers, or stalls inside the body, at SOURCE_GOPROXY_TIMEOUT_MS', async () => {
    const served = await serve((req, res) => {
      if (req.url?.includes('v1.4.0')) return true; // never answered
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': 100_000 });
      res.write(Buffer.alloc(1000)); // and never the rest
      return true;
    });
    const { proxy } = await client(served.url, { SOURCE_GOPROXY_TIMEOUT_MS: '300' });
    for (const version of ['v1.4.0', 'v1.3.2']) {
      const got = await proxy.file({ module: TOML, version, path: 'decode.go' });
      expect(got).toEqual({
        ok: false,
        transient: true,
        problem: `${served.url} did not send the zip of ${TOML}@${version} within 300 ms (SOURCE_GOPROXY_TIMEOUT_MS)`,
        reason: `source unavailable: the module proxy did not send ${TOML}@${version} in time (asked again later)`,
      });
    }
  });

  it('a view waits SOURCE_GOPROXY_WAIT_MS at most: the fetch goes on under its own deadline, into the cache', async () => {
    const zip = readFileSync(TOML_ZIP);
    const served = await serve((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/zip' }).end(zip), 800);
      return true;
    });
    const { proxy } = await client(served.url, { SOURCE_GOPROXY_WAIT_MS: '100' });
    const first = await proxy.file({ module: TOML, version: 'v1.4.0', path: 'lex.go' });
    expect(first).toMatchObject({
      ok: false,
      transient: true,
      reason: `source unavailable: ${TOML}@v1.4.0 is being fetched; ask again in a few seconds`,
    });
    let got = first;
    for (let i = 0; i < 100 && !got.ok; i++) {
      await new Promise((r) => setTimeout(r, 100));
      got = await proxy.file({ module: TOML, version: 'v1.4.0', path: 'lex.go' });
    }
    expect(got).toMatchObject({ ok: true });
    expect(got.ok && got.text).toBe(unzipped(TOML_ZIP, `${TOML}@v1.4.0/lex.go`));
    expect(served.requests).toHaveLength(1);
  });

  it('refuses a zip over SOURCE_GOPROXY_MAX_ZIP_BYTES by its Content-Length, and a longer body as it arrives', async () => {
    const size = readFileSync(TOML_ZIP).length;
    const served = await serve((req, res) => {
      if (req.url?.includes('v1.3.2')) {
        // No Content-Length: chunked, twice the cap.
        res.writeHead(200, { 'content-type': 'application/zip' });
        res.write(Buffer.alloc(2048));
        res.end(Buffer.alloc(2048));
        return true;
      }
      return false;
    });
    const { proxy } = await client(served.url, { SOURCE_GOPROXY_MAX_ZIP_BYTES: String(size - 1) });
    const declared = await proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' });
    expect(declared).toEqual({
      ok: false,
      transient: false,
      problem: `the zip of ${TOML}@v1.4.0 is ${size} bytes, over the ${size - 1} a module zip may have (SOURCE_GOPROXY_MAX_ZIP_BYTES)`,
      reason: `source unavailable: the zip of ${TOML}@v1.4.0 is refused by the server's bounds on module zips`,
    });
    const small = await client(served.url, { SOURCE_GOPROXY_MAX_ZIP_BYTES: '3000' });
    const streamed = await small.proxy.file({ module: TOML, version: 'v1.3.2', path: 'decode.go' });
    expect(streamed).toEqual({
      ok: false,
      transient: false,
      problem: `the zip of ${TOML}@v1.3.2 runs past the 3000 bytes a module zip may have (SOURCE_GOPROXY_MAX_ZIP_BYTES)`,
      reason: `source unavailable: the zip of ${TOML}@v1.3.2 is refused by the server's bounds on module zips`,
    });
  });

  it('refuses hostile zips naming the entry: ../, absolute paths, links, entries outside module@version/', async () => {
    const go = Buffer.from('package toml\n');
    // Each case is served as its own version, its entries under that version's prefix.
    const at = (i: number) => `${TOML}@v1.0.${i}/`;
    const cases: [string, Buffer, string][] = [
      ['dotdot', zipBytes([{ name: `${at(0)}../../../evil.go`, data: go }]), 'has a ".." path segment'],
      ['absolute', zipBytes([{ name: '/etc/evil.go', data: go }]), 'has an absolute path'],
      [
        'link',
        zipBytes([{ name: `${at(2)}link.go`, data: Buffer.from('/etc/passwd'), mode: 0o120777 }]),
        'is a symbolic link',
      ],
      ['outside', zipBytes([{ name: 'github.com/other/mod@v1.0.0/a.go', data: go }]), `is not under ${at(3)}`],
      [
        'lying',
        zipBytes([{ name: `${at(4)}big.go`, data: go, declared: 3 * 1024 ** 3 }]),
        'over the 2 MiB one file may have',
      ],
      ['garbage', Buffer.from('<html>this is not a zip</html>'), 'has no end of central directory'],
    ];
    const byVersion = new Map(cases.map(([name, bytes], i) => [`v1.0.${i}`, { name, bytes }]));
    const served = await serve((req, res) => {
      const v = /@v\/(v[^/]+)\.zip$/.exec(req.url ?? '')?.[1];
      const c = v ? byVersion.get(v) : undefined;
      if (!c) return false;
      res.writeHead(200, { 'content-type': 'application/zip', 'content-length': c.bytes.length }).end(c.bytes);
      return true;
    });
    const { proxy } = await client(served.url);
    for (const [i, [name, , problem]] of cases.entries()) {
      const got = await proxy.file({ module: TOML, version: `v1.0.${i}`, path: 'a.go' });
      expect(got, name).toMatchObject({ ok: false, transient: false });
      expect(got.ok === false && got.problem, name).toContain(problem);
      expect(got.ok === false && got.problem, name).toContain(`${TOML}@v1.0.${i}.zip from ${served.url}`);
    }
  });

  it('sends the user and password of the proxy URL as Basic authorization, and never names them', async () => {
    let authorization: string | undefined;
    const served = await serve((req, res) => {
      authorization = req.headers.authorization;
      res.writeHead(404).end();
      return true;
    });
    const withCredentials = served.url.replace('http://', 'http://ci:s3cret@');
    const { proxy } = await client(withCredentials);
    const got = await proxy.file({ module: TOML, version: 'v1.4.0', path: 'decode.go' });
    expect(got.ok === false && got.problem).toBe(`${served.url} has no ${TOML}@v1.4.0 (HTTP 404)`);
    expect(authorization).toBe(`Basic ${Buffer.from('ci:s3cret').toString('base64')}`);
  });
});
