/**
 * The tail's sentence on the seeded demo (fixtures/demo: 6 runs a stage, each with a 0.1 s trace whose
 * requests are runtime/trace tasks). fast-json → pooled: pooled shares one HTTP client, so no request
 * waits for a new connection's dial any more: of the goroutines the slowest 1 %'s critical paths went
 * through, the dial goroutine's time changes most, gone in all six runs. pooled → async-log: the
 * synchronous log write's lock wait reaches the tail in two pooled traces only and in no async-log
 * trace: the test asserts what the data says (within the noise, with its p) and that the sentence says it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StageChanges } from '../../src/api/changes.ts';
import type { StagediffApp } from '../../src/app.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { parseTrace } from '../../src/ingest/trace/index.ts';
import { fileSource } from '../../src/ingest/source.ts';
import { testApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { mdText } from '../../src/render/markdown.ts';
import { fixturesDir } from '../helpers/paths.ts';

let app: StagediffApp;

beforeAll(async () => {
  app = await testApp();
  await seedDemo(app.ctx);
}, 300_000);
afterAll(async () => {
  await app.close();
});

async function changes(base: string, target: string): Promise<StageChanges> {
  const r = await app.inject({ url: `/api/comparisons/demo/changes?base=${base}&target=${target}` });
  expect(r.statusCode, r.body).toBe(200);
  return r.json();
}

/** Each run's tail figures, read straight from the stage's trace files. */
async function tails(stage: string) {
  const out = [];
  for (let i = 1; i <= 6; i++) {
    const m = await parseTrace(fileSource(`${fixturesDir}demo/${stage}/run-${i}/trace.out`));
    out.push(m.requests!);
  }
  return out;
}

const DIAL = 'net/http.(*Transport).startDialConnForLocked.func1';

describe("the tail's sentence on the demo", () => {
  it('fast-json → pooled: the largest change on the critical path is the dial of a new connection, gone', async () => {
    const ch = await changes('fast-json', 'pooled');
    const tail = ch.tail!;
    expect(tail).toBeDefined();
    // the P99 of the traced requests fell, over 6+6 traces
    expect(tail.p99.metric).toBe('request-p99');
    expect(tail.p99.verdict).toMatchObject({ status: 'significant', nBase: 6, nTarget: 6 });
    expect(tail.p99.verdict.ratio!).toBeLessThan(0.6);
    // the dial goroutine: in every fast-json trace's tail, in no pooled one
    const [fj, po] = [await tails('fast-json'), await tails('pooled')];
    const dialOf = (r: (typeof fj)[number]) => r.tailVia!.find((v) => v.entry === DIAL)?.nanos ?? 0;
    for (const r of fj) expect(dialOf(r)).toBeGreaterThan(1_000_000);
    for (const r of po) expect(dialOf(r)).toBe(0);
    const g = tail.goroutines[0]!;
    expect(g.subject).toBe(DIAL);
    expect(g.base!.values).toEqual(fj.map(dialOf));
    expect(g.target!.values).toEqual([0, 0, 0, 0, 0, 0]);
    expect(g.verdict).toMatchObject({ status: 'significant', nBase: 6, nTarget: 6 });
    expect(g.verdict.p!).toBeCloseTo(0.002, 3);
    // ranked by the change of the median: the dial's is the largest of the goroutines
    const d = (c: typeof g) => Math.abs(c.target!.median - c.base!.median);
    for (const o of tail.goroutines.slice(1)) expect(d(o)).toBeLessThanOrEqual(d(g));
    // the parts are ranked the same way, and the sentence names only the significant ones as changes
    for (let i = 1; i < tail.parts.length; i++) expect(d(tail.parts[i]!)).toBeLessThanOrEqual(d(tail.parts[i - 1]!));
    expect(tail.sentence).toMatch(
      /^The tail of traced requests: P99 −\d+ % \([^)]*p=0\.002, n=6\+6\); of the slowest 1 %, /,
    );
    expect(tail.sentence).toContain(
      `on goroutines the critical path went through, the largest change: a new connection's dial (${DIAL}) −`,
    );
    expect(tail.sentence).toMatch(/func1\) −[\d.]+ ms, gone \(p=0\.002, n=6\+6\)$/);
    for (const c of tail.parts) {
      const words = c.label.replace('Slowest 1 % of traced requests, ', '');
      if (c.verdict.status === 'significant') expect(tail.sentence).toMatch(new RegExp(`${words} [−+][^~;,]*\\(p=`));
      else expect(tail.sentence).toContain(`~ within the noise (p=${c.verdict.p!.toFixed(3)}, n=6+6)`);
    }
    // "What changed" carries it
    expect(ch.sentences).toContain(tail.sentence);
  }, 120_000);

  it('pooled → async-log: the lock wait of the synchronous log write, as the data has it', async () => {
    const ch = await changes('pooled', 'async-log');
    const tail = ch.tail!;
    const [po, al] = [await tails('pooled'), await tails('async-log')];
    const sync = tail.parts.find((c) => c.metric === 'request-tail-sync')!;
    // the per-trace values are the traces' own tail figures
    expect(sync.base!.values).toEqual(po.map((r) => r.tail.sync));
    expect(sync.target!.values).toEqual(al.map((r) => r.tail.sync));
    // gone from async-log's tail in every trace; in pooled's tail in two traces of six only
    expect(al.every((r) => r.tail.sync === 0)).toBe(true);
    expect(po.filter((r) => r.tail.sync > 0)).toHaveLength(2);
    // so not a significant change: within the noise, with its p, and the sentence says so
    expect(sync.verdict).toMatchObject({ status: 'no-change', nBase: 6, nTarget: 6 });
    expect(sync.verdict.p!).toBeCloseTo(0.455, 3);
    expect(tail.sentence).toContain('waiting on locks (sync) ±0 ~ within the noise (p=0.455, n=6+6)');
    expect(ch.sentences).toContain(tail.sentence);
  }, 120_000);

  it('stagediff check --json and report (JSON and Markdown) carry the same sentence', async () => {
    await app.listen({ host: '127.0.0.1', port: 0 });
    const addr = app.server.address();
    const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
    const pair = ['--server', url, '--comparison', 'demo', '--base', 'fast-json', '--target', 'pooled'];
    const want = (await changes('fast-json', 'pooled')).tail!;
    const check = await runCli(['check', ...pair, '--fail-on', 'request-p99:+50%', '--json']);
    expect(check.status, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout).tail).toBe(want.sentence);
    const report = await runCli(['report', ...pair, '--format', 'json']);
    expect(report.status, report.stderr).toBe(0);
    const j = JSON.parse(report.stdout);
    expect(j.tail).toEqual(want);
    expect(j.sentences).toContain(want.sentence);
    const md = await runCli(['report', ...pair]);
    // whole, as Markdown text (`:`, `*` and the like escaped)
    expect(md.stdout).toContain(`- ${mdText(want.sentence, 1200)}\n`);
    expect(mdText(want.sentence, 1200)).toMatch(/gone \(p=0\.002, n=6\+6\)$/);
  }, 120_000);
});
