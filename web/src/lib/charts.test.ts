/// <reference types="node" />
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTestImporters } from '../../../server/src/ingest/loadtest/index.ts';
import { fileSource } from '../../../server/src/ingest/source.ts';
import { achievedRate, band, loadModel, percentileCurve, relativeSeries } from './charts.ts';

// The demo's real runs (fixtures/demo): six wrk runs of a stage (closed loop, 32 connections) and its
// vegeta run at a fixed 400 requests/s.
const demo = new URL('../../../fixtures/demo/baseline/', import.meta.url).pathname;
const have = existsSync(`${demo}run-6/wrk.txt`);

async function read(format: string, path: string) {
  const imp = loadTestImporters.find((i) => (i.formats as readonly string[]).includes(format));
  if (!imp) throw new Error(`no importer ${format}`);
  const run = await imp.parse(fileSource(path), path);
  return { ...run, format };
}

describe.skipIf(!have)('load-test charts by load model, runs as a band', () => {
  it('tells a closed loop from a fixed rate, as the stage table does', async () => {
    const wrk = await read('wrk', `${demo}run-1/wrk.txt`);
    const vegeta = await read('vegeta-json', `${demo}fixed-rate/vegeta.jsonl`);
    expect(loadModel(wrk)).toMatchObject({ fixed: false, title: 'Closed loop, 32 connections (wrk)' });
    expect(loadModel(vegeta)).toMatchObject({ fixed: true, rate: null, title: 'Fixed rate (vegeta)' });
    expect(loadModel(wrk).key).not.toBe(loadModel(vegeta).key);
  });

  it('six runs are one band: the median and the range at each percentile wrk printed', async () => {
    const runs = await Promise.all([1, 2, 3, 4, 5, 6].map((k) => read('wrk', `${demo}run-${k}/wrk.txt`)));
    const curves = runs.map((r) => percentileCurve(r.latencyDistribution ?? []));
    const b = band(curves);
    // wrk --latency prints 50, 75, 90 and 99 %.
    expect(b.map((p) => p.n)).toEqual([6, 6, 6, 6]);
    for (const [i, p] of b.entries()) {
      const at = curves.map((c) => c[i]![1]).sort((x, y) => x - y);
      expect(p.lo).toBe(at[0]);
      expect(p.hi).toBe(at[5]);
      expect(p.median).toBe((at[2]! + at[3]!) / 2);
    }
  });

  it('a fixed rate held in every full second is said, not charted', async () => {
    const vegeta = await read('vegeta-json', `${demo}fixed-rate/vegeta.jsonl`);
    const t = vegeta.timeline ?? [];
    expect(t.length).toBeGreaterThan(1);
    const held = achievedRate([t], 400)!;
    expect(held.held).toBe(true);
    expect(held.min).toBeGreaterThanOrEqual(392);
    // Against a rate it did not reach, it is not held.
    expect(achievedRate([t], 500)!.held).toBe(false);
    // One run is a band of one: no range.
    expect(band([relativeSeries(t, (x) => x.rps)]).every((p) => p.n === 1 && p.lo === p.hi)).toBe(true);
  });
});
