/**
 * "The code change" of a pair (GET …/changes `code`) on fixtures/line-view: v1 and v2 of one program,
 * each stage with its own sources and its own CPU profile. The edited functions are the ones whose
 * declarations differ between v1/main.go and v2/main.go (checked here against the files' own text),
 * each with the per-function diff's cost on both sides.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CodeChange, StageChanges } from '../../src/api/changes.ts';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseTopAll } from '../helpers/pprof-text.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';

const go = findGo();

const lineView = join(fixturesDir, 'line-view');
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-code-change-'));
let app: StagediffApp;
let c: { id: string; auth: Record<string, string> };

async function putSources(stageId: string, v: string) {
  const archive = join(tmp, `${v}.tar.gz`);
  execFileSync('tar', ['-czf', archive, '-C', join(lineView, v), 'go.mod', 'main.go']);
  const r = await app.inject({
    method: 'PUT',
    url: `/api/comparisons/${c.id}/stages/${stageId}/sources?filename=${v}.tar.gz`,
    headers: { ...c.auth, 'content-type': 'application/octet-stream' },
    payload: readFileSync(archive),
  });
  expect(r.statusCode).toBe(200);
}

beforeAll(async () => {
  app = await testApp();
  c = await createComparison(app, 'code change');
  const v1 = await addStage(app, c.id, c.auth, 'v1');
  const v2 = await addStage(app, c.id, c.auth, 'v2');
  const bare = await addStage(app, c.id, c.auth, 'v2-no-sources');
  for (const [s, v] of [
    [v1, 'v1'],
    [v2, 'v2'],
    [bare, 'v2'],
  ] as const)
    expect((await upload(app, c.id, s, c.auth, [join(lineView, v, 'cpu.pb.gz')])).statusCode).toBe(200);
  await putSources(v1, 'v1');
  await putSources(v2, 'v2');
});
afterAll(async () => {
  await app.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function changes(base: string, target: string): Promise<StageChanges> {
  const r = await app.inject({ url: `/api/comparisons/${c.id}/changes?base=${base}&target=${target}` });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

/** The declaration of `fn` in a version's main.go: its first and last line, found by reading the file. */
function declaration(v: string, fn: string): { start: number; end: number } {
  const lines = readFileSync(join(lineView, v, 'main.go'), 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith(`func ${fn}(`)) + 1;
  let end = start;
  while (lines[end - 1] !== '}') end++;
  return { start, end };
}

/** go tool pprof's cum of a function in a profile, if Go is installed; else null. */
function pprofCum(v: string, fn: string): number | null {
  if (!go) return null;
  const r = spawnSync(go, ['tool', 'pprof', '-top', '-nodecount=0', '-unit=ns', join(lineView, v, 'cpu.pb.gz')], {
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return parseTopAll(r.stdout).get(fn)?.[1] ?? 0;
}

describe('the code change of two versions', () => {
  it('lists the functions whose declarations differ, with their lines and costs', async () => {
    const ch = await changes('v1', 'v2');
    const code = ch.code as CodeChange;
    expect(code).toMatchObject({ status: 'ok', message: null, kind: 'cpu' });
    expect(code.base).toMatchObject({ modulePath: 'example.com/linedemo', goFiles: 1 });
    // v1 and v2 differ in appendJSONString and encode only (and the imports and a constant).
    expect(code.changed.map((f) => [f.name, f.code])).toEqual([
      ['main.appendJSONString', 'edited'],
      ['main.encode', 'edited'],
    ]);
    for (const f of code.changed) {
      const fn = f.name.slice('main.'.length);
      expect(f.file).toBe('main.go');
      expect(f.baseLines).toEqual(declaration('v1', fn));
      expect(f.targetLines).toEqual(declaration('v2', fn));
      expect(f.linesAdded + f.linesRemoved).toBeGreaterThan(0);
      // The cost is the engine's per-function diff, the same figure "what changed" uses: per second of
      // profile here (one profile a stage, no load test), i.e. pprof's cum ÷ the profile's duration.
      const row = (await diffRows()).get(f.name)!;
      expect(f.base).toBeCloseTo(row.base, 3);
      expect(f.target).toBeCloseTo(row.target, 3);
      expect(f.delta).toBeCloseTo(row.target - row.base, 3);
      for (const [side, v] of [
        ['base', 'v1'],
        ['target', 'v2'],
      ] as const) {
        const cum = pprofCum(v, f.name);
        if (cum !== null) expect(f[side]).toBeCloseTo((cum * 1e9) / duration(v), 0);
      }
      // One profile a stage: no verdict, and it says why.
      expect(f.verdict?.status).toBe('single-run');
    }
    // v2 is the faster one: both edited functions got cheaper.
    expect(code.changed.every((f) => f.delta < 0)).toBe(true);
    // Nothing can be significant with one profile a stage, and no p to show.
    expect(code.indirect).toEqual([]);
    expect(code.closest).toEqual([]);
  });

  it('says which stage has no sources', async () => {
    const code = (await changes('v1', 'v2-no-sources')).code as CodeChange;
    expect(code.status).toBe('no-sources');
    expect(code.message).toContain('"v2-no-sources" has no sources');
    expect(code.changed).toEqual([]);
  });

  it('is left out when neither stage has sources, and when functions are off', async () => {
    const c2 = await createComparison(app, 'no sources');
    const a = await addStage(app, c2.id, c2.auth, 'a');
    const b = await addStage(app, c2.id, c2.auth, 'b');
    for (const s of [a, b])
      expect((await upload(app, c2.id, s, c2.auth, [join(lineView, 'v1', 'cpu.pb.gz')])).statusCode).toBe(200);
    const r = await app.inject({ url: `/api/comparisons/${c2.id}/changes?base=a&target=b` });
    expect(r.statusCode).toBe(200);
    expect(r.json()).not.toHaveProperty('code');
    const off = await app.inject({ url: `/api/comparisons/${c.id}/changes?base=v1&target=v2&functions=off` });
    expect(off.json()).not.toHaveProperty('code');
  });
});

/** The per-second cum of every function in the v1 → v2 diff (GET …/diff, absolute, ÷ each profile's duration). */
async function diffRows(): Promise<Map<string, { base: number; target: number }>> {
  const r = await app.inject({
    url: `/api/comparisons/${c.id}/diff?base=v1&target=v2&mode=absolute&limit=100000`,
  });
  expect(r.statusCode, r.body).toBe(200);
  const d = r.json();
  const sb = 1e9 / duration('v1');
  const st = 1e9 / duration('v2');
  return new Map(
    d.top.map((x: { name: string; base: { cum: number }; target: { cum: number } }) => [
      x.name,
      { base: x.base.cum * sb, target: x.target.cum * st },
    ]),
  );
}

function duration(v: string): number {
  return parsePprof(readFileSync(join(lineView, v, 'cpu.pb.gz'))).durationNanos;
}
