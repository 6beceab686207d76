/**
 * "The code change" on the seeded demo: each stage is its own commit of fixtures/demo-service/history,
 * captured with that commit's sources. For fast-json → pooled it lists what the pooled commit changed
 * (read here off the patch by hand: serveOrders, newService and run edited, freshClientRates.Rate
 * removed, the shared client's functions added), each with the per-function diff's cost per request and
 * verdict, and names net/http's dialConnFor — code that did not change — as gone, significantly.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CodeChange, StageChanges } from '../../src/api/changes.ts';
import type { StagediffApp } from '../../src/app.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { testApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { fixturesDir } from '../helpers/paths.ts';

const haveGit = spawnSync('git', ['--version']).status === 0;
let app: StagediffApp;
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-code-change-demo-'));

beforeAll(async () => {
  app = await testApp();
  await seedDemo(app.ctx);
}, 300_000);
afterAll(async () => {
  await app.close();
  rmSync(tmp, { recursive: true, force: true });
});

async function changes(base: string, target: string): Promise<StageChanges> {
  const r = await app.inject({ url: `/api/comparisons/demo/changes?base=${base}&target=${target}` });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

/** Every function's per-request cum and verdict in the pair's diff (GET …/diff, per request). */
async function diffRows(base: string, target: string) {
  const r = await app.inject({
    url: `/api/comparisons/demo/diff?base=${base}&target=${target}&mode=per-request&limit=100000`,
  });
  expect(r.statusCode, r.body).toBe(200);
  const rows = r.json().top as {
    name: string;
    base: { cum: number };
    target: { cum: number };
    verdict: { cum: { status: string; p: number | null } } | null;
  }[];
  return new Map(rows.map((x) => [x.name, x]));
}

describe('the code change of the demo', () => {
  it('fast-json → pooled: the functions the commit changed, and dialConnFor gone from unchanged code', async () => {
    const ch = await changes('fast-json', 'pooled');
    const code = ch.code as CodeChange;
    expect(code).toMatchObject({ status: 'ok', kind: 'cpu', normalisation: 'per-request' });
    expect(code.base).toMatchObject({ modulePath: 'stagediff.local/demo-service', dirty: false });
    expect(code.base!.revision).toMatch(/^45b34af/);
    expect(code.target!.revision).toMatch(/^0988c29/);
    const byName = new Map(code.changed.map((f) => [f.name, f]));
    expect(Object.fromEntries([...byName].map(([n, f]) => [n, f.code]))).toEqual({
      'main.(*service).serveOrders': 'edited',
      'main.newService': 'edited',
      'main.run': 'edited',
      'main.freshClientRates.Rate': 'removed',
      'main.sharedClientRates.Rate': 'added',
      'main.newSharedClientRates': 'added',
      'main.sharedClientRates.CloseIdleConnections': 'added',
    });
    // Each cost is the per-function diff's per request, with its verdict.
    const rows = await diffRows('fast-json', 'pooled');
    for (const f of code.changed) {
      const row = rows.get(f.name);
      expect(f.base ?? 0).toBeCloseTo(row?.base.cum ?? 0, 6);
      expect(f.target ?? 0).toBeCloseTo(row?.target.cum ?? 0, 6);
      if (row?.verdict) expect(f.verdict).toMatchObject({ status: row.verdict.cum.status, p: row.verdict.cum.p });
    }
    const serve = byName.get('main.(*service).serveOrders')!;
    expect(serve).toMatchObject({ file: 'handler.go', fileOnBothSides: true });
    expect(serve.linesAdded).toBeGreaterThan(0);
    expect(serve.target!).toBeLessThan(serve.base!);
    const rate = byName.get('main.freshClientRates.Rate')!;
    expect(rate).toMatchObject({ file: 'upstream.go', target: null, targetLines: null });
    expect(rate.base!).toBeGreaterThan(0);

    // Unchanged code whose cost moved: net/http dials no more.
    const dial = code.indirect.find((f) => f.name === 'net/http.(*Transport).dialConnFor');
    expect(dial, JSON.stringify(code.indirect.map((f) => f.name))).toBeDefined();
    expect(dial).toMatchObject({ code: 'outside', target: null, file: null });
    expect(dial!.verdict?.status).toBe('significant');
    expect(dial!.base).toBeCloseTo(rows.get(dial!.name)!.base.cum, 6);
    for (const f of code.indirect) {
      expect(['same', 'outside']).toContain(f.code);
      expect(f.verdict?.status).toBe('significant');
    }
  });

  it('pooled → async-log: the logger added, and the synchronous one still declared but no longer called', async () => {
    const code = (await changes('pooled', 'async-log')).code as CodeChange;
    expect(code.status).toBe('ok');
    const names = code.changed.map((f) => `${f.name} ${f.code}`);
    expect(names).toContain('main.(*asyncLogger).run added');
    expect(names).toContain('main.(*asyncLogger).Log added');
    expect(names).toContain('main.run edited');
    // The synchronous logger's code is the same in both commits: its cost moved without a change of its own.
    expect(names.some((n) => n.startsWith('main.(*syncLogger)'))).toBe(false);
    // Whatever the verdicts say, an unchanged-code function is listed as indirect only when significant,
    // and when none is, the nearest ones come with their p.
    if (code.indirect.length === 0) expect(code.closest.every((f) => f.verdict?.p !== null)).toBe(true);
  });

  it('stagediff check --json and report --format json carry the same code change as GET …/changes', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const pair = ['--server', url, '--comparison', 'demo', '--base', 'fast-json', '--target', 'pooled'];
    const want = (await changes('fast-json', 'pooled')).code;
    const check = await runCli(['check', ...pair, '--fail-on', 'rps:-50%', '--json']);
    expect(check.status, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout).code).toEqual(want);
    const report = await runCli(['report', ...pair, '--format', 'json']);
    expect(report.status, report.stderr).toBe(0);
    expect(JSON.parse(report.stdout).code).toEqual(want);
    const md = await runCli(['report', ...pair]);
    expect(md.stdout).toContain('### The code change');
    expect(md.stdout).toContain('`main.(*service).serveOrders` edited');
  });

  it.skipIf(!haveGit)("each stage's revision is its commit in the history the patches make", () => {
    const repo = join(tmp, 'repo');
    execFileSync(join(fixturesDir, 'demo-service', 'history.sh'), ['repo', repo]);
    const rev = (tag: string) => execFileSync('git', ['-C', repo, 'rev-parse', tag], { encoding: 'utf8' }).trim();
    return (async () => {
      for (const [a, b] of [
        ['baseline', 'fast-json'],
        ['fast-json', 'pooled'],
        ['pooled', 'async-log'],
      ] as const) {
        const code = (await changes(a, b)).code as CodeChange;
        expect(code.base!.revision).toBe(rev(a));
        expect(code.target!.revision).toBe(rev(b));
      }
    })();
  });
});
