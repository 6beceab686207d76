/**
 * Every sample of the reference corpus (fixtures/reference/loadtests, eleven tools) is checked
 * against its expected.json entry: detected by content alone among every importer, parsed from a
 * streamed file source, every figure within its tolerance, alternatives, bounds,
 * timeline/distribution presence and the printed distribution points; files that hold no run must
 * give an IngestError.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTestImporters } from '../../../src/ingest/loadtest/index.ts';
import { LOADTEST_SAMPLES as SAMPLES, describeExpectedSamples, parseFile } from '../../helpers/loadtest-expected.ts';

/** Tools whose timelines are built from per-request rows, so their buckets hold every request. */
const perRequestTimelines = new Set(['wrk', 'wrk2', 'hey', 'ab', 'bombardier', 'autocannon']);

describeExpectedSamples('reference load-test outputs against expected.json', {
  tools: ['wrk', 'wrk2', 'hey', 'ab', 'bombardier', 'autocannon', 'vegeta', 'k6', 'locust', 'jmeter', 'ghz'],
  importers: loadTestImporters,
  fileCount: 211,
  extraCheck(key, run) {
    if (run.timeline && perRequestTimelines.has(key.split('/')[0]!))
      expect(
        run.timeline.reduce((a, b) => a + b.requests, 0),
        `${key} timeline total`,
      ).toBe(run.summary.requests);
  },
});

describe('nulls the references require', () => {
  const runOf = (rel: string) => parseFile(join(SAMPLES, rel));
  it('wrk prints no min, no p95, no p99.9', async () => {
    for (const rel of ['wrk/baseline-latency.txt', 'wrk/baseline-plain.txt']) {
      const L = (await runOf(rel)).summary.latencyMs;
      expect(L.min).toBeNull();
      expect(L.p95).toBeNull();
      expect(L.p999).toBeNull();
    }
    const plain = (await runOf('wrk/baseline-plain.txt')).summary.latencyMs;
    expect([plain.p50, plain.p75, plain.p90, plain.p99]).toEqual([null, null, null, null]);
  });
  it('autocannon has no p95; hey has no p99.9; ab text has no p99.9', async () => {
    expect((await runOf('autocannon/baseline.json')).summary.latencyMs.p95).toBeNull();
    expect((await runOf('hey/baseline-summary.txt')).summary.latencyMs.p999).toBeNull();
    expect((await runOf('ab/baseline.txt')).summary.latencyMs.p999).toBeNull();
  });
  it('hey CSV cannot count transport errors; ab -g has no status column', async () => {
    const hey = await runOf('hey/baseline-errors-requests.csv');
    expect(hey.summary.transportErrors).toBeNull();
    expect(hey.summary.errors).toBe(159);
    const ab = await runOf('ab/baseline-errors-gnuplot.tsv');
    expect([ab.summary.errors, ab.summary.non2xx, ab.summary.transportErrors]).toEqual([null, null, null]);
  });
  it('no-response runs have null latency', async () => {
    expect(Object.values((await runOf('hey/down-summary.txt')).summary.latencyMs).every((v) => v === null)).toBe(true);
    expect(Object.values((await runOf('autocannon/down.json')).summary.latencyMs).every((v) => v === null)).toBe(true);
  });
  it('computed figures say so in meta', async () => {
    for (const rel of ['hey/baseline-requests.csv', 'ab/baseline-gnuplot.tsv']) {
      const m = (await runOf(rel)).summary.meta;
      expect(m.source).toBe('computed');
      expect(m.notes?.length).toBeGreaterThan(0);
    }
    expect((await runOf('wrk/baseline-latency.txt')).summary.meta.source).toBe('printed');
  });
});
