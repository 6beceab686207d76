import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, multipart, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { pprofBytes } from '../helpers/pprof-bytes.ts';

const scratch = mkdtempSync(join(tmpdir(), 'stagediff-uploads-'));
function scratchFile(name: string, bytes: Buffer | string): string {
  const p = join(scratch, name);
  writeFileSync(p, bytes);
  return p;
}

/** Milliseconds /healthz takes to answer. */
async function healthMs(app: StagediffApp): Promise<number> {
  const t0 = performance.now();
  const r = await app.inject({ url: '/healthz' });
  expect(r.statusCode).toBe(200);
  return performance.now() - t0;
}

describe('uploads of hostile or odd files are answered cleanly', () => {
  let app: StagediffApp;
  let c: { id: string; auth: Record<string, string> };
  let stage: string;

  beforeAll(async () => {
    app = await testApp({ ANALYSIS_TIMEOUT_MS: '3000' });
    const made = await createComparison(app, 'uploads');
    c = made;
    stage = await addStage(app, made.id, made.auth, 'baseline');
  });
  afterAll(async () => {
    await app.close();
  });

  it('reports every stored file of a multipart request past 100 files, and the refusal of the rest', async () => {
    const own = await createComparison(app, 'many files');
    const st = await addStage(app, own.id, own.auth, 'one');
    // 103 different real files (the same bytes twice would be one run refused as a duplicate).
    const files = ['baseline', 'fast-json', 'pooled', 'async-log']
      .flatMap((stage) => [1, 2, 3, 4, 5, 6].map((k) => join(fixturesDir, `demo/${stage}/run-${k}/`)))
      .flatMap((run) => ['wrk.txt', 'cpu.pb.gz', 'allocs.pb.gz', 'heap.pb.gz', 'goroutine.pb.gz'].map((f) => run + f))
      .slice(0, 103);
    const r = await upload(app, own.id, st, own.auth, files);
    expect(r.statusCode).toBe(200);
    const results = r.json().results as { ok: boolean; error?: { code: string; message: string } }[];
    expect(results.filter((x) => x.ok)).toHaveLength(100);
    expect(results.at(-1)!.ok).toBe(false);
    expect(results.at(-1)!.error!.code).toBe('too-many-files');
    const tree = (await app.inject({ url: `/api/comparisons/${own.id}` })).json();
    expect(tree.stages[0].artifacts).toHaveLength(100);
  }, 120_000);

  it('takes a sample type named __proto__ and shows its figures', async () => {
    const p = scratchFile(
      'proto.pb.gz',
      pprofBytes({
        sampleTypes: [['__proto__', 'count']],
        samples: [
          { stack: ['main.work', 'main.main'], values: [5] },
          { stack: ['constructor', 'main.main'], values: [2] },
        ],
      }),
    );
    const own = await createComparison(app, 'proto');
    const st = await addStage(app, own.id, own.auth, 'one');
    const up = await upload(app, own.id, st, own.auth, [p]);
    expect(up.statusCode).toBe(200);
    expect(Object.entries(up.json().results[0].artifact.summary.totals)).toEqual([['__proto__', 7]]);
    const top = await app.inject({ url: `/api/comparisons/${own.id}/top?stage=${st}&sampleType=__proto__` });
    expect(top.statusCode).toBe(200);
    expect(top.json().total).toBe(7);
    const rows = Object.fromEntries(
      (top.json().rows as { name: string; flat: number; cum: number }[]).map((x) => [x.name, [x.flat, x.cum]]),
    );
    expect(rows).toEqual({ 'main.work': [5, 5], constructor: [2, 2], 'main.main': [0, 7] });
    const fg = await app.inject({ url: `/api/comparisons/${own.id}/flamegraph?stage=${st}` });
    expect(fg.statusCode).toBe(200);
    expect(fg.json().total).toBe(7);
  });

  it('takes NUL bytes in function and sample type names, and refuses them in titles with a 400', async () => {
    const p = scratchFile(
      'nul.pb.gz',
      pprofBytes({
        sampleTypes: [['cpu\u0000', 'nanoseconds']],
        samples: [{ stack: ['a\u0000b', 'main'], values: [9] }],
      }),
    );
    const up = await upload(app, c.id, stage, c.auth, [p]);
    expect(up.statusCode).toBe(200);
    const bad = await app.inject({ method: 'POST', url: '/api/comparisons', payload: { title: 'x\u0000y' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.message).toMatch(/NUL/);
  });

  it('builds a bounded timeline from three requests ten million seconds apart', async () => {
    const first = readFileSync(join(fixturesDir, 'reference/loadtests/vegeta/baseline-results.jsonl'), 'utf8').split(
      '\n',
    )[0]!;
    const at = (s: number) =>
      first.replace(/"timestamp":"[^"]+"/, `"timestamp":"${new Date(Date.UTC(2026, 0, 1) + s * 1000).toISOString()}"`);
    const p = scratchFile('sparse.jsonl', `${[at(0), at(5_000_000), at(9_990_000)].join('\n')}\n`);
    const own = await createComparison(app, 'sparse');
    const st = await addStage(app, own.id, own.auth, 'one');
    const up = await upload(app, own.id, st, own.auth, [p]);
    expect(up.statusCode).toBe(200);
    const r = await app.inject({ url: `/api/comparisons/${own.id}/timeline` });
    expect(r.statusCode).toBe(200);
    const tl = r.json().stages[0].runs[0].timeline as { t: number; requests: number }[];
    expect(tl.map((b) => [b.t, b.requests])).toEqual([
      [0, 1],
      [5_000_000, 1],
      [9_990_000, 1],
    ]);
  });

  it('parses a file whose own drop_frames regex backtracks forever off the event loop, under the deadline', async () => {
    const p = scratchFile(
      'drop-frames.pb.gz',
      pprofBytes({
        sampleTypes: [['samples', 'count']],
        samples: [{ stack: ['a'.repeat(40), 'main'], values: [1] }],
        dropFrames: '(a+)+b',
      }),
    );
    const pending = upload(app, c.id, stage, c.auth, [p]);
    // The server keeps answering while the file is being parsed.
    const waits: number[] = [];
    for (let i = 0; i < 5; i++) {
      waits.push(await healthMs(app));
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Math.max(...waits)).toBeLessThan(500);
    const r = await pending;
    // Linear-time matching answers 200; a backtracking engine is stopped at the deadline, and the
    // file (not the server's load) is named as the reason: 422, no retry.
    if (r.statusCode !== 200) {
      expect(r.statusCode).toBe(422);
      expect(r.headers['retry-after']).toBeUndefined();
      expect(r.json().error.code).toBe('too-large-to-analyse');
      expect(r.json().error.message).toMatch(/drop-frames\.pb\.gz/);
    }
    expect(await healthMs(app)).toBeLessThan(500);
    // and the replaced worker parses the next upload
    expect(
      (await upload(app, c.id, stage, c.auth, [join(fixturesDir, 'demo/baseline/run-1/cpu.pb.gz')])).statusCode,
    ).toBe(200);
  }, 30_000);

  it('answers 507 when the disk is full and 503 when the database is down, with a message', async () => {
    const own = await testApp();
    try {
      const made = await createComparison(own, 'storage');
      const st = await addStage(own, made.id, made.auth, 'one');
      const store = own.ctx.store;
      const putBlob = store.putBlob.bind(store);
      store.putBlob = async () => {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      };
      const m = multipart([join(fixturesDir, 'demo/baseline/run-1/wrk.txt')]);
      const full = await own.inject({
        method: 'POST',
        url: `/api/comparisons/${made.id}/stages/${st}/artifacts`,
        headers: { ...made.auth, ...m.headers },
        payload: m.payload,
      });
      expect(full.statusCode).toBe(507);
      expect(full.json().error.code).toBe('storage-full');
      expect(full.json().error.message).toMatch(/wrk\.txt: .*no space/);
      store.putBlob = putBlob;
      const getComparison = store.getComparison.bind(store);
      store.getComparison = async () => {
        throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      };
      const down = await own.inject({ url: `/api/comparisons/${made.id}/top?stage=${st}` });
      expect(down.statusCode).toBe(503);
      expect(down.headers['retry-after']).toBeDefined();
      expect(down.json().error).toEqual({
        code: 'storage-unavailable',
        message: 'the database is unavailable; try again shortly',
      });
      store.getComparison = getComparison;
      expect((await own.inject({ url: `/api/comparisons/${made.id}` })).statusCode).toBe(200);
    } finally {
      await own.close();
    }
  });
});

describe('a profile too big to analyse under the configured memory', () => {
  it('is refused at upload with the number and the setting to change', async () => {
    // 1,000,000 samples spread evenly over as many random call paths (about 630,000 distinct): a
    // model of about 60 MiB, over a third of 96 MiB.
    const { writeGiantProfile } = await import('../../../scripts/testdata/giant-profile.mjs');
    const out = join(scratch, 'distinct-paths.pb.gz');
    await writeGiantProfile({ samples: 1_000_000, seed: 5, numPaths: 1_000_000, skew: 1, callGraph: false, out });
    const app = await testApp({ ANALYSIS_MAX_HEAP_MB: '96' });
    try {
      const c = await createComparison(app, 'too big');
      const st = await addStage(app, c.id, c.auth, 'one');
      const r = await upload(app, c.id, st, c.auth, [out]);
      expect(r.statusCode).toBe(422);
      expect(r.json().error.code).toBe('too-large-to-analyse');
      expect(r.json().error.message).toMatch(
        /^distinct-paths\.pb\.gz: its 1000000 samples need about \d+ MiB to analyse, more than the 96 MiB an analysis worker may use: raise ANALYSIS_MAX_HEAP_MB to at least \d+$/,
      );
      expect((await app.inject({ url: `/api/comparisons/${c.id}` })).json().stages[0].artifacts).toEqual([]);
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  }, 60_000);
});
