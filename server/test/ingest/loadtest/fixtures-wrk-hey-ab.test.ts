/**
 * Our own fixtures (fixtures/loadtests/, real runs of the real tools against
 * fixtures/loadtests/target-server; commands in each folder's README.md). Report figures are
 * checked against what the tool printed in that file; per-request logs are checked for integrity
 * and against an independent, naive re-computation with the tool's rule; a raw log with a
 * same-run report (ab -g / -e beside the ab text) is checked against that report.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../../src/ingest/errors.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';
import { LOADTEST_FIXTURES as FIXTURES, best, close, parseFile } from '../../helpers/loadtest-expected.ts';

type Want = Partial<
  Record<
    'requests' | 'durationSeconds' | 'rps' | 'errors' | 'non2xx' | 'transportErrors' | 'bytesPerSecond',
    number | null
  >
> & {
  format: string;
  latency?: Partial<Record<'min' | 'mean' | 'p50' | 'p75' | 'p90' | 'p95' | 'p99' | 'p999' | 'max', number | null>>;
  distribution?: boolean;
};

const MB = 1024 * 1024;
/** Figures copied from each file as the tool printed them (converted to ms, req/s, bytes/s). */
const printed: Record<string, Want> = {
  'wrk/ok-latency.txt': {
    format: 'wrk',
    requests: 65753,
    durationSeconds: 3.09,
    rps: 21305.85,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    bytesPerSecond: 3.78 * MB,
    distribution: true,
    latency: { min: null, mean: 3.54, p50: 0.46, p75: 2.3, p90: 7.51, p95: null, p99: 52.05, max: 88.13 },
  },
  'wrk/errors-latency.txt': {
    format: 'wrk',
    requests: 57951,
    durationSeconds: 3.08,
    rps: 18794.43,
    errors: 3424,
    non2xx: 2844,
    transportErrors: 580,
    distribution: true,
    latency: { mean: 3.24, p50: 0.522, p75: 2.3, p90: 7.53, p99: 45.17, max: 83.82 },
  },
  'wrk/errors-plain.txt': {
    format: 'wrk',
    requests: 45158,
    durationSeconds: 3.1,
    rps: 14575.72,
    errors: 2751,
    non2xx: 2286,
    transportErrors: 465,
    bytesPerSecond: 2.59 * MB,
    distribution: false,
    latency: { mean: 14.38, p50: null, max: 256.72 },
  },
  'hey/ok-summary.txt': {
    format: 'hey',
    requests: 51806,
    durationSeconds: 3.0024,
    rps: 17255.0412,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    distribution: true,
    latency: { min: 0, mean: 0.9, p50: 0.6, p75: 0.8, p90: 1.2, p95: 2.1, p99: 6.9, p999: null, max: 75.7 },
  },
  'hey/ok-paced.txt': {
    format: 'hey',
    requests: 1857,
    durationSeconds: 2.008,
    bytesPerSecond: 111420 / 2.008, // "Total data: 111420 bytes" over Total
    rps: 924.8146,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    distribution: true,
    latency: { min: 0, mean: 0.7, p50: 0.2, p75: 0.3, p90: 1, p95: 3, p99: 5.8, p999: null, max: 85.7 },
  },
  // every response a 302 (fixtures/loadtests/redirect-server): a redirect is an answer, not an error
  'hey/redirect-summary.txt': {
    format: 'hey',
    requests: 400,
    durationSeconds: 0.0462,
    rps: 8663.5781,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
  },
  'hey/errors-summary.txt': {
    format: 'hey',
    requests: 49343 + 2659 + 3,
    durationSeconds: 3.0008,
    rps: 17330.5206,
    errors: 2662,
    non2xx: 2659,
    transportErrors: 3,
    distribution: true,
    latency: { mean: 0.9, p50: 0.7, p75: 0.9, p90: 1.3, p95: 1.7, p99: 4.3, max: 70.4 },
  },
  'ab/ok.txt': {
    format: 'ab',
    requests: 30000,
    durationSeconds: 3.461,
    rps: 8668.44,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    bytesPerSecond: 1583.01 * 1024,
    distribution: true,
    latency: { min: 0, mean: 1, p50: 1, p75: 1, p90: 2, p95: 2, p99: 6, p999: null, max: 28 },
  },
  'ab/errors.txt': {
    format: 'ab',
    requests: 30000,
    durationSeconds: 5.089,
    rps: 5894.62,
    errors: 1867,
    non2xx: 1536,
    transportErrors: 331,
    bytesPerSecond: 1064.29 * 1024,
    distribution: true,
    latency: { min: 0, mean: 2, p50: 1, p90: 4, p95: 6, p99: 10, max: 45 },
  },
  'bombardier/ok.json': {
    format: 'bombardier',
    requests: 61179,
    durationSeconds: 3.047507393,
    rps: 20501.29006642164,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    bytesPerSecond: 11440473 / 3.047507393,
    distribution: true,
    latency: {
      min: null,
      mean: 0.794463149119796,
      p50: 0.484,
      p75: 0.605,
      p90: 0.994,
      p95: 1.75,
      p99: 7.032,
      max: 87.498,
    },
  },
  'bombardier/errors-count.json': {
    format: 'bombardier',
    requests: 20000,
    durationSeconds: 0.687537824,
    rps: 29704.71187863329,
    errors: 1009,
    non2xx: 1009,
    transportErrors: 0,
    distribution: true,
    latency: { mean: 0.5476721, p50: 0.196, p99: 10.351, max: 46.565 },
  },
  'bombardier/errors-result.txt': {
    format: 'bombardier',
    requests: 63889,
    durationSeconds: null,
    rps: 21421.65,
    errors: 3197,
    non2xx: 3197,
    transportErrors: 0,
    bytesPerSecond: 5.25 * MB,
    distribution: true,
    latency: { min: null, mean: 0.7488, p50: 0.49, p75: 0.691, p90: 1.25, p95: 2.52, p99: 5.44, max: 18.13 },
  },
  'bombardier/errors.txt': {
    format: 'bombardier',
    requests: 93898,
    durationSeconds: null,
    rps: 31440.48,
    errors: 4815,
    non2xx: 4815,
    transportErrors: 0,
    bytesPerSecond: 7.72 * MB,
    distribution: true,
    latency: { mean: 0.50938, p50: 0.403, p95: 1.07, p99: 3.74, max: 40.83 },
  },
  // every response a 302: bombardier counts none of them as an error, nor do we
  'bombardier/redirect.txt': {
    format: 'bombardier',
    requests: 2000,
    rps: 15738.7,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    latency: { mean: 0.2633, p50: 0.145, p99: 3.56, max: 6.09 },
  },
  'bombardier/redirect.json': { format: 'bombardier', requests: 2000, errors: 0, non2xx: 0, transportErrors: 0 },
  'autocannon/ok.json': {
    format: 'autocannon',
    requests: 66439,
    durationSeconds: 3.04,
    rps: 22146.67,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    bytesPerSecond: 4141397.34,
    distribution: true,
    latency: { min: 1, mean: 0.22, p50: 0, p75: 0, p90: 1, p95: null, p99: 5, p999: 8, max: 30 },
  },
  'autocannon/errors.json': {
    format: 'autocannon',
    requests: 55379,
    durationSeconds: 3.04,
    rps: 18462.67,
    errors: 2806,
    non2xx: 2806,
    transportErrors: 0,
    distribution: true,
    latency: { min: 1, mean: 13.35, p50: 11, p75: 19, p90: 26, p99: 46, p999: 57, max: 61 },
  },
  'autocannon/ok-table.txt': {
    format: 'autocannon',
    requests: 28380,
    durationSeconds: 3.08,
    rps: 9460.67,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    distribution: true,
    latency: { min: null, mean: 1.23, p50: 0, p75: 1, p90: 3, p95: null, p99: 12, p999: 59, max: 170 },
  },
  'autocannon/errors-table.txt': {
    format: 'autocannon',
    requests: 65585,
    rps: 21864,
    errors: 3274,
    non2xx: 3274,
    transportErrors: 0,
    bytesPerSecond: 4.09e6,
    distribution: true,
    latency: { mean: 15.25, p50: 13, p75: 21, p90: 31, p99: 58, p999: 99, max: 129 },
  },
  // every response 2xx: autocannon prints no "2xx responses" line, and an exact count only below 1000
  'autocannon/ok-plain-table.txt': {
    format: 'autocannon',
    requests: null,
    durationSeconds: 2.03,
    rps: 5635.5,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    bytesPerSecond: 1.04e6,
    distribution: true,
    latency: { min: null, mean: 1.14, p50: 0, p99: 29, max: 131 },
  },
  'autocannon/ok-amount-table.txt': {
    format: 'autocannon',
    requests: 500,
    durationSeconds: 1.19,
    rps: 500,
    errors: 0,
    non2xx: 0,
    transportErrors: 0,
    bytesPerSecond: 93e3,
    distribution: true,
    latency: { mean: 1.35, p50: 0, p99: 31, max: 207 },
  },
  'autocannon/redirect-table.txt': { format: 'autocannon', requests: 300, durationSeconds: 1.02, errors: 0, non2xx: 0 },
  'autocannon/redirect.json': { format: 'autocannon', requests: 300, errors: 0, non2xx: 0, transportErrors: 0 },
  'autocannon/down-table.txt': {
    format: 'autocannon',
    requests: 0,
    durationSeconds: 2.01,
    rps: 0,
    errors: 22000,
    non2xx: 0,
    transportErrors: 22000,
    distribution: false,
    latency: { min: null, mean: null, p50: null, max: null },
  },
};

function check(run: LoadTestRun, w: Want): void {
  const tol = 1e-9;
  expect(run.format).toBe(w.format);
  const s = run.summary as unknown as Record<string, number | null>;
  for (const k of [
    'requests',
    'durationSeconds',
    'rps',
    'errors',
    'non2xx',
    'transportErrors',
    'bytesPerSecond',
  ] as const) {
    const want = w[k];
    if (want === undefined) continue;
    if (want === null) expect(s[k], k).toBeNull();
    else
      expect(close(s[k], want, tol) || Math.abs((s[k] ?? NaN) - want) < 1e-6, `${k}: got ${s[k]}, want ${want}`).toBe(
        true,
      );
  }
  for (const [k, want] of Object.entries(w.latency ?? {})) {
    const got = run.summary.latencyMs[k as keyof LoadTestRun['summary']['latencyMs']];
    if (want === null) expect(got, `latency ${k}`).toBeNull();
    else expect(got !== null && Math.abs(got - want) < 1e-6, `latency ${k}: got ${got}, want ${want}`).toBe(true);
  }
  if (w.distribution !== undefined) expect(run.latencyDistribution !== null).toBe(w.distribution);
  const e = run.summary;
  if (e.errors !== null) expect(e.errors).toBe((e.transportErrors ?? 0) + (e.non2xx ?? 0));
}

describe('own fixtures: figures as the tool printed them', () => {
  for (const [rel, want] of Object.entries(printed)) {
    it(rel, async () => {
      const path = join(FIXTURES, rel);
      expect(best(path).importer?.formats).toContain(want.format);
      check(await parseFile(path), want);
    });
  }

  it('every fixture file is covered by a test here', () => {
    const covered = new Set([
      ...Object.keys(printed),
      'wrk/down.txt',
      'ab/down.txt',
      'ab/down-stderr.txt',
      'hey/ok-requests.csv',
      'hey/errors-requests.csv',
      'ab/ok-gnuplot.tsv',
      'ab/errors-gnuplot.tsv',
      'ab/ok-percentiles.csv',
      'ab/errors-percentiles.csv',
      // several runs in one file, partial pastes: server/test/ingest/loadtest/partial-and-several-runs.test.ts
      'wrk/two-runs.txt',
      'hey/two-runs.txt',
      'ab/two-runs.txt',
      'wrk/three-runs.txt',
      'hey/three-runs.txt',
    ]);
    for (const tool of ['wrk', 'hey', 'ab', 'bombardier', 'autocannon']) {
      for (const f of readdirSync(join(FIXTURES, tool))) {
        if (f === 'README.md') continue;
        expect(covered.has(`${tool}/${f}`), `${tool}/${f} has no test`).toBe(true);
      }
    }
  });
});

describe('own fixtures: files without a run', () => {
  for (const rel of ['wrk/down.txt', 'ab/down.txt', 'ab/down-stderr.txt']) {
    it(rel, async () => {
      const err = await parseFile(join(FIXTURES, rel)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(IngestError);
      expect((err as IngestError).code).toBe('no-run');
      expect((err as IngestError).message.length).toBeGreaterThan(10);
    });
  }
});

/** hey's percentile walk, written the way requester/report.go does it, on Number()-parsed values. */
function heyNaive(lat: number[], p: number): number {
  for (let i = 0; i < lat.length; i++) if (Math.floor((i * 100) / lat.length) >= p) return lat[i]!;
  return lat[lat.length - 1]!;
}

describe('own fixtures: hey -o csv integrity', () => {
  for (const rel of ['hey/ok-requests.csv', 'hey/errors-requests.csv']) {
    it(rel, async () => {
      const path = join(FIXTURES, rel);
      const rows = readFileSync(path, 'utf8')
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(','));
      const run = await parseFile(path);
      expect(run.format).toBe('hey-csv');
      const s = run.summary;
      expect(s.requests).toBe(rows.length);
      expect(s.non2xx).toBe(rows.filter((r) => r[6] !== '200').length);
      expect(s.transportErrors).toBeNull();
      // -z 3s: the last completion lies just after 3 s.
      expect(s.durationSeconds!).toBeGreaterThan(2.95);
      expect(s.durationSeconds!).toBeLessThan(3.2);
      const lat = rows.map((r) => Number(r[0]) * 1000).sort((a, b) => a - b);
      for (const [k, p] of [
        ['p50', 50],
        ['p75', 75],
        ['p90', 90],
        ['p95', 95],
        ['p99', 99],
      ] as const) {
        expect(s.latencyMs[k]).toBeCloseTo(heyNaive(lat, p), 9);
      }
      expect(s.latencyMs.mean).toBeCloseTo(lat.reduce((a, b) => a + b, 0) / lat.length, 9);
      const tl = run.timeline!;
      expect(tl.reduce((a, b) => a + b.requests, 0)).toBe(rows.length);
      expect(tl.reduce((a, b) => a + b.errors, 0)).toBe(s.non2xx);
      tl.forEach((b, i) => {
        expect(b.t).toBe(i);
      });
      expect(tl.length).toBe(Math.floor(Math.max(...rows.map((r) => Number(r[7])))) + 1);
    });
  }
});

describe("own fixtures: ab -g and -e against the same run's text report", () => {
  for (const stage of ['ok', 'errors']) {
    it(`${stage}: -g percentiles equal the report; duration bounds hold the report's`, async () => {
      const text = await parseFile(join(FIXTURES, `ab/${stage}.txt`));
      const g = await parseFile(join(FIXTURES, `ab/${stage}-gnuplot.tsv`));
      expect(g.format).toBe('ab-gnuplot');
      expect(g.summary.requests).toBe(text.summary.requests);
      for (const k of ['min', 'p50', 'p75', 'p90', 'p95', 'p99', 'max'] as const) {
        expect(g.summary.latencyMs[k], k).toBe(text.summary.latencyMs[k]);
      }
      // The report's rounded mean is the TSV's mean rounded.
      expect(Math.round(g.summary.latencyMs.mean!)).toBe(text.summary.latencyMs.mean);
      const [lo, hi] = g.summary.meta.durationBoundsSeconds as [number, number];
      expect(text.summary.durationSeconds!).toBeGreaterThanOrEqual(lo);
      expect(text.summary.durationSeconds!).toBeLessThanOrEqual(hi);
      expect(g.summary.durationSeconds!).toBeGreaterThanOrEqual(lo);
      expect(g.summary.durationSeconds!).toBeLessThanOrEqual(hi);
      expect(g.timeline!.reduce((a, b) => a + b.requests, 0)).toBe(30000);
      expect(g.summary.errors).toBeNull();
    });
    it(`${stage}: -e rows round to the report's percentiles`, async () => {
      const text = await parseFile(join(FIXTURES, `ab/${stage}.txt`));
      const e = await parseFile(join(FIXTURES, `ab/${stage}-percentiles.csv`));
      expect(e.format).toBe('ab-csv');
      expect(e.latencyDistribution).toHaveLength(101);
      for (const pt of text.latencyDistribution!) {
        const row = e.latencyDistribution!.find((d) => d.percentile === pt.percentile)!;
        expect(Math.abs(row.ms - pt.ms), `${pt.percentile}%`).toBeLessThanOrEqual(1);
      }
      expect(e.summary.requests).toBeNull();
    });
  }
});
