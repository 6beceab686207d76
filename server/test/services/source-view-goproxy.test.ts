/**
 * The source view with SOURCE_GOPROXY, on real profiles of fixtures/goproxy/app (one build as is: the
 * dependency's files in the module cache and the standard library under GOROOT; one with -trimpath)
 * and a file:// proxy of real module zips (fixtures/goproxy/proxy). A dependency's and a standard-
 * library function's lines come from the proxy, per line equal to go tool pprof -list with the real
 * sources (the committed answers; and live when Go is installed); the module is fetched once, and the
 * next view, even after a restart, comes from the store's cache.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { type ListLine, parseList } from '../helpers/pprof-text.ts';
import { hashThreads } from '../../src/services/zip-hash.ts';

const go = findGo();
const fx = join(fixturesDir, 'goproxy');
const proxyUrl = pathToFileURL(join(fx, 'proxy')).href;
const TOML = 'github.com/BurntSushi/toml';
const DEP_FN = 'github.com/BurntSushi/toml.(*lexer).next';
const DEP_FN_2 = 'github.com/BurntSushi/toml.lexTop';
const STD_FN = 'fmt.(*pp).doPrintf';
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-proxy-view-'));
const apps: StagediffApp[] = [];

/** The committed -list answer (answers.sh), checked against go tool pprof itself when Go and the sources are here. */
function listAnswer(name: string): string {
  return readFileSync(join(fx, `list-${name}.txt`), 'utf8');
}

async function newApp(dataDir: string, env: Record<string, string> = {}) {
  // (A loaded machine may take more than the default 3 s wait: these tests are about the text, not the wait.)
  const app = await testApp({ DATA_DIR: dataDir, SOURCE_GOPROXY: proxyUrl, SOURCE_GOPROXY_WAIT_MS: '60000', ...env });
  apps.push(app);
  return app;
}

/** The stage's own files besides main.go: its go.mod (the fixture's plus `goModExtra`, or as given) and a go.sum. */
type OwnFiles = { goModExtra?: string; goMod?: string; goSum?: string };

async function putSources(
  app: StagediffApp,
  c: { id: string; auth: Record<string, string> },
  stageId: string,
  own: OwnFiles = {},
) {
  const dir = mkdtempSync(join(tmp, 'app-'));
  writeFileSync(
    join(dir, 'go.mod'),
    own.goMod ?? readFileSync(join(fx, 'app', 'go.mod'), 'utf8') + (own.goModExtra ?? ''),
  );
  writeFileSync(join(dir, 'main.go'), readFileSync(join(fx, 'app', 'main.go')));
  if (own.goSum !== undefined) writeFileSync(join(dir, 'go.sum'), own.goSum);
  const archive = join(dir, 'app.tar.gz');
  execFileSync('tar', [
    '-czf',
    archive,
    '-C',
    dir,
    'go.mod',
    'main.go',
    ...(own.goSum !== undefined ? ['go.sum'] : []),
  ]);
  const r = await app.inject({
    method: 'PUT',
    url: `/api/comparisons/${c.id}/stages/${stageId}/sources?filename=app.tar.gz`,
    headers: { ...c.auth, 'content-type': 'application/octet-stream' },
    payload: readFileSync(archive),
  });
  expect(r.statusCode).toBe(200);
}

/** A comparison of the two builds (each stage with its own sources) on `app`. */
async function comparison(app: StagediffApp, extra: string[] = [], own: OwnFiles = {}) {
  const c = await createComparison(app, 'proxy view');
  for (const [name, profile] of [
    ['cache-paths', 'cpu.pb.gz'],
    ['trimpath', 'cpu-trimpath.pb.gz'],
  ] as const) {
    const s = await addStage(app, c.id, c.auth, name);
    expect((await upload(app, c.id, s, c.auth, [join(fx, profile), ...extra])).statusCode).toBe(200);
    await putSources(app, c, s, own);
  }
  return c;
}

async function view(app: StagediffApp, id: string, fn: string) {
  const r = await app.inject({
    url: `/api/comparisons/${id}/source?base=cache-paths&target=trimpath&fn=${encodeURIComponent(fn)}&mode=absolute`,
  });
  expect(r.statusCode).toBe(200);
  return r.json();
}

/** Every line pprof gives a figure is in the side with that figure and text, and the side gives no other. */
function expectList(v: { rows: Record<string, unknown>[] }, side: 'base' | 'target', list: ListLine[]) {
  expect(list.length).toBeGreaterThan(3);
  const ours = new Map<number, { flat: number; cum: number; text: string }>();
  for (const r of v.rows) {
    const f = r[side] as { line: number; flat: number; cum: number } | null;
    if (f) ours.set(f.line, { flat: f.flat, cum: f.cum, text: r[`${side}Text`] as string });
  }
  for (const l of list) {
    if (l.flat === 0 && l.cum === 0 && !ours.has(l.line)) continue;
    expect(ours.get(l.line), `${side} line ${l.line}`).toEqual({ flat: l.flat, cum: l.cum, text: l.text });
  }
  const listed = new Map(list.map((l) => [l.line, l]));
  for (const [line, f] of ours)
    if (f.flat !== 0 || f.cum !== 0) expect(listed.get(line), `${side} line ${line}`).toMatchObject(f);
}

let dataDir: string;
let app: StagediffApp;
let c: { id: string; auth: Record<string, string> };

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmp, 'data-'));
  app = await newApp(dataDir, { SOURCE_GO_VERSION: 'go1.26.8' });
  c = await comparison(app);
});
afterAll(async () => {
  for (const a of apps) await a.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('a dependency and the standard library from a file:// module proxy', () => {
  it(`${DEP_FN}: both builds' lines from ${TOML}@v1.4.0, equal to go tool pprof -list`, async () => {
    const v = await view(app, c.id, DEP_FN);
    expect(v.aligned).toBe(true);
    const module = { module: TOML, version: 'v1.4.0', fetched: expect.any(Boolean) };
    expect(v.base).toMatchObject({ textFrom: 'proxy', path: 'lex.go', module, goVersion: null, problem: null });
    // the profiles name …/pkg/mod/github.com/!burnt!sushi/toml@v1.4.0/lex.go and (-trimpath)
    // github.com/BurntSushi/toml@v1.4.0/lex.go: both answered as the path inside the module
    expect(v.base.file).toBe('lex.go');
    expect(v.target).toMatchObject({ textFrom: 'proxy', path: 'lex.go', module, file: 'lex.go' });
    expectList(v, 'base', parseList(listAnswer('dep')));
    expectList(v, 'target', parseList(listAnswer('dep-trimpath')));
    // The same version on both sides: every row pairs a line with itself (lines far from samples elided).
    expect(v.rows.every((r: { change: string }) => r.change === 'same' || r.change === 'elided')).toBe(true);
  });

  it(`${STD_FN}: the standard library of the Go release SOURCE_GO_VERSION names, from the toolchain module`, async () => {
    const v = await view(app, c.id, STD_FN);
    expect(v.aligned).toBe(true);
    for (const side of [v.base, v.target])
      expect(side).toMatchObject({
        textFrom: 'proxy',
        path: 'src/fmt/print.go',
        module: { module: 'golang.org/toolchain', version: 'v0.0.1-go1.26.8.linux-amd64' },
        goVersion: { version: 'go1.26.8', from: 'setting' },
        problem: null,
      });
    expect(v.base.file).toBe('fmt/print.go'); // /usr/local/go/src/fmt/print.go in the profile
    expect(v.target.file).toBe('fmt/print.go');
    expectList(v, 'base', parseList(listAnswer('std')));
    expectList(v, 'target', parseList(listAnswer('std-trimpath')));
  });

  it("keeps the stage's own function from its own sources", async () => {
    const v = await view(app, c.id, 'main.document');
    expect(v.base).toMatchObject({ textFrom: 'sources', path: 'main.go', module: null, problem: null });
    expect(v.target).toMatchObject({ textFrom: 'sources', path: 'main.go', module: null, problem: null });
  });

  it('fetches each module once; the next views, and a restarted server, read the store', async () => {
    // The two views above fetched the dependency and the toolchain; another dependency function needs no fetch.
    expect(app.ctx.goproxy?.fetches).toBe(2);
    const v = await view(app, c.id, DEP_FN_2);
    expect(v.base).toMatchObject({ textFrom: 'proxy', module: { module: TOML, fetched: false } });
    expect(app.ctx.goproxy?.fetches).toBe(2);
    await app.close();
    apps.splice(apps.indexOf(app), 1);
    const again = await newApp(dataDir, { SOURCE_GO_VERSION: 'go1.26.8' });
    const w = await view(again, c.id, 'github.com/BurntSushi/toml.(*parser).topLevel');
    expect(w.base).toMatchObject({ textFrom: 'proxy', module: { module: TOML, version: 'v1.4.0', fetched: false } });
    expect(again.ctx.goproxy?.fetches).toBe(0);
    app = again;
  });
});

describe('which Go release, and when there is none', () => {
  it("takes the release the stage's runtime metrics report (go_info), before the setting", async () => {
    const a = await newApp(mkdtempSync(join(tmp, 'data-')), { SOURCE_GO_VERSION: 'go1.25.0' });
    const metrics = join(fixturesDir, 'metrics', 'client-golang', 'metrics.json');
    const cm = await comparison(a, [metrics]);
    const v = await view(a, cm.id, STD_FN);
    expect(v.base.goVersion).toEqual({ version: 'go1.26.8', from: 'metrics' });
    expect(v.base.textFrom).toBe('proxy');
  });

  it("else takes the toolchain line of the stage's go.mod, saying so", async () => {
    const a = await newApp(mkdtempSync(join(tmp, 'data-')));
    const cm = await comparison(a, [], { goModExtra: '\ntoolchain go1.26.8\n' });
    const v = await view(a, cm.id, STD_FN);
    expect(v.base).toMatchObject({ textFrom: 'proxy', goVersion: { version: 'go1.26.8', from: 'go.mod' } });
  });

  it('says no release is known, and shows the rows without text', async () => {
    const a = await newApp(mkdtempSync(join(tmp, 'data-')));
    const cm = await comparison(a);
    const v = await view(a, cm.id, STD_FN);
    expect(v.aligned).toBe(false);
    expect(v.base).toMatchObject({ textFrom: 'none', goVersion: null, module: null });
    expect(v.base.problem).toContain(
      'fmt/print.go is a standard-library file, and no Go release is known for this stage',
    );
    // The dependency needs no release.
    expect((await view(a, cm.id, DEP_FN)).base.textFrom).toBe('proxy');
  });
});

describe("only what the stage's own go.mod requires, checked against its go.sum", () => {
  const goSum = readFileSync(join(fx, 'app', 'go.sum'), 'utf8');

  it("a module the stage's go.mod does not require (a private module, say) is never fetched: no text", async () => {
    const a = await newApp(mkdtempSync(join(tmp, 'data-')));
    const cm = await comparison(a, [], { goMod: 'module example.com/proxydemo\n\ngo 1.22\n' });
    const v = await view(a, cm.id, DEP_FN);
    expect(v.aligned).toBe(false);
    for (const side of [v.base, v.target]) {
      expect(side).toMatchObject({ textFrom: 'none', module: null, path: null });
      expect(side.problem).toBe(`source unavailable: the stage's go.mod does not require ${TOML}@v1.4.0`);
    }
    expect(v.rows.every((r: { baseText: unknown; targetText: unknown }) => !r.baseText && !r.targetText)).toBe(true);
    expect(a.ctx.goproxy?.fetches).toBe(0);
  });

  it('nor for a stage without sources (no go.mod to say what it requires)', async () => {
    const a = await newApp(mkdtempSync(join(tmp, 'data-')));
    const cm = await createComparison(a, 'no sources');
    for (const name of ['cache-paths', 'trimpath']) {
      const s = await addStage(a, cm.id, cm.auth, name);
      expect((await upload(a, cm.id, s, cm.auth, [join(fx, 'cpu.pb.gz')])).statusCode).toBe(200);
    }
    const v = await view(a, cm.id, DEP_FN);
    expect(v.base.textFrom).toBe('none');
    expect(v.base.problem).toMatch(/^source unavailable: .* go\.mod/);
    expect(a.ctx.goproxy?.fetches).toBe(0);
  });

  it("a module whose zip does not match the stage's go.sum is refused; the right hash gives the text", async () => {
    const a = await newApp(mkdtempSync(join(tmp, 'data-')));
    const wrong = goSum.replace(/(toml v1\.4\.0 h1:)\S+/, '$1AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=');
    expect(wrong).not.toBe(goSum);
    const bad = await comparison(a, [], { goSum: wrong });
    const threads = hashThreads.started;
    const v = await view(a, bad.id, DEP_FN);
    // The zip was hashed once, on a thread of its own (not on the server's event loop).
    expect(hashThreads.started).toBe(threads + 1);
    expect(v.base).toMatchObject({ textFrom: 'none', module: null });
    expect(v.base.problem).toBe(
      `source unavailable: the zip of ${TOML}@v1.4.0 does not match the hash in the stage's go.sum`,
    );
    expect(v.rows.every((r: { baseText: unknown }) => !r.baseText)).toBe(true);
    // The same module with go.sum's real hash (the zip's dirhash): its text, from the cache now.
    const good = await comparison(a, [], { goSum });
    const w = await view(a, good.id, DEP_FN);
    expect(w.base).toMatchObject({ textFrom: 'proxy', problem: null, module: { module: TOML, version: 'v1.4.0' } });
    expectList(w, 'base', parseList(listAnswer('dep')));
    expect(hashThreads.started).toBe(threads + 1);
    // A go.sum that does not list the module: refused too (the go command would not build it).
    const none = await comparison(a, [], { goSum: 'example.com/other v1.0.0 h1:AAAA=\n' });
    expect((await view(a, none.id, DEP_FN)).base.problem).toBe(
      `source unavailable: the stage's go.sum has no hash for ${TOML}@v1.4.0`,
    );
  });
});

describe('a proxy that fails', () => {
  it('costs the view its text and says why; the answer is not kept, so the view is computed again', async () => {
    const empty = mkdtempSync(join(tmp, 'empty-proxy-'));
    const a = await newApp(mkdtempSync(join(tmp, 'data-')), { SOURCE_GOPROXY: pathToFileURL(empty).href });
    const cm = await comparison(a);
    const jobs = async () => {
      const m = await a.inject({ url: '/metrics' });
      return Number(/stagediff_analysis_jobs_total\{op="source"\} (\d+)/.exec(m.body)?.[1] ?? 0);
    };
    const v = await view(a, cm.id, DEP_FN);
    expect(v.base).toMatchObject({ textFrom: 'none', module: null });
    // The visitor is told the module is unavailable and why, never the proxy's address or words.
    expect(v.base.problem).toBe(`source unavailable: the module proxy has no ${TOML}@v1.4.0`);
    expect(v.target.problem).toBe(v.base.problem);
    expect(JSON.stringify(v)).not.toContain(empty);
    const before = await jobs();
    await view(a, cm.id, DEP_FN);
    expect(await jobs()).toBe(before + 1);
    expect(a.ctx.goproxy?.fetches).toBe(1);
  });

  it('is off unless SOURCE_GOPROXY is set: the rows as before, no text, no problem', async () => {
    const a = await testApp();
    apps.push(a);
    const cm = await comparison(a);
    const v = await view(a, cm.id, DEP_FN);
    expect(v.aligned).toBe(false);
    expect(v.base).toMatchObject({ textFrom: 'none', module: null, problem: null });
    expect(a.ctx.goproxy).toBeNull();
  });
});

describe.skipIf(!go)('the committed -list answers', () => {
  it('are what go tool pprof prints with the real sources (where the build machine had them)', () => {
    const env = (k: string) => execFileSync(go!, ['env', k], { encoding: 'utf8' }).trim();
    const moduleDir = join(env('GOMODCACHE'), 'github.com/!burnt!sushi/toml@v1.4.0');
    // The build as is names the files where they were: only there can pprof read them.
    const here =
      existsSync('/root/go/pkg/mod/github.com/!burnt!sushi/toml@v1.4.0/lex.go') && env('GOVERSION') === 'go1.26.8';
    if (!here || !existsSync(moduleDir)) {
      console.warn('\n*** the module or Go 1.26.8 is not here: the committed -list answers are used as they are ***\n');
      return;
    }
    // -trimpath names the module as it is; the module cache escapes it: a folder that names it as it is.
    const trimRoot = join(tmp, 'trim-src');
    mkdirSync(join(trimRoot, 'github.com/BurntSushi'), { recursive: true });
    symlinkSync(moduleDir, join(trimRoot, 'github.com/BurntSushi/toml@v1.4.0'));
    const list = (fn: string, profile: string, source?: string) => {
      const r = spawnSync(
        go!,
        ['tool', 'pprof', '-unit=ns', '-list', fn, ...(source ? ['-source_path', source] : []), join(fx, profile)],
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(r.stderr);
      return r.stdout;
    };
    const re = (f: string) => `^${f.replace(/[.*()[\]]/g, '\\$&')}$`;
    expect(list(re(DEP_FN), 'cpu.pb.gz')).toBe(listAnswer('dep'));
    expect(list(re(DEP_FN), 'cpu-trimpath.pb.gz', trimRoot)).toBe(listAnswer('dep-trimpath'));
    expect(list(re(STD_FN), 'cpu.pb.gz')).toBe(listAnswer('std'));
    expect(list(re(STD_FN), 'cpu-trimpath.pb.gz', join(env('GOROOT'), 'src'))).toBe(listAnswer('std-trimpath'));
  });
});
