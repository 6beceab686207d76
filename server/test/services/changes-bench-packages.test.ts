/**
 * A `go test -bench` run over two packages (fixtures/reference/gobench/multi-pkg-metric-*.txt): the
 * change engine gives one geomean per package and unit, each equal to the geomean row benchstat printed
 * for that package's table (expected/multi-pkg-metric.benchstat.txt), not one pooled over packages.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { samplePath } from '../helpers/paths.ts';

/** benchstat's geomean rows: package, unit, and the last column (a "+1.23%" change, or "?"). */
function benchstatGeomeans(text: string): { pkg: string; unit: string; delta: string }[] {
  const out: { pkg: string; unit: string; delta: string }[] = [];
  let pkg = '';
  let unit = '';
  for (const line of text.split('\n')) {
    const p = /^pkg: (\S+)/.exec(line);
    if (p) pkg = p[1]!;
    const u = /^\s+│\s+(\S+)\s+│\s+(\S+)\s+vs base/.exec(line);
    if (u) unit = u[1]!;
    if (line.startsWith('geomean')) {
      const d = /([+-]\d+\.\d+%|\?)\s*[¹²³]?\s*$/.exec(line);
      out.push({ pkg, unit, delta: d ? d[1]! : '' });
    }
  }
  return out;
}

const pct = (g: number | null) => (g === null ? '?' : `${g < 0 ? '-' : '+'}${Math.abs(g).toFixed(2)}%`);

describe('benchmark geomeans per package', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => app.close());

  it('one geomean per package and unit, each equal to benchstat’s', async () => {
    const { id, auth } = await createComparison(app, 'two packages');
    const a = await addStage(app, id, auth, 'before');
    const b = await addStage(app, id, auth, 'after');
    expect((await upload(app, id, a, auth, [samplePath('gobench/multi-pkg-metric-before.txt')])).statusCode).toBe(200);
    expect((await upload(app, id, b, auth, [samplePath('gobench/multi-pkg-metric-after.txt')])).statusCode).toBe(200);
    const r = await app.inject({ url: `/api/comparisons/${id}/changes?base=${a}&target=${b}` });
    expect(r.statusCode).toBe(200);
    const units = r.json().benchmarks.units as { pkg: string; unit: string; geomeanDeltaPercent: number | null }[];
    const ref = benchstatGeomeans(readFileSync(samplePath('gobench/expected/multi-pkg-metric.benchstat.txt'), 'utf8'));
    expect(new Set(ref.map((x) => x.pkg)).size).toBe(2);
    expect(units.map((u) => ({ pkg: u.pkg, unit: u.unit, delta: pct(u.geomeanDeltaPercent) }))).toEqual(ref);
    // sec/op: +62.53 % in cache and +4.03 % in tokenize, not one figure pooled over both
    expect(units.filter((u) => u.unit === 'sec/op').map((u) => pct(u.geomeanDeltaPercent))).toEqual([
      '+62.53%',
      '+4.03%',
    ]);
    // "What changed" names the package of each geomean
    expect(r.json().sentences).toContain(
      'go test -bench benchcorpus/cache sec/op +62.53 % geomean, 2 of 2 significant',
    );
    expect(r.json().sentences).toContain(
      'go test -bench benchcorpus/tokenize sec/op +4.03 % geomean, 1 of 2 significant',
    );
  });
});
