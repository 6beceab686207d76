/**
 * Metrics files (`metrics.json`, written by `stagediff capture --metrics`) of real captures
 * (fixtures/metrics: the demo service's Prometheus and expvar endpoints, a client_golang service),
 * detected by content; counters become rates, histograms window deltas and quantiles; bad files are
 * refused with a typed error.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import { histogramQuantile, parse } from '../../../src/ingest/metrics/index.ts';
import type { CaptureRecord } from '../../../src/model/capture.ts';
import type { MetricsFile, MetricsModel } from '../../../src/model/metrics.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const dir = `${fixturesDir}metrics/`;

describe.each(['demo-prometheus', 'demo-expvar', 'client-golang'])('%s capture', (name) => {
  const raw = JSON.parse(readFileSync(`${dir}${name}/metrics.json`, 'utf8')) as MetricsFile;
  const load = async (): Promise<MetricsModel> => {
    const p = await ingest({ name: 'upload', path: `${dir}${name}/metrics.json` });
    if (p.kind !== 'metrics') throw new Error(p.kind);
    return p.metrics;
  };

  it('is detected by content; one scrape a second over the window the capture record gives', async () => {
    const m = await load();
    const rec = JSON.parse(readFileSync(`${dir}${name}/capture.json`, 'utf8')) as CaptureRecord;
    const f = rec.runs[0]!.files.find((x) => x.role === 'metrics')!;
    expect(f.path).toBe('metrics.json');
    expect(rec.metrics).toBe(m.source.url);
    expect(m.times.map(Math.round)).toEqual([0, 1, 2, 3, 4]);
    expect(m.failedScrapes).toBe(0);
    expect(Math.abs(m.windowSeconds - rec.runs[0]!.window!.seconds)).toBeLessThan(0.5);
    expect(m.series.length).toBe(raw.series.length);
  });

  it('counters: the rate of each interval and the increase over the window; gauges: their range', async () => {
    const m = await load();
    let counters = 0;
    for (const s of m.series) {
      if (s.type === 'counter') {
        counters++;
        const v = s.values as number[];
        expect(s.windowDelta).toBe(v[v.length - 1]! - v[0]!); // no reset in a live service's window
        for (let i = 1; i < v.length; i++)
          expect(s.rates[i]).toBeCloseTo((v[i]! - v[i - 1]!) / (m.times[i]! - m.times[i - 1]!), 9);
        expect(s.windowRate).toBeCloseTo(s.windowDelta! / (m.times[m.times.length - 1]! - m.times[0]!), 9);
      } else if (s.type === 'gauge') {
        const v = s.values as number[];
        expect([s.stats.min, s.stats.max, s.stats.last]).toEqual([Math.min(...v), Math.max(...v), v[v.length - 1]]);
      }
    }
    expect(counters).toBeGreaterThan(3);
  });

  it('histograms: the window’s observations per bucket, from the first scrape to the last', async () => {
    const m = await load();
    for (const s of m.series) {
      if (s.type !== 'histogram') continue;
      const r = raw.series.find((x) => x.name === s.name && JSON.stringify(x.labels) === JSON.stringify(s.labels))!;
      if (r.type !== 'histogram') throw new Error(r.type);
      const n = r.count.length - 1;
      expect(s.windowCount).toBe(r.count[n]! - r.count[0]!);
      expect(s.windowCounts.reduce((a, b) => a + b, 0)).toBe(s.windowCount);
      // bucket by bucket, the cumulative counts' increase
      let cum = 0;
      s.bounds.forEach((_, i) => {
        cum += s.windowCounts[i]!;
        expect(cum).toBe(r.buckets[n]![i]! - r.buckets[0]![i]!);
      });
      expect(s.perInterval[0]).toBeNull();
      expect(s.perInterval.slice(1).reduce((a, x) => a + x!.count, 0)).toBe(s.windowCount);
    }
  });
});

describe('highlights', () => {
  it('the demo service (Prometheus names of runtime/metrics)', () => {
    const m = parse(readFileSync(`${dir}demo-prometheus/metrics.json`));
    const delta = (n: string) => {
      const s = m.series.find((x) => x.name === n)!;
      return s.type === 'counter' ? s.windowDelta : null;
    };
    expect(m.highlights.gcCycles).toBe(delta('go_gc_cycles_total_gc_cycles_total'));
    expect(m.highlights.allocatedBytes).toBe(delta('go_gc_heap_allocs_bytes_total'));
    expect(m.highlights.gcCpuSeconds).toBe(delta('go_cpu_classes_gc_total_cpu_seconds_total'));
    expect(m.highlights.goroutines?.max).toBeGreaterThan(10);
    const sched = m.series.find((x) => x.name === 'go_sched_latencies_seconds')!;
    expect(sched.type === 'histogram' && sched.window.p99).toBe(m.highlights.schedLatencyP99Seconds);
    expect(m.highlights.schedLatencyP99Seconds).toBeGreaterThan(0);
  });

  it('expvar (memstats)', () => {
    const m = parse(readFileSync(`${dir}demo-expvar/metrics.json`));
    const raw = JSON.parse(readFileSync(`${dir}demo-expvar/metrics.json`, 'utf8')) as MetricsFile;
    const v = (n: string) => (raw.series.find((x) => x.name === n)! as { values: number[] }).values;
    const d = (n: string) => v(n)[v(n).length - 1]! - v(n)[0]!;
    expect(m.highlights.allocatedBytes).toBe(d('memstats.TotalAlloc'));
    expect(m.highlights.gcCycles).toBe(d('memstats.NumGC'));
    expect(m.highlights.gcPauseSeconds).toBe(d('memstats.PauseTotalNs') / 1e9);
    expect(m.highlights.goroutines).toBeNull();
  });

  it('client_golang (go_goroutines, go_memstats_*)', () => {
    const m = parse(readFileSync(`${dir}client-golang/metrics.json`));
    expect(m.highlights.goroutines?.last).toBeGreaterThan(0);
    expect(m.highlights.heapBytes?.max).toBeGreaterThan(0);
    expect(m.highlights.allocatedBytes).toBeGreaterThan(0);
  });
});

describe('histogram quantiles (Prometheus histogram_quantile)', () => {
  it.each([
    [0.5, [1, 2, 4], [0, 10, 0, 0], 1.5], // rank 5 of 10 in (1, 2]
    [0.99, [1, 2, 4], [10, 0, 0, 0], 0.99], // first bucket: from 0
    [0.5, [1, 2, 4], [0, 0, 0, 7], 4], // in the +Inf bucket: the last finite bound
    [0.25, [0.1, 0.2], [2, 2, 0], 0.05], // rank 1 of 4: half-way into (0, 0.1]
  ])('q=%s bounds %j counts %j → %s', (q, bounds, counts, want) => {
    expect(histogramQuantile(q, bounds, counts)).toBeCloseTo(want, 12);
  });

  it('no observation: null', () => {
    expect(histogramQuantile(0.5, [1], [0, 0])).toBeNull();
  });
});

it('a counter that goes down was reset: the new value is the increase, as Prometheus counts it', () => {
  const f: MetricsFile = {
    format: 'stagediff-metrics',
    version: 1,
    source: { url: 'http://x/metrics', kind: 'prometheus' },
    intervalMs: 1000,
    start: '2026-01-01T00:00:00.000Z',
    scrapes: [0, 1000, 2000, 3000].map((t) => ({ t, ms: 1, error: null })),
    series: [{ name: 'c', labels: {}, type: 'counter', help: '', values: [10, 15, 3, 8] }],
  };
  const s = parse(Buffer.from(JSON.stringify(f))).series[0]!;
  expect(s.type === 'counter' && [s.windowDelta, s.rates, s.windowRate]).toEqual([13, [null, 5, 3, 5], 13 / 3]);
});

describe('bad files', () => {
  const good = JSON.parse(readFileSync(`${dir}demo-expvar/metrics.json`, 'utf8')) as MetricsFile;
  const refuse = (f: unknown) => {
    try {
      parse(Buffer.from(JSON.stringify(f)));
    } catch (e) {
      expect(e).toBeInstanceOf(IngestError);
      return e as IngestError;
    }
    throw new Error('accepted');
  };

  it('a later version is named', () => {
    const e = refuse({ ...good, version: 2 });
    expect([e.code, e.message]).toEqual(['unsupported', 'metrics file version 2: this stagediff reads version 1']);
  });

  it.each([
    ['a series shorter than the scrapes', (f: MetricsFile) => (f.series[0] as { values: unknown[] }).values.pop()],
    ['a value that is not a number', (f: MetricsFile) => ((f.series[0] as { values: unknown[] }).values[0] = 'NaN')],
    ['scrapes out of order', (f: MetricsFile) => f.scrapes.reverse()],
    ['a series of an unknown type', (f: MetricsFile) => ((f.series[0] as { type: string }).type = 'exotic')],
    ['labels that are not strings', (f: MetricsFile) => ((f.series[0] as { labels: unknown }).labels = { a: 1 })],
  ])('%s is refused as malformed', (_, damage) => {
    const f = structuredClone(good);
    damage(f);
    expect(refuse(f).code).toBe('malformed');
  });

  it('no scrape at all holds nothing', () => {
    expect(refuse({ ...good, scrapes: [], series: [] }).code).toBe('no-run');
  });
});
