/**
 * A Go binary's build information read from its bytes equals what `go version -m` prints for it, on
 * binaries built here: the demo service plain, and with `-pgo=` (a demo CPU profile), `-tags` and
 * `-trimpath`. Then what it is for: `capture --binary` refuses a file that is not a Go binary before any
 * run, and two stages whose capture records name different builds carry the difference in their pair's
 * conditions (the stages compared by the change engine, no figure withheld).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import {
  BuildInfoError,
  comparableBuildSettings,
  parseModInfo,
  readGoBuildInfo,
} from '../../src/ingest/go-buildinfo.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';

const go = findGo();
if (!go)
  console.warn('\n*** go is not installed: the build-information comparison with go version -m is SKIPPED ***\n');
const dir = mkdtempSync(join(tmpdir(), 'stagediff-buildinfo-'));
const service = join(fixturesDir, 'demo-service');
const pgo = join(fixturesDir, 'otlp', 'src', 'cpu.pb.gz');

function build(out: string, flags: string[]): string {
  const bin = join(dir, out);
  const r = spawnSync(go!, ['build', ...flags, '-o', bin, '.'], { cwd: service, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`go build failed: ${r.stderr}`);
  return bin;
}

/** `go version -m BIN`, read as the build information it prints. */
function goVersionM(bin: string) {
  const r = spawnSync(go!, ['version', '-m', bin], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`go version -m failed: ${r.stderr}`);
  const [first, ...rest] = r.stdout.split('\n');
  return {
    goVersion: first!.slice(first!.indexOf(': ') + 2),
    ...parseModInfo(rest.map((l) => l.replace(/^\t/, '')).join('\n')),
  };
}

describe.skipIf(!go)('build information equals go version -m', () => {
  let plain: string;
  let withPgo: string;
  beforeAll(() => {
    plain = build('plain', []);
    withPgo = build('pgo', [`-pgo=${pgo}`, '-tags=stagediff_fixture', '-trimpath']);
  }, 300_000);

  it('a plain build: Go version, path, module, every build setting', () => {
    const info = readGoBuildInfo(plain);
    expect(info).toEqual(goVersionM(plain));
    expect(info.goVersion).toMatch(/^go1\.\d+/);
    expect(info.path).toBe('stagediff.local/demo-service');
    expect(info.settings).toContain('-compiler=gc');
  });

  it('a -pgo build names its profile, its tags and -trimpath', () => {
    const info = readGoBuildInfo(withPgo);
    expect(info).toEqual(goVersionM(withPgo));
    // -trimpath keeps the profile's file name only
    expect(info.settings).toContain('-pgo=cpu.pb.gz');
    expect(info.settings).toContain('-tags=stagediff_fixture');
    expect(info.settings).toContain('-trimpath=true');
    expect(comparableBuildSettings(info).some((s) => s.startsWith('vcs.'))).toBe(false);
  });
});

describe('what is not a Go binary', () => {
  it('is refused, naming the file', () => {
    const f = join(fixturesDir, 'otlp', 'cpu.otlp.pb');
    expect(() => readGoBuildInfo(f)).toThrow(BuildInfoError);
    expect(() => readGoBuildInfo(f)).toThrow(`${f}: no Go build information in it`);
  });

  it('capture --binary stops with a usage error before any run', async () => {
    const f = join(fixturesDir, 'otlp', 'cpu.otlp.pb');
    const r = await runCli([
      'capture',
      '--stage',
      'x',
      '--profiles',
      'none',
      '--binary',
      f,
      '--url',
      'http://127.0.0.1:9/',
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`--binary ${f}: no Go build information in it`);
  });
});

describe.skipIf(!go)('a stage built with -pgo against one without', () => {
  let app: StagediffApp;
  let id: string;
  beforeAll(async () => {
    app = await testApp();
    const c = await createComparison(app, 'pgo');
    id = c.id;
    const record = JSON.parse(readFileSync(join(fixturesDir, 'demo', 'pooled', 'run-1', 'capture.json'), 'utf8'));
    for (const [name, bin] of [
      ['no-pgo', build('stage-plain', [])],
      ['pgo', build('stage-pgo', [`-pgo=${pgo}`])],
    ] as const) {
      const st = await addStage(app, id, c.auth, name);
      const rec = { ...record, stage: name, build: { binary: bin, ...readGoBuildInfo(bin) } };
      const r = await app.inject({
        method: 'POST',
        url: `/api/comparisons/${id}/stages/${st}/captures`,
        headers: c.auth,
        payload: rec,
      });
      expect(r.statusCode, r.body).toBeLessThan(300);
    }
  }, 300_000);
  afterAll(async () => {
    await app?.close();
  });

  it('each stage states its build, and the pair names the difference', async () => {
    const t = (await app.inject({ url: `/api/comparisons/${id}/stage-table` })).json();
    const build = (row: { conditions: { summary: { key: string; values: string[] }[] } }) =>
      row.conditions.summary.find((s) => s.key === 'build')?.values ?? [];
    expect(build(t.rows[0]).some((v: string) => v.startsWith('-pgo='))).toBe(false);
    expect(build(t.rows[1])).toContain(`-pgo=${pgo}`);
    expect(t.rows[1].conditionsVsPrevious).toContain('build');
    const c = (await app.inject({ url: `/api/comparisons/${id}/changes?base=no-pgo&target=pgo` })).json();
    expect(JSON.stringify(c.conditions)).toContain(`-pgo=${pgo}`);
  });
});
