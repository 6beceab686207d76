/**
 * Fixtures recorded for this project (fixtures/loadtests/{vegeta,k6}, commands in their README.md):
 * the raw per-request outputs are parsed and compared with the report the tool itself printed for
 * the SAME run.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseFile } from '../../helpers/loadtest-expected.ts';

const FIX = new URL('../../../../fixtures/loadtests/', import.meta.url);
const fx = (rel: string): string => fileURLToPath(new URL(rel, FIX));
// biome-ignore lint/suspicious/noExplicitAny: the tools' own JSON reports, read by path; a wrong path fails the assertion
const json = (rel: string): Record<string, any> => JSON.parse(readFileSync(fx(rel), 'utf8'));

function rel(a: number | null | undefined, b: number): number {
  expect(a).not.toBeNull();
  return b === 0 ? Math.abs(a!) : Math.abs(a! - b) / Math.abs(b);
}

describe('vegeta fixtures: raw results agree with vegeta report of the same run', () => {
  for (const stage of ['errors', 'down']) {
    const rep = json(`vegeta/${stage}-report.json`);
    for (const ext of ['jsonl', 'csv']) {
      it(`${stage}-results.${ext} = ${stage}-report.json to the nanosecond`, async () => {
        const run = await parseFile(fx(`vegeta/${stage}-results.${ext}`));
        expect(run.format).toBe(ext === 'jsonl' ? 'vegeta-json' : 'vegeta-csv');
        const s = run.summary;
        const l = rep.latencies;
        expect(s.requests).toBe(rep.requests);
        // vegeta prints integer ns: our ms figures must round back to the same integers
        const ns = (v: number | null): number => Math.round(v! * 1e6);
        expect(ns(s.latencyMs.min)).toBe(l.min);
        expect(ns(s.latencyMs.mean)).toBe(l.mean);
        expect(ns(s.latencyMs.p50)).toBe(l['50th']);
        expect(ns(s.latencyMs.p90)).toBe(l['90th']);
        expect(ns(s.latencyMs.p95)).toBe(l['95th']);
        expect(ns(s.latencyMs.p99)).toBe(l['99th']);
        expect(ns(s.latencyMs.max)).toBe(l.max);
        expect(s.durationSeconds).toBeCloseTo(rep.duration / 1e9, 9);
        expect(rel(s.rps, rep.rate)).toBeLessThan(1e-12);
        expect(rel(s.meta.throughput as number, rep.throughput)).toBeLessThan(1e-12);
        const codes = rep.status_codes as Record<string, number>;
        expect(s.transportErrors).toBe(codes['0'] ?? 0);
        expect(s.non2xx).toBe(
          Object.entries(codes)
            .filter(([c]) => c !== '0' && !c.startsWith('2'))
            .reduce((a, [, n]) => a + n, 0),
        );
        expect(s.errors).toBe(s.transportErrors! + s.non2xx!);
        // timeline: every request in exactly one bucket
        expect(run.timeline!.reduce((a, b) => a + b.requests, 0)).toBe(rep.requests);
        expect(run.timeline!.reduce((a, b) => a + b.errors, 0)).toBe(s.errors);
        // exact order statistics beside the t-digest figures
        expect(s.meta.exactLatencyMs?.p99).toBeGreaterThan(0);
      });
    }
  }

  it('errors-report.txt as printed', async () => {
    const run = await parseFile(fx('vegeta/errors-report.txt'));
    const rep = json('vegeta/errors-report.json');
    expect(run.format).toBe('vegeta-report');
    expect(run.summary.requests).toBe(rep.requests);
    expect(rel(run.summary.latencyMs.p99, rep.latencies['99th'] / 1e6)).toBeLessThan(0.005);
    expect(run.summary.non2xx).toBe(rep.status_codes['500']);
  });

  it('errors-hist.txt and errors-hdrplot.txt of the same run', async () => {
    const hist = await parseFile(fx('vegeta/errors-hist.txt'));
    expect(hist.format).toBe('vegeta-hist');
    expect(hist.summary.requests).toBe(600);
    const hdr = await parseFile(fx('vegeta/errors-hdrplot.txt'));
    const jsonl = await parseFile(fx('vegeta/errors-results.jsonl'));
    // our computed distribution is the curve vegeta's hdrplot prints (same t-digest)
    for (const p of hdr.latencyDistribution!) {
      const ours = jsonl.latencyDistribution!.find((q) => Math.abs(q.percentile - p.percentile) < 1e-6);
      expect(ours, `percentile ${p.percentile}`).toBeDefined();
      expect(Math.abs(ours!.ms - p.ms)).toBeLessThan(1e-6 + 1e-6 * p.ms); // hdrplot prints 6 decimals
    }
  });
});

describe('k6 fixtures: points agree with the summary export of the same run', () => {
  const sum = json('k6/errors-summary.json').metrics;
  for (const ext of ['json', 'csv']) {
    it(`errors-points.${ext} vs errors-summary.json`, async () => {
      const run = await parseFile(fx(`k6/errors-points.${ext}`));
      expect(run.format).toBe(ext === 'json' ? 'k6-json' : 'k6-csv');
      const s = run.summary;
      const d = sum.http_req_duration;
      expect(s.requests).toBe(sum.http_reqs.count);
      expect(s.errors).toBe(sum.http_req_failed.passes);
      expect(s.meta.k6Failed).toBe(sum.http_req_failed.passes);
      // identical sample sets and k6's percentile rule: equal up to float noise
      expect(rel(s.latencyMs.mean, d.avg)).toBeLessThan(1e-9);
      expect(rel(s.latencyMs.min, d.min)).toBeLessThan(1e-9);
      expect(rel(s.latencyMs.p50, d.med)).toBeLessThan(1e-9);
      expect(rel(s.latencyMs.p90, d['p(90)'])).toBeLessThan(1e-9);
      expect(rel(s.latencyMs.p95, d['p(95)'])).toBeLessThan(1e-9);
      expect(rel(s.latencyMs.max, d.max)).toBeLessThan(1e-9);
      // the run duration is estimated from the points: within the 0.5 % bar (CSV has 1 s stamps: 2 %)
      expect(rel(s.rps, sum.http_reqs.rate)).toBeLessThan(ext === 'json' ? 0.005 : 0.02);
      expect(run.timeline!.reduce((a, b) => a + b.requests, 0)).toBe(sum.http_reqs.count);
    });
  }

  it('errors-summary.json as exported', async () => {
    const run = await parseFile(fx('k6/errors-summary.json'));
    expect(run.format).toBe('k6-summary');
    expect(run.summary.rps).toBe(sum.http_reqs.rate);
    expect(run.summary.latencyMs.p95).toBe(sum.http_req_duration['p(95)']);
  });

  it('errors-stdout.txt (the console summary of the same run) agrees with the export', async () => {
    const run = await parseFile(fx('k6/errors-stdout.txt'));
    expect(run.format).toBe('k6-stdout');
    expect(run.summary.requests).toBe(sum.http_reqs.count);
    expect(run.summary.errors).toBe(sum.http_req_failed.passes);
    expect(Math.abs(run.summary.rps! - sum.http_reqs.rate)).toBeLessThanOrEqual(5e-7);
    // "p(95)=3.37ms": two decimals of a millisecond
    expect(Math.abs(run.summary.latencyMs.p95! - sum.http_req_duration['p(95)'])).toBeLessThan(0.01);
  });
});
