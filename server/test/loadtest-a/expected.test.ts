/**
 * Every wrk, wrk2, hey, ab, bombardier and autocannon sample in ../shared/samples/loadtests is
 * checked against expected.json: detected format (content only), every figure within its
 * tolerance, alternatives, bounds, timeline/distribution presence and the printed distribution
 * points; files that hold no run must give an IngestError.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../src/ingest/errors.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';
import { SAMPLES, best, close, parseFile } from './helpers.ts';

interface Expected {
  format?: string;
  formatAlternatives?: string[];
  expectError?: boolean;
  acceptError?: boolean;
  mayBeUnsupported?: boolean;
  requests?: number;
  durationSeconds?: number;
  rps?: number;
  errors?: number;
  non2xx?: number;
  transportErrors?: number;
  latencyMs?: Record<string, number>;
  alternatives?: Record<string, number[]>;
  bounds?: Record<string, [number, number]>;
  hasTimeline?: boolean;
  hasDistribution?: boolean;
  distributionPrinted?: { percentile: number; ms: number }[];
  tolerance?: number;
}

const TOOLS = ['wrk', 'wrk2', 'hey', 'ab', 'bombardier', 'autocannon'];
const all = JSON.parse(readFileSync(join(SAMPLES, 'expected.json'), 'utf8')) as Record<string, Expected>;
const mine = Object.entries(all).filter(([k]) => TOOLS.includes(k.split('/')[0]!));

function field(run: LoadTestRun, name: string): number | null {
  const s = run.summary;
  if (name.startsWith('latencyMs.')) return s.latencyMs[name.slice(10) as keyof typeof s.latencyMs];
  return (s as unknown as Record<string, number | null>)[name] ?? null;
}

function checkFigures(run: LoadTestRun, e: Expected): void {
  const tol = e.tolerance ?? 0.005;
  for (const k of ['requests', 'durationSeconds', 'rps', 'errors', 'non2xx', 'transportErrors'] as const) {
    const want = e[k];
    if (want === undefined) continue;
    const got = field(run, k);
    expect(close(got, want, tol), `${k}: got ${got}, want ${want}`).toBe(true);
  }
  for (const [k, want] of Object.entries(e.latencyMs ?? {})) {
    const got = field(run, `latencyMs.${k}`);
    expect(close(got, want, tol), `latencyMs.${k}: got ${got}, want ${want}`).toBe(true);
  }
  for (const [k, options] of Object.entries(e.alternatives ?? {})) {
    const got = field(run, k);
    expect(options.some((o) => close(got, o, tol)), `${k}: got ${got}, want one of ${options.join(', ')}`).toBe(true);
  }
  for (const [k, [lo, hi]] of Object.entries(e.bounds ?? {})) {
    const got = field(run, k);
    expect(got !== null && got >= lo && got <= hi, `${k}: got ${got}, want within [${lo}, ${hi}]`).toBe(true);
  }
  if (e.hasTimeline === true) expect(run.timeline?.length ?? 0).toBeGreaterThan(0);
  if (e.hasTimeline === false) expect(run.timeline).toBeNull();
  if (e.hasDistribution === true) expect(run.latencyDistribution).not.toBeNull();
  if (e.hasDistribution === false) expect(run.latencyDistribution).toBeNull();
  for (const pt of e.distributionPrinted ?? []) {
    const got = run.latencyDistribution?.find((d) => Math.abs(d.percentile - pt.percentile) < 1e-9);
    expect(got, `distribution point ${pt.percentile}%`).toBeDefined();
    expect(close(got!.ms, pt.ms, tol), `distribution ${pt.percentile}%: got ${got!.ms}, want ${pt.ms}`).toBe(true);
  }
  // Summary invariants of the contract.
  const s = run.summary;
  if (s.errors !== null) expect(s.errors).toBe((s.transportErrors ?? 0) + (s.non2xx ?? 0));
  if (run.timeline) {
    run.timeline.forEach((b, i) => expect(b.t).toBe(i));
    expect(run.timeline.reduce((a, b) => a + b.requests, 0)).toBe(s.requests);
  }
}

describe('group-A samples against expected.json', () => {
  it('covers every file of the six tools', () => {
    const onDisk = TOOLS.flatMap((t) => readdirSync(join(SAMPLES, t)).map((f) => `${t}/${f}`));
    expect(onDisk.length).toBeGreaterThan(70);
    expect(onDisk.filter((f) => !(f in all))).toEqual([]);
    expect(mine.length).toBe(onDisk.length);
  });

  for (const [rel, e] of mine) {
    it(rel, async () => {
      const path = join(SAMPLES, rel);
      if (e.expectError) {
        const { importer } = best(path);
        expect(importer, 'a group-A importer should recognise this tool output').not.toBeNull();
        const err = await parseFile(path).then(
          () => null,
          (x: unknown) => x,
        );
        expect(err).toBeInstanceOf(IngestError);
        expect((err as IngestError).code).toBe('no-run');
        return;
      }
      let run: LoadTestRun;
      try {
        run = await parseFile(path);
      } catch (x) {
        if ((e.acceptError || e.mayBeUnsupported) && x instanceof IngestError) return;
        throw x;
      }
      if (e.format) expect(run.format).toBe(e.format);
      if (e.formatAlternatives) expect(e.formatAlternatives).toContain(run.format);
      expect(run.kind).toBe('loadtest');
      checkFigures(run, e);
    });
  }
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
