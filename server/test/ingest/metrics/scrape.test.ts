/**
 * The Prometheus text parser against client_golang's own reading (expfmt) of the same real scrapes
 * (fixtures/metrics: a client_golang-instrumented service and the demo service's hand-written
 * endpoint), and expvar's JSON against a direct reading of the file.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MetricsRecorder, ScrapeError, parseExpvar, parsePrometheusText } from '../../../src/ingest/metrics/scrape.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const dir = `${fixturesDir}metrics/`;

interface ExpfmtSample {
  labels: Record<string, string>;
  value?: number | string;
  buckets?: Record<string, number>;
  quantiles?: Record<string, number>;
  sum?: number;
  count?: number;
}
type Expfmt = Record<string, { type: string; help: string; metrics: ExpfmtSample[] }>;

const num = (v: number | string | undefined) =>
  v === '+Inf'
    ? Number.POSITIVE_INFINITY
    : v === '-Inf'
      ? Number.NEGATIVE_INFINITY
      : v === 'NaN'
        ? Number.NaN
        : Number(v);

describe.each(['client-golang', 'demo'])('%s.prom against client_golang’s expfmt', (name) => {
  const ours = parsePrometheusText(readFileSync(`${dir}${name}.prom`, 'utf8'));
  const ref = JSON.parse(readFileSync(`${dir}expected/${name}.expfmt.json`, 'utf8')) as Expfmt;

  it('finds every family and series, with their types and help', () => {
    const families = new Set(ours.map((s) => s.name));
    expect([...families].sort()).toEqual(Object.keys(ref).sort());
    for (const [fam, f] of Object.entries(ref)) {
      const series = ours.filter((s) => s.name === fam);
      expect([fam, series.length]).toEqual([fam, f.metrics.length]);
      for (const s of series) {
        expect([fam, s.value.type]).toEqual([fam, f.type.toLowerCase()]);
        expect([fam, s.help]).toEqual([fam, f.help]);
      }
    }
  });

  it('reads every value, bucket, quantile, sum and count as expfmt does', () => {
    let figures = 0;
    for (const [fam, f] of Object.entries(ref)) {
      for (const m of f.metrics) {
        const s = ours.find((x) => x.name === fam && JSON.stringify(x.labels) === JSON.stringify(m.labels));
        expect(s, `${fam} ${JSON.stringify(m.labels)}`).toBeDefined();
        const v = s!.value;
        if (v.type === 'histogram') {
          const want = Object.entries(m.buckets ?? {})
            .map(([b, c]) => [Number(b), c] as const)
            .sort((a, b) => a[0] - b[0]);
          expect(v.bounds).toEqual(want.map((x) => x[0]));
          expect(v.buckets).toEqual(want.map((x) => x[1]));
          expect([v.sum, v.count]).toEqual([m.sum, m.count]);
          figures += want.length + 2;
        } else if (v.type === 'summary') {
          const want = Object.entries(m.quantiles ?? {})
            .map(([q, x]) => [Number(q), x] as const)
            .sort((a, b) => a[0] - b[0]);
          const got = v.quantiles.map((q, i) => [q, v.values[i]] as const).sort((a, b) => a[0] - b[0]);
          expect(got).toEqual(want);
          expect([v.sum, v.count]).toEqual([m.sum, m.count]);
          figures += want.length + 2;
        } else {
          expect([fam, v.value]).toEqual([fam, num(m.value)]);
          figures++;
        }
      }
    }
    expect(figures).toBeGreaterThan(100);
  });
});

describe('expvar', () => {
  it('every number of /debug/vars is a series named by its path; memstats’ cumulative fields are counters', () => {
    const text = readFileSync(`${dir}demo-vars.json`, 'utf8');
    const json = JSON.parse(text);
    const series = parseExpvar(text);
    const byName = new Map(series.map((s) => [s.name, s.value]));
    expect(byName.get('memstats.HeapAlloc')).toEqual({ type: 'gauge', value: json.memstats.HeapAlloc });
    expect(byName.get('memstats.TotalAlloc')).toEqual({ type: 'counter', value: json.memstats.TotalAlloc });
    expect(byName.get('memstats.NumGC')).toEqual({ type: 'counter', value: json.memstats.NumGC });
    const route = Object.keys(json.demo_http)[0]!;
    expect(byName.get(`demo_http.${route}.requests`)).toEqual({ type: 'gauge', value: json.demo_http[route].requests });
    // arrays (the PauseNs ring, BySize, cmdline) are left out
    expect(
      [...byName.keys()].some((n) => n.includes('PauseNs') || n.includes('BySize') || n.startsWith('cmdline')),
    ).toBe(false);
    const numbers = Object.values(json.memstats).filter((v) => typeof v === 'number').length;
    expect(series.filter((s) => s.name.startsWith('memstats.')).length).toBe(numbers);
  });
});

describe('bad input', () => {
  it.each([
    ['no value', 'up\n', /line 1: "" is not a sample value|expected a value/],
    ['a label without quotes', 'x{a=b} 1\n', /line 1: label a has no quoted value/],
    ['an unterminated label', 'x{a="b} 1\n', /line 1: unterminated label value/],
    ['an unknown type', '# TYPE x thing\nx 1\n', /line 1: unknown metric type "thing"/],
    ['a bucket without le', '# TYPE h histogram\nh_bucket 1\n', /line 2: a histogram bucket without le/],
    ['HTML', '<html><body>hi</body></html>', /line 1: no metric name/],
  ])('%s is refused naming the line', (_, text, re) => {
    expect(() => parsePrometheusText(text)).toThrow(ScrapeError);
    expect(() => parsePrometheusText(text)).toThrow(re);
  });

  it('escapes in label values and help are read', () => {
    const [s] = parsePrometheusText('# HELP x a\\\\b\\nc\nx{p="a\\"b\\\\c\\nd"} 2 1700000000000\n');
    expect(s!.labels).toEqual({ p: 'a"b\\c\nd' });
    expect(s!.help).toBe('a\\b\nc');
    expect(s!.value).toEqual({ type: 'untyped', value: 2 });
  });

  it('the recorder keeps a failed scrape as a gap, never as a value', () => {
    const r = new MetricsRecorder('http://x/metrics', 1000, 0);
    r.add(0, 5, '# TYPE c counter\nc 1\n');
    r.add(1000, 5, null, 'connection refused');
    r.add(2000, 5, 'not metrics at all {');
    r.add(3000, 5, '# TYPE c counter\nc 4\n');
    const f = r.file();
    expect(f.scrapes.map((s) => s.error === null)).toEqual([true, false, false, true]);
    expect(f.series).toEqual([{ name: 'c', labels: {}, type: 'counter', help: '', values: [1, null, null, 4] }]);
  });
});
