/**
 * Retention through the API, on a fake clock: the edit-token holder keeps a comparison with
 * PATCH {keep: true}; a round of maintenance removes what nobody changed or viewed for
 * RETENTION_DAYS (its files included) and nothing else, and /metrics counts it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

  it('keeps a comparison read only from the caches (memo, view cache, 304) past a round', async () => {
    const files = [join(fixturesDir, 'demo/baseline/run-1', 'wrk.txt')];
    const byPage = await createComparison(app, 'read from the memo');
    const byView = await createComparison(app, 'read from the view cache');
    const by304 = await createComparison(app, 'revalidated by a browser');
    const unread = await createComparison(app, 'never read again');
    for (const c of [byPage, byView, by304, unread])
      await upload(app, c.id, await addStage(app, c.id, c.auth, 'baseline'), c.auth, files);
    // Day 0: each is read once, which fills the caches (the tree is loaded: a view recorded then).
    const page = (id: string, headers: Record<string, string> = {}) =>
      app.inject({ url: `/api/comparisons/${id}`, headers: { 'accept-encoding': 'br', ...headers } });
    const table = (id: string) =>
      app.inject({ url: `/api/comparisons/${id}/stage-table`, headers: { 'accept-encoding': 'br' } });
    expect((await page(byPage.id)).statusCode).toBe(200);
    expect((await table(byView.id)).statusCode).toBe(200);
    const etag = (await page(by304.id)).headers.etag as string;
    expect(etag).toBeTruthy();

    // Day 20: read only from the caches, never loading a tree.
    now += 20 * DAY;
    const treeReads = vi.spyOn(store, 'getComparisonTree');
    const hits = (await app.inject({ url: '/metrics' })).body.match(/^stagediff_result_cache_hits_total (\d+)$/m);
    expect((await page(byPage.id)).statusCode).toBe(200);
    expect((await table(byView.id)).statusCode).toBe(200);
    expect((await page(by304.id, { 'if-none-match': etag })).statusCode).toBe(304);
    expect(treeReads).not.toHaveBeenCalled();
    treeReads.mockRestore();
    const hitsAfter = (await app.inject({ url: '/metrics' })).body.match(/^stagediff_result_cache_hits_total (\d+)$/m);
    expect(Number(hitsAfter?.[1])).toBe(Number(hits?.[1] ?? 0) + 1);
    // (The store write is in the background: let it land.)
    await new Promise((r) => setTimeout(r, 50));

    now += 11 * DAY;
    const round = new Maintenance(store, app.ctx.metrics, { retentionDays: 30, now: () => now });
    const { expired } = await round.run();
    expect(expired).toContain(unread.id);
    for (const c of [byPage, byView, by304]) expect(expired).not.toContain(c.id);
  });
});
