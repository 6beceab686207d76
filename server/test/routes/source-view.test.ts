/**
 * The source view on real profiles of fixtures/line-view: v1 and v2 of one program, each stage with its
 * own sources. Per line, each side's flat and cum equal go tool pprof -list on that stage's own profile
 * with its own source tree (the committed answers; and live when Go is installed), and the two
 * versions are aligned by their text.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseList } from '../helpers/pprof-text.ts';

const go = findGo();
if (!go)
  console.warn('\n*** go is not installed: the source view is checked against the committed -list answers only ***\n');

const lineView = join(fixturesDir, 'line-view');
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-source-view-'));
let app: StagediffApp;
let c: { id: string; auth: Record<string, string> };
let bare: string;

function listAnswer(v: 'v1' | 'v2', fn: string): string {
  const committed = readFileSync(join(lineView, v, `list-${fn}.txt`), 'utf8');
  if (!go) return committed;
  const trim = v === 'v1' ? '/tmp/stagediff-linedemo-v1' : 'example.com/linedemo';
  const r = spawnSync(
    go,
    [
      'tool',
      'pprof',
      '-unit=ns',
      '-list',
      `^main\\.${fn}$`,
      '-source_path',
      join(lineView, v),
      '-trim_path',
      trim,
      join(lineView, v, 'cpu.pb.gz'),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  expect(r.stdout).toBe(committed);
  return r.stdout;
}

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
  c = await createComparison(app, 'line view');
  const v1 = await addStage(app, c.id, c.auth, 'v1');
  const v2 = await addStage(app, c.id, c.auth, 'v2');
  bare = await addStage(app, c.id, c.auth, 'v2-no-sources');
  expect((await upload(app, c.id, v1, c.auth, [join(lineView, 'v1', 'cpu.pb.gz')])).statusCode).toBe(200);
  expect((await upload(app, c.id, v2, c.auth, [join(lineView, 'v2', 'cpu.pb.gz')])).statusCode).toBe(200);
  expect((await upload(app, c.id, bare, c.auth, [join(lineView, 'v2', 'cpu.pb.gz')])).statusCode).toBe(200);
  await putSources(v1, 'v1');
  await putSources(v2, 'v2');
});
afterAll(async () => {
  await app.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function view(fn: string, target = 'v2') {
  const r = await app.inject({
    url: `/api/comparisons/${c.id}/source?base=v1&target=${target}&fn=${encodeURIComponent(fn)}&mode=absolute`,
  });
  expect(r.statusCode).toBe(200);
  return r.json();
}

describe('the source view of two versions', () => {
  for (const fn of ['appendJSONString', 'encode']) {
    it(`main.${fn}: every line's figures equal go tool pprof -list on each stage with its own sources`, async () => {
      const v = await view(`main.${fn}`);
      expect(v.aligned).toBe(true);
      // v1's profile names /tmp/stagediff-linedemo-v1/main.go, v2's (-trimpath) example.com/linedemo/main.go:
      // both answered relative to the module
      expect(v.base).toMatchObject({ path: 'main.go', file: 'main.go', hasSources: true });
      expect(v.target).toMatchObject({ path: 'main.go', file: 'main.go', hasSources: true });
      expect(JSON.stringify(v)).not.toContain('/tmp/');
      for (const [side, ver] of [
        ['base', 'v1'],
        ['target', 'v2'],
      ] as const) {
        const list = parseList(listAnswer(ver, fn));
        expect(list.length).toBeGreaterThan(5);
        const ours = new Map<number, { flat: number; cum: number; text: string }>();
        for (const r of v.rows)
          if (r[side]) ours.set(r[side].line, { flat: r[side].flat, cum: r[side].cum, text: r[`${side}Text`] });
        // Every line pprof gives a figure is in the view with that figure, and the text is the same.
        for (const l of list) {
          if (l.flat === 0 && l.cum === 0 && !ours.has(l.line)) continue;
          expect(ours.get(l.line), `${ver} line ${l.line}`).toEqual({ flat: l.flat, cum: l.cum, text: l.text });
        }
        // And the view gives no figure pprof does not.
        const listed = new Map(list.map((l) => [l.line, l]));
        for (const [line, f] of ours)
          if (f.flat !== 0 || f.cum !== 0)
            expect(listed.get(line), `${ver} line ${line}`).toMatchObject({ flat: f.flat, cum: f.cum });
      }
    });
  }

  it("aligns unchanged lines that moved, and keeps removed lines' old cost and added lines' new one", async () => {
    const v = await view('main.appendJSONString');
    const signature = v.rows.find((r: { baseText: string }) => r.baseText?.startsWith('func appendJSONString'));
    expect(signature).toMatchObject({ change: 'same', base: { line: 18 }, target: { line: 23 } });
    const removed = v.rows.find((r: { baseText: string }) => r.baseText === '\t\t\tout += string(r)');
    expect(removed.change).toBe('removed');
    expect(removed.target).toBeNull();
    expect(removed.base.cum).toBeGreaterThan(1e9);
    expect(removed.deltaCum).toBe(-removed.base.cum);
    const added = v.rows.find((r: { targetText: string }) => r.targetText === '\t\t\tdst = append(dst, c)');
    expect(added.change).toBe('added');
    expect(added.base).toBeNull();
    expect(added.deltaFlat).toBe(added.target.flat);
    // Rows keep the order of both files.
    const bl = v.rows.filter((r: { base: unknown }) => r.base).map((r: { base: { line: number } }) => r.base.line);
    const tl = v.rows
      .filter((r: { target: unknown }) => r.target)
      .map((r: { target: { line: number } }) => r.target.line);
    expect(bl).toEqual([...bl].sort((a, b) => a - b));
    expect(tl).toEqual([...tl].sort((a, b) => a - b));
  });

  it('shows each version of the function whole: every line from its func line to its closing brace', async () => {
    // v2's main.go with ten comment lines before encode's closing brace (below its last sampled line,
    // so every sampled line keeps its number): the function now ends well past the sampled lines' context.
    const dir = mkdtempSync(join(tmp, 'long-'));
    const text = readFileSync(join(lineView, 'v2', 'main.go'), 'utf8').split('\n');
    const start = text.findIndex((l) => l.startsWith('func encode(')) + 1;
    const close = text.findIndex((l, i) => i >= start && l === '}');
    text.splice(close, 0, ...Array.from({ length: 10 }, (_, k) => `\t// a line of the function's own, ${k + 1}`));
    writeFileSync(join(dir, 'main.go'), text.join('\n'));
    writeFileSync(join(dir, 'go.mod'), readFileSync(join(lineView, 'v2', 'go.mod')));
    execFileSync('tar', ['-czf', join(dir, 'src.tar.gz'), '-C', dir, 'go.mod', 'main.go']);
    const long = await addStage(app, c.id, c.auth, 'v2-long');
    expect((await upload(app, c.id, long, c.auth, [join(lineView, 'v2', 'cpu.pb.gz')])).statusCode).toBe(200);
    const put = await app.inject({
      method: 'PUT',
      url: `/api/comparisons/${c.id}/stages/${long}/sources?filename=src.tar.gz`,
      headers: { ...c.auth, 'content-type': 'application/octet-stream' },
      payload: readFileSync(join(dir, 'src.tar.gz')),
    });
    expect(put.statusCode).toBe(200);
    const v = await view('main.encode', 'v2-long');
    expect(v.aligned).toBe(true);
    const end = close + 11;
    const lastSampled = Math.max(
      ...v.rows
        .filter((r: { target: { flat: number; cum: number } | null }) => r.target?.cum || r.target?.flat)
        .map((r: { target: { line: number } }) => r.target.line),
    );
    expect(end - lastSampled).toBeGreaterThan(10);
    const shown = v.rows
      .filter((r: { target: unknown }) => r.target)
      .map((r: { target: { line: number } }) => r.target.line);
    for (let l = start; l <= end; l++) expect(shown, `line ${l}`).toContain(l);
    // …and not past it: the next function's lines stay out.
    expect(shown).not.toContain(end + 2);
    expect(v.rows.find((r: { target: { line: number } | null }) => r.target?.line === end).targetText).toBe('}');
  });

  it('without sources on one side, lists the file:line rows with their figures', async () => {
    const v = await view('main.appendJSONString', 'v2-no-sources');
    expect(v.aligned).toBe(false);
    expect(v.target.hasSources).toBe(false);
    expect(v.rows.every((r: { change: string }) => r.change === 'unaligned')).toBe(true);
    // each row's file relative to the module, never the build machine's directory
    expect([...new Set(v.rows.map((r: { file: string }) => r.file))]).toEqual(['main.go']);
    expect(v.target.file).toBe('main.go');
    const list = parseList(readFileSync(join(lineView, 'v2', 'list-appendJSONString.txt'), 'utf8'));
    for (const l of list.filter((x) => x.flat || x.cum)) {
      const row = v.rows.find(
        (r: { target: { line: number; flat: number; cum: number } }) =>
          r.target.line === l.line && (r.target.flat || r.target.cum),
      );
      expect(row.target).toEqual({ line: l.line, flat: l.flat, cum: l.cum });
      expect(row.targetText).toBeNull();
    }
  });

  it('refuses an unknown stage naming the parameter', async () => {
    const r = await app.inject({ url: `/api/comparisons/${c.id}/source?base=nope&target=v2&fn=main.encode` });
    expect(r.statusCode).toBe(404);
    expect(r.json().error.message).toMatch(/^base: /);
  });
});
