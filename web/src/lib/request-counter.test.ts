/**
 * The runtime timeline's QPS when the load tool prints no per-second timeline (wrk): the service's own
 * request counter, on the demo's real metrics windows (fixtures/demo/<stage>/run-1/metrics.json, the
 * service's /metrics scraped every second by stagediff capture). Rates are checked against the raw
 * scrapes, summed over the counter's routes here, independently of the parser.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from '../../../server/src/ingest/metrics/index.ts';
import { requestCounter } from './request-counter.ts';

const demo = new URL('../../../fixtures/demo/', import.meta.url);

interface RawFile {
  scrapes: { t: number; error: string | null }[];
  series: { name: string; type: string; labels: Record<string, string>; values?: (number | null)[] }[];
}

describe('requestCounter', () => {
  for (const stage of ['baseline', 'pooled']) {
    it(`${stage}: demo_http_requests_total, summed over routes, per second between scrapes`, () => {
      const bytes = readFileSync(new URL(`${stage}/run-1/metrics.json`, demo));
      const raw = JSON.parse(bytes.toString('utf8')) as RawFile;
      const model = parse(bytes);
      const found = requestCounter({ series: model.series } as Parameters<typeof requestCounter>[0]);
      expect(found?.name).toBe('demo_http_requests_total');
      const routes = raw.series.filter((s) => s.name === 'demo_http_requests_total');
      expect(routes.length).toBeGreaterThan(0);
      const total = raw.scrapes.map((_, i) => routes.reduce((a, s) => a + (s.values![i] ?? 0), 0));
      expect(found!.rates[0]).toBeNull();
      for (let i = 1; i < raw.scrapes.length; i++) {
        const dt = (raw.scrapes[i]!.t - raw.scrapes[i - 1]!.t) / 1000;
        expect(found!.rates[i]).toBeCloseTo((total[i]! - total[i - 1]!) / dt, 6);
      }
      // The wrk run's printed req/s is the same service's rate over a longer window: close, not equal.
      const wrk = Number(
        /Requests\/sec:\s+([\d.]+)/.exec(readFileSync(new URL(`${stage}/run-1/wrk.txt`, demo), 'utf8'))![1],
      );
      const mean = (total.at(-1)! - total[0]!) / ((raw.scrapes.at(-1)!.t - raw.scrapes[0]!.t) / 1000);
      expect(mean / wrk).toBeGreaterThan(0.8);
      expect(mean / wrk).toBeLessThan(1.25);
    });
  }

  it('never the scrapes of /metrics itself, and null without a request counter', () => {
    const counter = (name: string, rates: (number | null)[], windowDelta: number) => ({
      name,
      labels: {},
      type: 'counter' as const,
      help: '',
      values: [],
      rates,
      windowDelta,
      windowRate: null,
    });
    const only = (series: ReturnType<typeof counter>[]) =>
      requestCounter({ series } as unknown as Parameters<typeof requestCounter>[0]);
    expect(only([counter('promhttp_metric_handler_requests_total', [null, 1], 1)])).toBeNull();
    expect(only([counter('go_gc_cycles_total_gc_cycles_total', [null, 3], 3)])).toBeNull();
    expect(
      only([
        counter('promhttp_metric_handler_requests_total', [null, 1], 1),
        counter('http_requests_total', [null, 900], 900),
        counter('grpc_server_requests_total', [null, 20], 20),
      ]),
    ).toEqual({ name: 'http_requests_total', rates: [null, 900] });
  });
});
