/**
 * Retention through the API, on a fake clock: the edit-token holder keeps a comparison with
 * PATCH {keep: true}; a round of maintenance removes what nobody changed or viewed for
 * RETENTION_DAYS (its files included) and nothing else, and /metrics counts it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { Maintenance } from '../../src/services/maintenance.ts';
import { openStore, type Store } from '../../src/store/index.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const DAY = 24 * 3600 * 1000;

describe('retention (RETENTION_DAYS) and keep', () => {
  let now = Date.parse('2026-05-01T08:00:00Z');
  let store: Store;
  let app: StagediffApp;

  beforeAll(async () => {
    store = await openStore({ dataDir: mkdtempSync(join(tmpdir(), 'stagediff-retention-')), clock: () => now });
    app = await testApp({ ANALYSIS_WORKERS: '0' }, store);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
  });

  it('keeps what its owner keeps or someone viewed, removes the rest with its files', async () => {
    const files = ['cpu.pb.gz', 'wrk.txt'].map((f) => join(fixturesDir, 'demo/baseline/run-1', f));
    const stale = await createComparison(app, 'nobody looks at this again');
    await upload(app, stale.id, await addStage(app, stale.id, stale.auth, 'baseline'), stale.auth, files);
    const kept = await createComparison(app, 'the release we compare against');
    const viewed = await createComparison(app, 'read now and then');
    await upload(app, viewed.id, await addStage(app, viewed.id, viewed.auth, 'baseline'), viewed.auth, files.slice(1));

    // Only the edit-token holder may keep it, and only with a boolean.
    const patch = (id: string, headers: Record<string, string>, payload: unknown) =>
      app.inject({ method: 'PATCH', url: `/api/comparisons/${id}`, headers, payload: payload as object });
    expect((await patch(kept.id, {}, { keep: true })).statusCode).toBe(401);
    expect((await patch(kept.id, viewed.auth, { keep: true })).statusCode).toBe(403);
    const bad = await patch(kept.id, kept.auth, { keep: 'forever' });
    expect(bad.statusCode).toBe(400);
    const ok = await patch(kept.id, kept.auth, { keep: true });
    expect(ok.statusCode).toBe(200);
    expect(ok.json().keep).toBe(true);
    expect((await app.inject({ url: `/api/comparisons/${kept.id}` })).json().keep).toBe(true);
    expect((await app.inject({ url: `/api/comparisons/${stale.id}` })).json().keep).toBe(false);

    now += 20 * DAY;
    expect((await app.inject({ url: `/api/comparisons/${viewed.id}` })).statusCode).toBe(200);
    now += 11 * DAY;

    const round = new Maintenance(store, app.ctx.metrics, { retentionDays: 30, now: () => now });
    expect(await round.run()).toEqual({ expired: [stale.id] });
    expect((await app.inject({ url: `/api/comparisons/${stale.id}` })).statusCode).toBe(404);
    for (const c of [kept, viewed])
      expect((await app.inject({ url: `/api/comparisons/${c.id}` })).statusCode).toBe(200);
    // The wrk.txt both shared stays; the profile only the stale one had is gone.
    const st = await store.stats();
    expect([st.comparisons, st.artifacts, st.blobs, st.blobObjects]).toEqual([2, 1, 1, 1]);
    expect((await app.inject({ url: '/metrics' })).body).toMatch(/^stagediff_retention_removed_total 1$/m);

    // 0 days keeps everything, however old.
    now += 365 * DAY;
    expect(await new Maintenance(store, app.ctx.metrics, { retentionDays: 0, now: () => now }).run()).toEqual({
      expired: [],
    });
    expect((await store.stats()).comparisons).toBe(2);
  });
});
