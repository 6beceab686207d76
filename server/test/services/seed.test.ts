/**
 * The seeded demo comparison (/c/demo) against its committed raw files: each stage holds six wrk runs
 * (fixtures/demo/<stage>/run-K/), the stage table's figures are the medians of what wrk printed
 * (read here with a plain regular expression, independently of the parser) with finite 95 % intervals,
 * every stage-to-stage change carries a verdict on n+n runs, the comparison is read-only, and the CPU
 * diff shows reflection-based JSON shrinking.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
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

/** The middle value (the mean of the two middle values for an even count). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The U test's smallest two-sided p for n runs against n: all of one side above all of the other. */
function smallestP(n: number): number {
  let ways = 1; // C(2n, n)
  for (let k = 1; k <= n; k++) ways = (ways * (n + k)) / k;
  return 2 / ways;
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

  it("stores each stage's sources: the largest of its runs' sources.tar.gz, with its module, commit and files", async () => {
    const c = (await app.inject({ url: '/api/comparisons/demo' })).json();
    for (const [i, st] of manifest.stages.entries()) {
      const archives = (st.captures ?? [])
        .map((rel) => `${fixturesDir}demo/${rel.replace(/capture\.json$/, 'sources.tar.gz')}`)
        .filter((p) => existsSync(p));
      expect(archives.length).toBeGreaterThan(0);
      const largest = archives.reduce((a, b) => (statSync(b).size > statSync(a).size ? b : a));
      const listed = execFileSync('tar', ['-tzf', largest], { encoding: 'utf8' })
        .trim()
        .split('\n')
        .filter((f) => f !== 'stagediff-source.json')
        .sort();
      const r = await app.inject({ url: `/api/comparisons/demo/stages/${c.stages[i].id}/sources` });
      expect(r.statusCode, st.name).toBe(200);
      const got = r.json();
      expect(got).toMatchObject({ modulePath: 'stagediff.local/demo-service', dirty: false, origin: 'sources.tar.gz' });
      expect(got.revision).toMatch(/^[0-9a-f]{40}$/);
      expect(got.entries.map((e: { path: string }) => e.path).sort()).toEqual(listed);
      expect(c.stages[i].sources).toMatchObject({ files: listed.length });
    }
  });

  it('a store that refuses the sources (MAX_SOURCE_FILE_BYTES at its least, 1 KiB) keeps the demo and says why', async () => {
    const small = await testApp({ MAX_SOURCE_FILE_BYTES: '1024' });
    try {
      const r = await seedDemo(small.ctx);
      expect(r?.sourcesRefused).toHaveLength(manifest.stages.length);
      expect(r?.sourcesRefused[0]).toMatch(/^baseline: source archive sources\.tar\.gz, entry "[^"]+": /);
      const c = (await small.inject({ url: '/api/comparisons/demo' })).json();
      expect(c.stages).toHaveLength(manifest.stages.length);
      expect(c.stages.every((s: { sources?: unknown }) => !s.sources)).toBe(true);
    } finally {
      await small.close();
    }
  });

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

  it('stage table figures are the medians of what wrk printed in the runs of each stage', async () => {
    const t = (await app.inject({ url: '/api/comparisons/demo/stage-table' })).json().rows;
    const runs: number[][] = [];
    for (const [i, st] of manifest.stages.entries()) {
      const wrk = stageFiles(st).filter((f) => f.name.endsWith('wrk.txt'));
      const n = wrk.length;
      expect(n).toBeGreaterThanOrEqual(6); // the fewest runs with a finite 95 % interval
      expect(wrk.map((f) => f.name)).toEqual(Array.from({ length: n }, (_, k) => `run-${k + 1}-wrk.txt`));
      const printed = wrk.map((f) => wrkPrinted(`${fixturesDir}demo/${f.path}`));
      runs.push(printed.map((p) => p.rps));
      const row = t[i];
      expect(row.source.format).toBe('wrk');
      expect(row.summary).toBe('median');
      expect(row.runs.map((r: { rps: number }) => r.rps)).toEqual(printed.map((p) => p.rps));
      const rps = row.figures.rps.median;
      expect(rps).toBe(median(printed.map((p) => p.rps)));
      expect(row.figures.p50.median).toBeCloseTo(median(printed.map((p) => p.p50)), 9);
      expect(row.figures.p99.median).toBeCloseTo(median(printed.map((p) => p.p99)), 9);
      expect(row.figures.rps).toMatchObject({ n });
      expect(row.figures.rps.lo).toBeLessThanOrEqual(rps);
      expect(row.figures.rps.hi).toBeGreaterThanOrEqual(rps);
      const verdict = row.vsPrevious?.rps;
      if (i === 0) expect(verdict).toBeUndefined();
      else
        expect(verdict).toMatchObject({
          nBase: runs[i - 1]!.length,
          nTarget: n,
          status: expect.stringMatching(/^(significant|no-change)$/),
        });
    }
    const last = t[t.length - 1];
    expect(last.vsBaseline.rps.ratio).toBeCloseTo(last.figures.rps.median / t[0].figures.rps.median, 12);
    // Every wrk run of pooled served more than every run of baseline: the U test's smallest p.
    const k = manifest.stages.findIndex((s) => s.name === 'pooled');
    expect(Math.min(...runs[k]!)).toBeGreaterThan(Math.max(...runs[0]!));
    const verdict = t[k].vsBaseline.rps;
    expect(verdict.status).toBe('significant');
    expect(verdict.p).toBeCloseTo(smallestP(runs[0]!.length), 12);
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
