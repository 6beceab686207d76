/**
 * A stage's merged profile and the diff of two stages as pprof files: go tool pprof -top on the
 * download prints what it prints on the stage's own files together (functions, -lines, -files), and
 * on the diff what -diff_base prints. Without Go, the downloads are read back by stagediff's own
 * importer and checked against go tool pprof's carried answers for the reference pair.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { flatCum } from '../../src/analysis/flat-cum.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { findGo, fixturesDir, samplePath } from '../helpers/paths.ts';
import { parseTopRows } from '../helpers/pprof-text.ts';

const go = findGo();
if (!go) console.warn('\n*** go is not installed: downloads are read back by stagediff only ***\n');

type Row = [string, number, number];
const sorted = (rows: Row[]) =>
  [...rows].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || a[2] - b[2]));

function pprofRows(args: string[]): Row[] {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...args],
    { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' }, maxBuffer: 1 << 28 },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return parseTopRows(r.stdout);
}

/** Our own reading of a download: every function's flat and cum (non-zero rows, as pprof prints). */
function ourRows(gz: Buffer, sampleType: string): Row[] {
  const p = parsePprof(gz);
  const i = p.sampleTypes.findIndex((t) => t.type === sampleType);
  return flatCum(p, i)
    .filter((r) => r.flat !== 0 || r.cum !== 0)
    .map((r): Row => [r.name, r.flat, r.cum]);
}

const demoCpu = [1, 2, 3].map((r) => `${fixturesDir}demo/baseline/run-${r}/cpu.pb.gz`);
const pair = (v: string, kind: string) => samplePath(`pprof/go_httpserver_${v}_${kind}.pb.gz`);
let app: StagediffApp;
let c: { id: string; demo: string; before: string; after: string };
let tmp: string;

beforeAll(async () => {
  tmp = mkdtempSync(`${tmpdir()}/stagediff-download-`);
  app = await testApp();
  const a = await createComparison(app, 'downloads');
  const demo = await addStage(app, a.id, a.auth, 'baseline');
  const before = await addStage(app, a.id, a.auth, 'before');
  const after = await addStage(app, a.id, a.auth, 'after');
  expect((await upload(app, a.id, demo, a.auth, demoCpu)).statusCode).toBe(200);
  expect((await upload(app, a.id, before, a.auth, [pair('before', 'cpu'), pair('before', 'heap')])).statusCode).toBe(
    200,
  );
  expect((await upload(app, a.id, after, a.auth, [pair('after', 'cpu'), pair('after', 'heap')])).statusCode).toBe(200);
  c = { id: a.id, demo, before, after };
});
afterAll(async () => {
  await app?.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function download(url: string, name: string) {
  const r = await app.inject({ url });
  expect(r.statusCode, r.body.slice(0, 500)).toBe(200);
  expect(r.headers['content-type']).toBe('application/octet-stream');
  expect(String(r.headers['content-disposition'])).toMatch(/^attachment; filename="[A-Za-z0-9._-]+\.pb\.gz"$/);
  const file = `${tmp}/${name}.pb.gz`;
  writeFileSync(file, r.rawPayload);
  return { file, bytes: r.rawPayload };
}

describe("a stage's profile for go tool pprof", () => {
  it.skipIf(!go)(
    'three CPU profiles merged: go tool pprof -top equals it on the files, at every granularity',
    async () => {
      const { file } = await download(`/api/comparisons/${c.id}/stages/${c.demo}/profile.pb.gz?kind=cpu`, 'demo');
      for (const g of [[], ['-lines'], ['-files']]) {
        const want = pprofRows(['-unit=ns', ...g, ...demoCpu]);
        expect(want.length).toBeGreaterThan(20);
        expect([g, sorted(pprofRows(['-unit=ns', ...g, file]))]).toEqual([g, sorted(want)]);
      }
      expect(sorted(pprofRows(['-unit=minimum', '-sample_index=samples', file]))).toEqual(
        sorted(pprofRows(['-unit=minimum', '-sample_index=samples', ...demoCpu])),
      );
    },
  );

  it('one CPU profile: the rows of go tool pprof -top on the file (its carried answer)', async () => {
    const { file, bytes } = await download(
      `/api/comparisons/${c.id}/stages/${c.before}/profile.pb.gz?kind=cpu`,
      'before-cpu',
    );
    const ref = parseTopRows(readFileSync(samplePath('pprof/expected/go_httpserver_before_cpu.top_all.txt'), 'utf8'));
    expect(sorted(ourRows(bytes, 'cpu'))).toEqual(sorted(ref));
    if (go) expect(sorted(pprofRows(['-unit=ns', file]))).toEqual(sorted(ref));
  });

  it('sampleType picks the heap files and becomes the default sample type', async () => {
    const { file, bytes } = await download(
      `/api/comparisons/${c.id}/stages/${c.before}/profile.pb.gz?kind=heap&sampleType=alloc_space`,
      'before-heap',
    );
    expect(parsePprof(bytes).defaultSampleType).toBe('alloc_space');
    if (go)
      expect(sorted(pprofRows(['-unit=B', file]))).toEqual(
        sorted(pprofRows(['-unit=B', '-sample_index=alloc_space', pair('before', 'heap')])),
      );
  });

  it('the diff of two stages: go tool pprof on it prints -diff_base (the carried answer)', async () => {
    const { file, bytes } = await download(
      `/api/comparisons/${c.id}/diff.pb.gz?base=${c.before}&target=${c.after}&kind=cpu`,
      'diff',
    );
    const ref = parseTopRows(
      readFileSync(samplePath('pprof/expected/diff/go_httpserver_cpu.diff_base.top_all.txt'), 'utf8'),
    );
    expect(ref.length).toBeGreaterThan(20);
    expect(sorted(ourRows(bytes, 'cpu'))).toEqual(sorted(ref));
    if (go) {
      expect(sorted(pprofRows(['-unit=ns', file]))).toEqual(sorted(ref));
      const lines = pprofRows(['-unit=ns', '-lines', `-diff_base=${pair('before', 'cpu')}`, pair('after', 'cpu')]);
      expect(sorted(pprofRows(['-unit=ns', '-lines', file]))).toEqual(sorted(lines));
    }
  });

  it('names the parameter when the stage or its profiles are missing', async () => {
    const none = await app.inject({ url: `/api/comparisons/${c.id}/stages/${c.demo}/profile.pb.gz?kind=heap` });
    expect(none.statusCode).toBeGreaterThanOrEqual(400);
    expect(none.statusCode).toBeLessThan(500);
    expect(none.json().error.message).toMatch(/stage "baseline" has no heap/);
    const unknown = await app.inject({ url: `/api/comparisons/${c.id}/diff.pb.gz?base=nope&target=${c.after}` });
    expect(unknown.statusCode).toBeGreaterThanOrEqual(400);
    expect(unknown.statusCode).toBeLessThan(500);
    expect(JSON.stringify(unknown.json())).toMatch(/base/);
    const bad = await app.inject({ url: `/api/comparisons/${c.id}/stages/${c.demo}/profile.pb.gz?kind=bogus` });
    expect(bad.statusCode).toBe(400);
  });

  it('is gzip of a profile.proto, sent as is to a client that takes compressed answers', async () => {
    const { bytes } = await download(`/api/comparisons/${c.id}/stages/${c.demo}/profile.pb.gz`, 'plain');
    expect(bytes[0]).toBe(0x1f);
    expect(gunzipSync(bytes).length).toBeGreaterThan(bytes.length);
    const r = await app.inject({
      url: `/api/comparisons/${c.id}/stages/${c.demo}/profile.pb.gz`,
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.rawPayload.equals(bytes)).toBe(true);
  });
});

/**
 * `go tool pprof -raw`'s samples as a multiset: each sample's stack (every location's functions, the
 * inlined ones included, leaf first) and labels, with its values summed over identical samples — the
 * samples a profile holds, whatever ids or order the writer chose.
 */
function rawSamples(file: string): Map<string, number[]> {
  const r = spawnSync(go ?? 'go', ['tool', 'pprof', '-raw', file], {
    encoding: 'utf8',
    env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent' },
    maxBuffer: 1 << 28,
  });
  if (r.status !== 0) throw new Error(`go tool pprof -raw failed: ${r.stderr}`);
  const text = r.stdout;
  const locations = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const line of text.slice(text.indexOf('\nLocations\n'), text.indexOf('\nMappings\n')).split('\n')) {
    const head = /^\s+(\d+): 0x[0-9a-f]+ M=\d+ (\S+)/.exec(line);
    if (head) {
      current = [head[2]!];
      locations.set(head[1]!, current);
    } else if (current && /^\s{10,}\S/.test(line)) current.push(line.trim().split(/\s+/)[0]!);
  }
  const out = new Map<string, number[]>();
  // A sample is its stack line and the label lines below it: each is added whole, once its labels are read
  // (adding the stack first and moving it on a label would carry an earlier sample of the same stack along).
  let pending: { key: string; values: number[] } | null = null;
  const flush = () => {
    if (!pending) return;
    const prev = out.get(pending.key);
    const values = pending.values;
    out.set(pending.key, prev ? prev.map((v, i) => v + values[i]!) : values);
    pending = null;
  };
  for (const line of text.slice(text.indexOf('\nSamples:\n'), text.indexOf('\nLocations\n')).split('\n')) {
    const m = /^\s+([-\d\s]+?):((?:\s+\d+)*)\s*$/.exec(line);
    if (m) {
      flush();
      const values = m[1]!.trim().split(/\s+/).map(Number);
      // A sample may have no location at all (the runtime writes such samples): its stack is empty.
      const stack = m[2]!
        .trim()
        .split(/\s+/)
        .filter((id) => id !== '')
        .flatMap((id) => locations.get(id) ?? [`?${id}`]);
      pending = { key: stack.join(';'), values };
    } else if (pending && /^\s+\S+:\[/.test(line)) pending.key = `${pending.key} ${line.trim()}`;
  }
  flush();
  return out;
}

describe('default.pgo: a stage as the input of a profile-guided build', () => {
  it.skipIf(!go)(
    'holds the samples go tool pprof -proto merges from the stage’s CPU files, and go build -pgo takes it',
    async () => {
      const r = await app.inject({ url: `/api/comparisons/${c.id}/stages/${c.demo}/default.pgo` });
      expect(r.statusCode, r.body.slice(0, 300)).toBe(200);
      expect(r.headers['content-disposition']).toBe('attachment; filename="default.pgo"');
      const pgo = `${tmp}/default.pgo`;
      writeFileSync(pgo, r.rawPayload);
      const merged = spawnSync(go ?? 'go', ['tool', 'pprof', '-proto', ...demoCpu], { maxBuffer: 1 << 28 });
      expect(merged.status, String(merged.stderr)).toBe(0);
      writeFileSync(`${tmp}/merged.pb.gz`, merged.stdout);
      const ours = rawSamples(pgo);
      const theirs = rawSamples(`${tmp}/merged.pb.gz`);
      expect(theirs.size).toBeGreaterThan(100);
      expect(new Map([...ours].sort())).toEqual(new Map([...theirs].sort()));
      // The demo service builds with it (the compiler reads it as a PGO profile).
      const svc = `${tmp}/demo-service`;
      cpSync(`${fixturesDir}demo-service`, svc, { recursive: true });
      const build = spawnSync(go ?? 'go', ['build', `-pgo=${pgo}`, '-o', `${tmp}/demo-pgo`, '.'], {
        cwd: svc,
        encoding: 'utf8',
        env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
      });
      expect(build.status, build.stderr).toBe(0);
      const info = spawnSync(go ?? 'go', ['version', '-m', `${tmp}/demo-pgo`], { encoding: 'utf8' });
      expect(info.stdout).toContain(`-pgo=${pgo}`);
    },
    600_000,
  );
});
