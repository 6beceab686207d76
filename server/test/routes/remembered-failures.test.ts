/**
 * A view that failed in a way another try would repeat (out of memory, out of time) is remembered:
 * the same request gets the same 422 or 503 at once, without a job, until the comparison changes. A
 * full queue is a moment, not a property of the request, and is never remembered.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { manyPathsFolded } from '../helpers/heavy-profile.ts';
import { fixturesDir } from '../helpers/paths.ts';

async function metric(app: StagediffApp, name: string): Promise<number> {
  const m = new RegExp(`^${name} (\\d+)$`, 'm').exec((await app.inject({ url: '/metrics' })).body);
  return m ? Number(m[1]) : 0;
}

describe('remembered failures', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-remembered-'));
  let big: { id: string; stage: string; auth: Record<string, string> };
  let small: { id: string; stage: string };

  beforeAll(async () => {
    const heavy = join(dataDir, 'many-paths.folded');
    writeFileSync(heavy, manyPathsFolded(150_000, 24));
    const setup = await testApp({ DATA_DIR: dataDir });
    const a = await createComparison(setup, 'heavy');
    const sa = await addStage(setup, a.id, a.auth, 'baseline');
    expect((await upload(setup, a.id, sa, a.auth, [heavy])).statusCode).toBe(200);
    big = { id: a.id, stage: sa, auth: a.auth };
    const b = await createComparison(setup, 'small');
    const sb = await addStage(setup, b.id, b.auth, 'baseline');
    expect(
      (await upload(setup, b.id, sb, b.auth, [join(fixturesDir, 'demo/baseline/run-1/cpu.pb.gz')])).statusCode,
    ).toBe(200);
    small = { id: b.id, stage: sb };
    await setup.close();
  }, 120_000);

  it('answers a view that ran out of memory with the same 422 at once, until the comparison changes', async () => {
    const app = await testApp({ DATA_DIR: dataDir, ANALYSIS_MAX_HEAP_MB: '48', ANALYSIS_WORKERS: '1' });
    try {
      const url = `/api/comparisons/${big.id}/folded?stage=${big.stage}`;
      const first = await app.inject({ url });
      expect(first.statusCode).toBe(422);
      expect(first.json().error.code).toBe('too-large-to-analyse');
      expect(await metric(app, 'stagediff_analysis_memory_kills_total')).toBe(1);
      // Again, spelled differently (same canonical key): the same answer, no job, no kill.
      const again = await app.inject({ url: `${url}&focus=` });
      expect(again.statusCode).toBe(422);
      expect(again.json().error.code).toBe('too-large-to-analyse');
      expect(again.json().error.message).toMatch(/ANALYSIS_MAX_HEAP_MB.*remembered/);
      expect(await metric(app, 'stagediff_analysis_memory_kills_total')).toBe(1);
      expect(await metric(app, 'stagediff_analysis_jobs_total\\{op="folded"\\}')).toBe(1);
      expect(await metric(app, 'stagediff_analysis_failures_replayed_total\\{code="too-large-to-analyse"\\}')).toBe(1);
      // Another replica on the same data remembers it too (the failure is in the shared cache).
      const replica = await testApp({ DATA_DIR: dataDir, ANALYSIS_MAX_HEAP_MB: '48', ANALYSIS_WORKERS: '1' });
      try {
        expect((await replica.inject({ url })).statusCode).toBe(422);
        expect(await metric(replica, 'stagediff_analysis_memory_kills_total')).toBe(0);
      } finally {
        await replica.close();
      }
      // A change to the comparison is a new revision: the view is tried again.
      const renamed = await app.inject({
        method: 'PATCH',
        url: `/api/comparisons/${big.id}`,
        headers: big.auth,
        payload: { title: 'heavy, renamed' },
      });
      expect(renamed.statusCode).toBe(200);
      expect((await app.inject({ url })).statusCode).toBe(422);
      expect(await metric(app, 'stagediff_analysis_memory_kills_total')).toBe(2);
    } finally {
      await app.close();
    }
  }, 120_000);

  it('tries again under other bounds: what failed under one memory limit is computed again under another', async () => {
    const app = await testApp({ DATA_DIR: dataDir, ANALYSIS_MAX_HEAP_MB: '56', ANALYSIS_WORKERS: '1' });
    try {
      const r = await app.inject({ url: `/api/comparisons/${big.id}/folded?stage=${big.stage}` });
      expect(r.statusCode).toBe(422);
      expect(r.json().error.message).toMatch(/ANALYSIS_MAX_HEAP_MB=56/);
      // Computed (and stopped) here, not replayed from the failure remembered under 48 MiB.
      expect(await metric(app, 'stagediff_analysis_memory_kills_total')).toBe(1);
      expect(await metric(app, 'stagediff_analysis_failures_replayed_total\\{code="too-large-to-analyse"\\}')).toBe(0);
    } finally {
      await app.close();
    }
  }, 120_000);

  it('answers a view that ran out of time with the same 503 at once', async () => {
    // The folded export of 150,000 stacks 25 frames deep (megabytes of text) cannot be made within the
    // shortest deadline there is; a filtered top of them now can, on a quiet machine.
    const app = await testApp({ DATA_DIR: dataDir, ANALYSIS_TIMEOUT_MS: '100', ANALYSIS_WORKERS: '1' });
    try {
      const url = `/api/comparisons/${big.id}/folded?stage=${big.stage}`;
      const first = await app.inject({ url });
      expect(first.statusCode).toBe(503);
      expect(first.json().error.code).toBe('analysis-timeout');
      const again = await app.inject({ url });
      expect(again.statusCode).toBe(503);
      expect(again.json().error.code).toBe('analysis-timeout');
      expect(again.json().error.message).toMatch(/ANALYSIS_TIMEOUT_MS.*remembered/);
      expect(await metric(app, 'stagediff_analysis_timeouts_total')).toBe(1);
    } finally {
      await app.close();
    }
  }, 120_000);

  it('never remembers a full queue: the same view is computed once the queue has room', async () => {
    const app = await testApp({ DATA_DIR: dataDir, ANALYSIS_QUEUE_MAX: '0', ANALYSIS_WORKERS: '1' });
    try {
      const first = app.inject({ url: `/api/comparisons/${big.id}/top?stage=${big.stage}` });
      await new Promise((r) => setTimeout(r, 50));
      const url = `/api/comparisons/${small.id}/flamegraph?stage=${small.stage}&minFraction=0.03`;
      const busy = await app.inject({ url });
      expect(busy.statusCode).toBe(503);
      expect(busy.json().error.message).toMatch(/ANALYSIS_QUEUE_MAX/);
      await first;
      const later = await app.inject({ url });
      expect(later.statusCode).toBe(200);
      expect(await metric(app, 'stagediff_analysis_failures_replayed_total\\{code="busy"\\}')).toBe(0);
    } finally {
      await app.close();
    }
  }, 120_000);
});
