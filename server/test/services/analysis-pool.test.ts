/**
 * Analysis runs in worker processes: while a large diff is being computed, the server still answers
 * other requests at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { syntheticProfilePath } from '../../../scripts/testdata/index.ts';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixturesDir } from '../helpers/paths.ts';
import { manyPathsFolded } from '../helpers/heavy-profile.ts';

let app: StagediffApp;
beforeAll(async () => {
  app = await testApp({ ANALYSIS_WORKERS: '1' });
});
afterAll(async () => app.close());

it('answers /healthz within 250 ms while a 1M-sample profile is parsed and its tree built', async () => {
  expect(app.ctx.pool.size).toBe(1);
  const { id, auth } = await createComparison(app, 'large');
  const a = await addStage(app, id, auth, 'a');
  expect((await upload(app, id, a, auth, [syntheticProfilePath()])).statusCode).toBe(200);
  const t0 = performance.now();
  const diff = app.inject({ url: `/api/comparisons/${id}/flamegraph?stage=${a}&sampleType=cpu&minFraction=0.001` });
  let done = false;
  void diff.then(() => (done = true));
  const probes: number[] = [];
  while (!done && performance.now() - t0 < 60_000) {
    const p0 = performance.now();
    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    probes.push(performance.now() - p0);
    await new Promise((r) => setTimeout(r, 20));
  }
  const r = await diff;
  expect(r.statusCode).toBe(200);
  expect(r.json().total).toBeGreaterThan(0);
  // The parse and tree took seconds; every probe during them was answered promptly.
  expect(probes.length).toBeGreaterThan(3);
  expect(Math.max(...probes)).toBeLessThan(250);
}, 120_000);

async function metric(app: StagediffApp, name: string): Promise<number> {
  const text = (await app.inject({ url: '/metrics' })).body;
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

describe('analysis jobs are bounded in time and memory', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-pool-'));
  const heavyPath = join(dataDir, 'many-paths.folded');
  let setup: StagediffApp;
  let big: { id: string; stage: string };
  let small: { id: string; stage: string };

  beforeAll(async () => {
    writeFileSync(heavyPath, manyPathsFolded(150_000, 24));
    // Files go in under generous limits; the apps below analyse them under tight ones.
    setup = await testApp({ DATA_DIR: dataDir });
    const a = await createComparison(setup, 'heavy');
    const sa = await addStage(setup, a.id, a.auth, 'baseline');
    expect((await upload(setup, a.id, sa, a.auth, [heavyPath])).statusCode).toBe(200);
    big = { id: a.id, stage: sa };
    const b = await createComparison(setup, 'demo cpu');
    const sb = await addStage(setup, b.id, b.auth, 'baseline');
    expect(
      (await upload(setup, b.id, sb, b.auth, [join(fixturesDir, 'demo/baseline/run-1/cpu.pb.gz')])).statusCode,
    ).toBe(200);
    small = { id: b.id, stage: sb };
    // The small comparison's views the deadline test reads are computed here, under the default
    // deadline, and kept: there they come from the store, so however loaded the machine, only the
    // heavy job can meet the tight deadline.
    for (const view of ['top', 'flamegraph'])
      expect(
        (await setup.inject({ url: `/api/comparisons/${small.id}/${view}?stage=${small.stage}` })).statusCode,
      ).toBe(200);
    await setup.close();
  }, 120_000);

  it('stops a job past its deadline with a 503 and Retry-After, and serves another comparison meanwhile', async () => {
    const app = await testApp({ DATA_DIR: dataDir, ANALYSIS_TIMEOUT_MS: '400', ANALYSIS_WORKERS: '2' });
    try {
      // The folded export of the heavy profile: every one of its 150,000 call paths written out.
      const slow = app.inject({ url: `/api/comparisons/${big.id}/folded?stage=${big.stage}` });
      const other = app.inject({ url: `/api/comparisons/${small.id}/top?stage=${small.stage}` });
      const health = app.inject({ url: '/healthz' });
      const [s, o, h] = await Promise.all([slow, other, health]);
      expect(h.statusCode).toBe(200);
      expect(o.statusCode, o.body).toBe(200);
      expect((o.json() as { total: number }).total).toBeGreaterThan(0);
      expect(s.statusCode).toBe(503);
      expect(s.headers['retry-after']).toBe('5');
      expect(s.json().error.code).toBe('analysis-timeout');
      expect(s.json().error.message).toMatch(/ANALYSIS_TIMEOUT_MS/);
      expect(await metric(app, 'stagediff_analysis_timeouts_total')).toBe(1);
      expect(await metric(app, 'stagediff_analysis_worker_restarts_total')).toBe(1);
      // Both stored views were served without a job: the one timeout counted is the heavy job's.
      const again = await app.inject({ url: `/api/comparisons/${small.id}/flamegraph?stage=${small.stage}` });
      expect(again.statusCode).toBe(200);
      expect(await metric(app, 'stagediff_analysis_timeouts_total')).toBe(1);
      // The one job this app ran is the heavy export's.
      const jobs = (await app.inject({ url: '/metrics' })).body.match(/^stagediff_analysis_jobs_total\{.*$/gm);
      expect(jobs).toEqual(['stagediff_analysis_jobs_total{op="folded"} 1']);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('stops a job past the heap limit with a 422 naming the setting; the server and other views stay up', async () => {
    const app = await testApp({ DATA_DIR: dataDir, ANALYSIS_MAX_HEAP_MB: '48', ANALYSIS_WORKERS: '1' });
    try {
      // (A view the deadline test has not cached: its job runs here.)
      const heavy = app.inject({ url: `/api/comparisons/${big.id}/folded?stage=${big.stage}&hide=nothing-hidden` });
      const other = app.inject({ url: `/api/comparisons/${small.id}/top?stage=${small.stage}` });
      const [r, o] = await Promise.all([heavy, other]);
      expect(r.statusCode).toBe(422);
      expect(r.json().error.code).toBe('too-large-to-analyse');
      expect(r.json().error.message).toMatch(/ANALYSIS_MAX_HEAP_MB/);
      expect(o.statusCode).toBe(200);
      expect(await metric(app, 'stagediff_analysis_memory_kills_total')).toBe(1);
      expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
      const again = await app.inject({ url: `/api/comparisons/${small.id}/flamegraph?stage=${small.stage}` });
      expect(again.statusCode).toBe(200);
    } finally {
      await app.close();
    }
  }, 60_000);

  it('refuses work beyond the queue bound with a 503 and Retry-After, and counts the queue', async () => {
    const app = await testApp({ DATA_DIR: dataDir, ANALYSIS_QUEUE_MAX: '0', ANALYSIS_WORKERS: '1' });
    try {
      const first = app.inject({ url: `/api/comparisons/${big.id}/top?stage=${big.stage}` });
      // Let the first job reach the worker before the second arrives.
      await new Promise((r) => setTimeout(r, 50));
      // A view no earlier test computed (a cached result would be served without the pool).
      const second = await app.inject({
        url: `/api/comparisons/${small.id}/flamegraph?stage=${small.stage}&minFraction=0.02`,
      });
      expect(second.statusCode).toBe(503);
      expect(second.headers['retry-after']).toBe('5');
      expect(second.json().error.message).toMatch(/ANALYSIS_QUEUE_MAX/);
      expect((await first).statusCode).toBe(200);
      const text = (await app.inject({ url: '/metrics' })).body;
      expect(text).toMatch(/^stagediff_analysis_queue_length 0$/m);
      expect(text).toMatch(/^stagediff_analysis_rejected_total\{reason="queue-full"\} 1$/m);
    } finally {
      await app.close();
    }
  }, 60_000);
});

/** The nice values of this process's child processes (Linux /proc), by pid. */
function childNiceness(): Map<number, number> {
  const out = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue;
    }
    // Fields after the command name (which may hold spaces): state ppid … nice is field 19 overall.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(f[1]) === process.pid) out.set(Number(d), Number(f[16]));
  }
  return out;
}

describe('the workers’ CPU priority', () => {
  it.skipIf(process.platform !== 'linux')(
    'is the server’s by default, and ANALYSIS_NICENESS steps lower when set',
    async () => {
      const own = getPriority();
      const before = new Set(childNiceness().keys());
      const plain = await testApp({ ANALYSIS_WORKERS: '1' });
      const niced = await testApp({ ANALYSIS_WORKERS: '1', ANALYSIS_NICENESS: '7' });
      try {
        // A worker starts with its first job: an upload's parse.
        for (const app of [plain, niced]) {
          const c = await createComparison(app, 'priority');
          const st = await addStage(app, c.id, c.auth, 'one');
          const up = await upload(app, c.id, st, c.auth, [join(fixturesDir, 'demo/baseline/run-1/wrk.txt')]);
          expect(up.statusCode).toBe(200);
        }
        const nice = [...childNiceness()].filter(([pid]) => !before.has(pid)).map(([, n]) => n);
        expect(nice.sort((a, b) => a - b)).toEqual([own, Math.min(19, own + 7)]);
      } finally {
        await plain.close();
        await niced.close();
      }
    },
    60_000,
  );
});
