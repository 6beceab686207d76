/**
 * The hot-path table's default order on the demo: the functions "what changed" names first, in its
 * order (GET …/changes), then the rest — ranked with the page's own sort (web/src/lib/hot-path-sort.ts)
 * over the rows the diff sends.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { sortHotPaths } from '../../../web/src/lib/hot-path-sort.ts';
import { testApp } from '../helpers/app.ts';

describe('demo hot paths, default order', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
    await seedDemo(app.ctx);
  });
  afterAll(async () => app.close());

  const ranked = async (base: string, target: string, sort: 'changes' | 'flat' | 'cum' | 'abs' = 'changes') => {
    const d = (await app.inject({ url: `/api/comparisons/demo/diff?base=${base}&target=${target}` })).json();
    const c = (await app.inject({ url: `/api/comparisons/demo/changes?base=${base}&target=${target}` })).json();
    expect(c.functions.status).toBe('ok');
    const origins = c.functions.changes.map((f: { name: string }) => f.name);
    return sortHotPaths(d.top as { name: string; deltaFlat: number; deltaCum: number }[], sort, origins).map(
      (r) => r.name,
    );
  };

  it('fast-json → pooled: dialConnFor in the first 3 rows (row 461 by Δ flat alone)', async () => {
    const rows = await ranked('fast-json', 'pooled');
    expect(rows.slice(0, 3)).toContain('net/http.(*Transport).dialConnFor');
    expect((await ranked('fast-json', 'pooled', 'flat')).indexOf('net/http.(*Transport).dialConnFor')).toBeGreaterThan(
      3,
    );
  });

  it('pooled → async-log: (*syncLogger).Log in the first 3 rows', async () => {
    const rows = await ranked('pooled', 'async-log');
    expect(rows.slice(0, 3)).toContain('main.(*syncLogger).Log');
  });

  it('sorts by Δ flat and Δ cum (largest saving first) and by |Δ cum|', async () => {
    const flat = await ranked('fast-json', 'pooled', 'flat');
    const cum = await ranked('fast-json', 'pooled', 'cum');
    const abs = await ranked('fast-json', 'pooled', 'abs');
    const d = (await app.inject({ url: '/api/comparisons/demo/diff?base=fast-json&target=pooled' })).json();
    const by = new Map<string, { deltaFlat: number; deltaCum: number }>(
      d.top.map((r: { name: string; deltaFlat: number; deltaCum: number }) => [r.name, r]),
    );
    for (let i = 1; i < flat.length; i++)
      expect(by.get(flat[i]!)!.deltaFlat).toBeGreaterThanOrEqual(by.get(flat[i - 1]!)!.deltaFlat);
    for (let i = 1; i < cum.length; i++)
      expect(by.get(cum[i]!)!.deltaCum).toBeGreaterThanOrEqual(by.get(cum[i - 1]!)!.deltaCum);
    for (let i = 1; i < abs.length; i++)
      expect(Math.abs(by.get(abs[i]!)!.deltaCum)).toBeLessThanOrEqual(Math.abs(by.get(abs[i - 1]!)!.deltaCum));
  });
});
