/// <reference types="node" />
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadTestImporters } from '../../../server/src/ingest/loadtest/index.ts';
import { prometheusImporter } from '../../../server/src/ingest/loadtest/prometheus.ts';
import { bufferSource, fileSource } from '../../../server/src/ingest/source.ts';
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
    // an imported stage's requests counter is the traffic clients sent, neither loop of a load tool
    const reset = JSON.parse(
      readFileSync(new URL('../../../fixtures/prometheus/counter-reset.json', import.meta.url), 'utf8'),
    ) as { data: { result: { values: [number, string][] }[] } };
    const [t0, t1] = [reset.data.result[0]!.values[0]![0], reset.data.result[0]!.values[7]![0]];
    const record = {
      schema: 'stagediff-requests/1',
      url: 'http://127.0.0.1:49090/',
      query: 'demo_http_requests_total',
      evaluated: 'demo_http_requests_total[60000ms]',
      from: new Date(t0 * 1000).toISOString(),
      to: new Date(t1 * 1000).toISOString(),
      run: 1,
      runs: 1,
      answer: reset,
    };
    const served = await prometheusImporter.parse(
      bufferSource(Buffer.from(JSON.stringify(record))),
      'run-1-requests.json',
    );
    expect(loadModel({ ...served, format: 'prometheus' })).toMatchObject({
      fixed: true,
      title: 'Served traffic (a Prometheus requests counter)',
    });
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
