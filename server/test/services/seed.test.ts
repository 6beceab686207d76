/**
 * The seeded demo comparison (/c/demo) against its committed raw files: the stage table equals what
 * wrk printed in each stage's wrk.txt (read here with a plain regular expression, independently of
 * the parser), the comparison is read-only, and the CPU diff shows reflection-based JSON shrinking.
 */
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { demoStageContent, seedDemo } from '../../src/services/seed.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { testApp } from '../helpers/app.ts';

const manifestPath = `${fixturesDir}demo/manifest.json`;
const haveDemo = existsSync(manifestPath);

/** wrk's own text: "Requests/sec:  1234.56" and the --latency distribution lines. */
function wrkPrinted(path: string): { rps: number; p50: number; p99: number } {
  const t = readFileSync(path, 'utf8');
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(t)![1]);
  const ms = (label: string) => {
    const m = new RegExp(`^\\s+${label}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(t)!;
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  return { rps, p50: ms('50'), p99: ms('99') };
}

describe.skipIf(!haveDemo)('the demo comparison', () => {
  let app: StagediffApp;
  const manifest = haveDemo
    ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as {
        stages: { name: string; files?: { path: string }[]; captures?: string[] }[];
      })
    : { stages: [] };
  const stageFiles = (st: (typeof manifest.stages)[number]) => demoStageContent(`${fixturesDir}demo/`, st).files;

  beforeAll(async () => {
    app = await testApp();
    const r = await seedDemo(app.ctx);
    expect(r).not.toBeNull();
    expect(await seedDemo(app.ctx)).toBeNull(); // seeding twice is a no-op
  });
  afterAll(async () => app.close());

  it("has the manifest's stages, in order, read-only", async () => {
    const c = (await app.inject({ url: '/api/comparisons/demo' })).json();
    expect(c.readOnly).toBe(true);
    expect(c.stages.map((s: { name: string }) => s.name)).toEqual(manifest.stages.map((s) => s.name));
    for (const [i, st] of manifest.stages.entries()) {
      expect(c.stages[i].artifacts).toHaveLength(stageFiles(st).length);
      expect(c.stages[i].captures).toHaveLength(st.captures?.length ?? 0);
    }
    const edit = await app.inject({
      method: 'PATCH',
      url: '/api/comparisons/demo',
      headers: { authorization: 'Bearer anything' },
      payload: { title: 'x' },
    });
    expect(edit.statusCode).toBe(403);
  });

  it('stage table figures equal what wrk printed in each stage', async () => {
    const c = (await app.inject({ url: '/api/comparisons/demo' })).json();
    for (const [i, st] of manifest.stages.entries()) {
      const wrk = stageFiles(st).find((f) => f.endsWith('wrk.txt'))!;
      const printed = wrkPrinted(`${fixturesDir}demo/${wrk}`);
      const row = c.stageTable[i];
      expect(row.source.format).toBe('wrk');
      expect(row.rps).toBe(printed.rps);
      expect(row.latencyMs.p50).toBeCloseTo(printed.p50, 9);
      expect(row.latencyMs.p99).toBeCloseTo(printed.p99, 9);
    }
    const last = c.stageTable[c.stageTable.length - 1];
    expect(last.vsBaseline.rps).toBeCloseTo(last.rps / c.stageTable[0].rps, 12);
  });

  it('the CPU diff baseline → fast-json shows encoding/json shrinking', async () => {
    const c = (await app.inject({ url: '/api/comparisons/demo' })).json();
    const [base, next] = c.stages;
    const d = (
      await app.inject({
        url: `/api/comparisons/demo/diff?base=${base.id}&target=${next.id}&sampleType=cpu&mode=share`,
      })
    ).json();
    const jsonShare = (side: 'base' | 'target') =>
      d.top
        .filter((r: { name: string }) => r.name.startsWith('encoding/json.'))
        .reduce((a: number, r: Record<string, { flat: number }>) => a + r[side]!.flat, 0);
    expect(jsonShare('base')).toBeGreaterThan(0.02);
    expect(jsonShare('target')).toBeLessThan(jsonShare('base') / 2);
  });
});
