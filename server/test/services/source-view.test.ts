/**
 * The source view on the seeded demo: each stage carries the service's sources as `stagediff capture
 * --source` kept them, and its six CPU profiles. Per line, each side's flat and cum equal
 * `go tool pprof -list` over that stage's six profiles read against that stage's own sources
 * (fixtures/demo/list-answers/<stage>/*.txt, written by record.sh there; and live when Go is
 * installed, from the archive the seed stored). Each stage is its own commit of the demo's history: a
 * function its commit edited shows two different versions, aligned by a line diff; one it did not, the
 * same text on both sides, each with its own stage's cost.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { testApp } from '../helpers/app.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseList } from '../helpers/pprof-text.ts';

const go = findGo();
const demo = join(fixturesDir, 'demo');
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-demo-source-'));
let app: StagediffApp;

const FUNCTIONS = {
  'main.appendJSONString': { file: 'appendJSONString', re: '^main\\.appendJSONString$' },
  'main.(*service).serveOrders': { file: 'service.serveOrders', re: '^main\\.\\(\\*service\\)\\.serveOrders$' },
} as const;
type Fn = keyof typeof FUNCTIONS;

/** The archive the seed stores for a stage: the largest of its runs' (list-answers/record.sh picks the same). */
function stageArchive(stage: string): string {
  const runs = readdirSync(join(demo, stage)).filter((d) => /^run-\d+$/.test(d));
  const sizes = runs.map(
    (r) => [join(demo, stage, r, 'sources.tar.gz'), statSync(join(demo, stage, r, 'sources.tar.gz')).size] as const,
  );
  return sizes.reduce((a, b) => (b[1] > a[1] ? b : a))[0];
}

/** The pairs whose commit edited the function (fixtures/demo-service/history: pooled's and fast-json's patches). */
const CHANGED = new Set([
  'fast-json → pooled main.(*service).serveOrders',
  'baseline → fast-json main.(*service).serveOrders',
]);

/** A file of the stage's stored sources (its largest run's archive), as lines. */
function stageFile(stage: string, path: string): string[] {
  const dir = mkdtempSync(join(tmp, `${stage}-file-`));
  expect(spawnSync('tar', ['-xzf', stageArchive(stage), '-C', dir]).status).toBe(0);
  return readFileSync(join(dir, path), 'utf8').split('\n');
}

/** go tool pprof -list of the function over the stage's six CPU profiles, with the stage's own sources. */
function listAnswer(stage: string, fn: Fn): string {
  const committed = readFileSync(join(demo, 'list-answers', stage, `${FUNCTIONS[fn].file}.txt`), 'utf8');
  if (!go) return committed;
  const src = mkdtempSync(join(tmp, `${stage}-`));
  const untar = spawnSync('tar', ['-xzf', stageArchive(stage), '-C', src]);
  expect(untar.status).toBe(0);
  const profiles = [1, 2, 3, 4, 5, 6].map((k) => join(demo, stage, `run-${k}`, 'cpu.pb.gz'));
  // The profiles name the folder the service was built in (capture.sh builds in fixtures/demo-service on
  // the recording machine); -trim_path strips it so -source_path finds the stage's own files.
  const frame = parsePprof(readFileSync(profiles[0]!)).frames.find((f) => f.name === fn)!;
  const built = dirname(frame.file);
  const r = spawnSync(
    go,
    ['tool', 'pprof', '-unit=ns', '-list', FUNCTIONS[fn].re, '-source_path', src, '-trim_path', built, ...profiles],
    { encoding: 'utf8' },
  );
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toBe(committed);
  return r.stdout;
}

beforeAll(async () => {
  app = await testApp();
  await seedDemo(app.ctx);
});
afterAll(async () => {
  await app.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function view(base: string, target: string, fn: Fn) {
  const r = await app.inject({
    url: `/api/comparisons/demo/source?base=${base}&target=${target}&fn=${encodeURIComponent(fn)}&mode=absolute`,
  });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

describe('the source view of the demo', () => {
  const cases: [string, string, Fn][] = [
    ['fast-json', 'pooled', 'main.appendJSONString'],
    ['fast-json', 'pooled', 'main.(*service).serveOrders'],
    ['baseline', 'fast-json', 'main.(*service).serveOrders'],
  ];
  for (const [base, target, fn] of cases)
    it(`${base} → ${target}, ${fn}: each line's figures equal go tool pprof -list on each stage with its own sources`, async () => {
      const v = await view(base, target, fn);
      expect(v.aligned).toBe(true);
      for (const side of ['base', 'target'] as const) {
        expect(v[side]).toMatchObject({ hasSources: true, dirty: false });
        expect(v[side].revision).toMatch(/^[0-9a-f]{40}$/);
        // the profile names the capture machine's …/demo-service/ path: answered relative to the module
        expect(v[side].file).toBe(v[side].path);
      }
      // Each stage is its own commit: each side's text is its own stage's file, line for line, and the
      // lines far from any sample are left out as counted gaps (elided rows).
      const shown = v.rows.filter((r: { change: string }) => r.change !== 'elided');
      const files = {
        base: stageFile(base, v.base.path),
        target: stageFile(target, v.target.path),
      };
      for (const side of ['base', 'target'] as const) {
        let line = 0;
        for (const r of v.rows) {
          if (r.change === 'elided') {
            expect(r.elided[side]).toBeGreaterThanOrEqual(0);
            line += r.elided[side];
          } else if (r[side]) {
            expect(r[side].line).toBe(line + 1);
            expect(r[`${side}Text`]).toBe(files[side][r[side].line - 1]);
            line++;
          }
        }
      }
      // Where the function's code is the same in both commits every row pairs the same text; where the
      // commit edited it, the two versions differ and are aligned by a line diff.
      const edited = CHANGED.has(`${base} → ${target} ${fn}`);
      expect(shown.some((r: { change: string }) => r.change !== 'same')).toBe(edited);
      for (const r of shown.filter((x: { change: string }) => x.change === 'same'))
        expect(r.baseText).toBe(r.targetText);

      for (const [side, stage] of [
        ['base', base],
        ['target', target],
      ] as const) {
        const list = parseList(listAnswer(stage, fn));
        expect(list.length).toBeGreaterThan(10);
        const ours = new Map<number, { flat: number; cum: number; text: string }>();
        for (const r of v.rows)
          if (r[side]) ours.set(r[side].line, { flat: r[side].flat, cum: r[side].cum, text: r[`${side}Text`] });
        for (const l of list) {
          if (l.flat === 0 && l.cum === 0 && !ours.has(l.line)) continue;
          expect(ours.get(l.line), `${stage} line ${l.line}`).toEqual({ flat: l.flat, cum: l.cum, text: l.text });
        }
        const listed = new Map(list.map((l) => [l.line, l]));
        for (const [line, f] of ours)
          if (f.flat !== 0 || f.cum !== 0)
            expect(listed.get(line), `${stage} line ${line}`).toMatchObject({ flat: f.flat, cum: f.cum });
      }
      // Δ is target − base on every row.
      for (const r of v.rows) {
        expect(r.deltaCum).toBe((r.target?.cum ?? 0) - (r.base?.cum ?? 0));
        expect(r.deltaFlat).toBe((r.target?.flat ?? 0) - (r.base?.flat ?? 0));
      }
    });

  it('a stage where the function has no samples: its side names no file, the other keeps its lines', async () => {
    const v = await view('baseline', 'fast-json', 'main.appendJSONString');
    expect(v.base.file).toBeNull();
    expect(v.target.file).toBe('encode.go');
    const list = parseList(listAnswer('fast-json', 'main.appendJSONString'));
    const cum = new Map(
      v.rows
        .filter((r: { target: unknown }) => r.target)
        .map((r: { target: { line: number; cum: number } }) => [r.target.line, r.target.cum]),
    );
    for (const l of list.filter((x) => x.cum !== 0)) expect(cum.get(l.line), `line ${l.line}`).toBe(l.cum);
  });

  it('per request (the demo’s default): each side divided by its own stage’s requests', async () => {
    const abs = await view('fast-json', 'pooled', 'main.appendJSONString');
    const r = await app.inject({
      url: `/api/comparisons/demo/source?base=fast-json&target=pooled&fn=${encodeURIComponent('main.appendJSONString')}`,
    });
    expect(r.statusCode).toBe(200);
    const per = r.json();
    expect(per.mode).toBe('per-request');
    expect(per.unit).toMatch(/\/request$/);
    const { baseRequests, targetRequests, measured } = per.perRequest;
    expect(measured).toBe(true);
    expect(baseRequests).toBeGreaterThan(0);
    expect(targetRequests).toBeGreaterThan(0);
    expect(per.rows).toHaveLength(abs.rows.length);
    for (const [i, row] of per.rows.entries()) {
      const a = abs.rows[i];
      if (a.base) expect(row.base.cum).toBeCloseTo(a.base.cum / baseRequests, 6);
      if (a.target) expect(row.target.cum).toBeCloseTo(a.target.cum / targetRequests, 6);
    }
  });
});
