/**
 * Small logic tests for the importers' shared helpers and the typed errors of broken input.
 */
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../../../src/ingest/errors.ts';
import { VegetaTDigest } from '../../../../src/ingest/loadtest/vegeta-tdigest.ts';
import { loadTestImporters } from '../../../../src/ingest/loadtest/index.ts';
import { commonsMathLegacyRule, k6Rule, nearestRankRule } from '../../../../src/ingest/loadtest/common/percentiles.ts';
import { NON2XX, OK } from '../../../../src/ingest/loadtest/common/rows.ts';
import { parseRfc3339 } from '../../../../src/ingest/loadtest/common/time.ts';
import { secondsOf, timelineAndSorted } from '../../../../src/ingest/loadtest/common/timeline.ts';
import { parseGoDurationMs } from '../../../../src/ingest/loadtest/common/units.ts';
import { bufferSource } from '../../../../src/ingest/source.ts';

const sorted = (xs: number[]): Float64Array => Float64Array.from(xs).sort();

async function parseText(text: string) {
  const head = Buffer.from(text);
  const scored = loadTestImporters
    .map((imp) => ({ imp, s: imp.detect(head) }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s);
  if (!scored[0]) throw new Error('not detected');
  return scored[0].imp.parse(bufferSource(head));
}

describe('percentile definitions', () => {
  const v = sorted([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  it('nearest rank', () => {
    expect(nearestRankRule(v, 50)).toBe(5);
    expect(nearestRankRule(v, 90)).toBe(9);
    expect(nearestRankRule(v, 91)).toBe(10);
    expect(nearestRankRule(v, 0)).toBe(1);
  });
  it("k6's p*(n-1) interpolation", () => {
    expect(k6Rule(v, 50)).toBeCloseTo(5.5, 12);
    expect(k6Rule(v, 90)).toBeCloseTo(9.1, 12);
  });
  it('commons-math LEGACY (JMeter dashboard)', () => {
    expect(commonsMathLegacyRule(v, 50)).toBeCloseTo(5.5, 12);
    expect(commonsMathLegacyRule(v, 90)).toBeCloseTo(9.9, 12);
    expect(commonsMathLegacyRule(v, 99)).toBe(10); // position 10.89 >= n
    expect(commonsMathLegacyRule(v, 5)).toBe(1); // position 0.55 < 1
  });
});

describe('vegeta t-digest', () => {
  it('is exact for small inputs (every sample its own centroid)', () => {
    const td = new VegetaTDigest(100);
    for (const x of [5, 1, 4, 2, 3]) td.add(x);
    expect(td.quantile(0)).toBe(1);
    expect(td.quantile(1)).toBe(5);
    expect(td.quantile(0.5)).toBe(3);
  });
  it('stays within the t-digest error on a large skewed input', () => {
    const td = new VegetaTDigest(100);
    const xs: number[] = [];
    let seed = 7;
    for (let i = 0; i < 50_000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const x = 1000 + (seed % 100000) + (i % 100 === 0 ? 8_000_000 : 0);
      xs.push(x);
      td.add(x);
    }
    const s = sorted(xs);
    expect(Math.abs(td.quantile(0.5) - nearestRankRule(s, 50)!) / nearestRankRule(s, 50)!).toBeLessThan(0.01);
    // like the Go code, the digest's max is the largest centroid mean, not necessarily the raw max
    expect(td.quantile(1)).toBeLessThanOrEqual(s[s.length - 1]!);
    expect(td.quantile(1)).toBeGreaterThanOrEqual(td.quantile(0.99));
  });
});

describe('time helpers', () => {
  it('RFC 3339 with nanoseconds, trimmed fractions and offsets', () => {
    expect(parseRfc3339('2026-11-22T01:39:41.764020722Z')).toEqual([
      Date.UTC(2026, 10, 22, 1, 39, 41) / 1000,
      764020722,
    ]);
    expect(parseRfc3339('2026-11-22T01:39:41.7Z')).toEqual([Date.UTC(2026, 10, 22, 1, 39, 41) / 1000, 700000000]);
    expect(parseRfc3339('2026-11-22T02:39:41+01:00')).toEqual([Date.UTC(2026, 10, 22, 1, 39, 41) / 1000, 0]);
    expect(parseRfc3339('yesterday')).toBeNull();
  });
  it('Go durations', () => {
    expect(parseGoDurationMs('679.121µs')).toBeCloseTo(0.679121, 12);
    expect(parseGoDurationMs('1.001s')).toBeCloseTo(1001, 9);
    expect(parseGoDurationMs('1m2.5s')).toBe(62500);
    expect(parseGoDurationMs('0s')).toBe(0);
    expect(parseGoDurationMs('abc')).toBeNull();
  });
  it('timeline has explicit zero buckets for silent seconds', () => {
    const tl = timelineAndSorted({
      second: secondsOf(Float64Array.from([0.1, 0.2, 2.5])),
      latencyMs: Float64Array.from([1, 3, 2]),
      error: Uint8Array.from([OK, NON2XX, OK]),
      rule: nearestRankRule,
      bucketMean: 'ascending',
    }).timeline;
    expect(tl.map((b) => [b.t, b.requests, b.errors])).toEqual([
      [0, 2, 1],
      [1, 0, 0],
      [2, 1, 0],
    ]);
    expect(tl[0]!.latencyMs.mean).toBe(2);
    expect(tl[1]!.latencyMs.p50).toBeNull();
  });
});

describe('broken input gives typed errors naming the line', () => {
  const row = (seq: number, ts: string) =>
    `{"attack":"a","seq":${seq},"code":200,"timestamp":"${ts}","latency":1000,"bytes_out":0,"bytes_in":1,"error":"","body":null,"method":"GET","url":"http://x","headers":{}}`;
  it('vegeta JSON: a cut line', async () => {
    const text = `${row(0, '2026-11-22T01:39:41.1Z')}\n${row(1, '2026-11-22T01:39:41.2Z').slice(0, 60)}\n`;
    await expect(parseText(text)).rejects.toMatchObject({ name: 'IngestError', code: 'malformed', line: 2 });
  });
  it('vegeta JSON: an unusual field order goes through JSON.parse and still counts', async () => {
    const odd =
      '{"code":500,"timestamp":"2026-11-22T01:39:42.1Z","latency":3000,"attack":"a","error":"500 Internal Server Error","bytes_in":0,"bytes_out":0}';
    const run = await parseText(`${row(0, '2026-11-22T01:39:41.1Z')}\n${odd}\n`);
    expect(run.summary.requests).toBe(2);
    expect(run.summary.non2xx).toBe(1);
    expect(run.timeline!.length).toBe(2);
  });
  it('vegeta CSV: a bad latency cell', async () => {
    const text =
      '1795311581764020722,200,2369162,0,40,,,a,0,GET,http://x,\n1795311581765954753,200,abc,0,40,,,a,1,GET,http://x,\n';
    await expect(parseText(text)).rejects.toMatchObject({ code: 'malformed', line: 2 });
  });
  it('k6 CSV: a quoted field never closed', async () => {
    const text = 'metric_name,timestamp,metric_value,check,error\nhttp_reqs,1795311679,1.000000,,"dial: refused\n';
    await expect(parseText(text)).rejects.toMatchObject({ code: 'malformed', line: 2 });
  });
  it('k6 JSON without any HTTP request is no run', async () => {
    const text =
      '{"type":"Metric","data":{"name":"vus","type":"gauge"},"metric":"vus"}\n{"metric":"vus","type":"Point","data":{"time":"2026-11-22T01:41:20.959325241Z","value":1,"tags":{}}}\n';
    await expect(parseText(text)).rejects.toMatchObject({ code: 'no-run' });
  });
  it('JMeter JTL with a header only is no run', async () => {
    const text =
      'timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n';
    await expect(parseText(text)).rejects.toMatchObject({ code: 'no-run' });
  });
  it('JMeter JTL CSV: a non-numeric elapsed names its line', async () => {
    const text =
      'timeStamp,elapsed,label,responseCode,success\n1795313275160,23,GET,200,true\n1795313275161,x,GET,200,true\n';
    await expect(parseText(text)).rejects.toMatchObject({ code: 'malformed', line: 3 });
  });
  it('ghz stderr is no run', async () => {
    const e = await parseText('rpc error: code = Unavailable desc = connection error\n').catch((x) => x);
    expect(e).toBeInstanceOf(IngestError);
    expect(e.code).toBe('no-run');
  });
  it('vegeta report of zero requests is no run', async () => {
    const text =
      'Requests      [total, rate, throughput]         0, 0.00, 0.00\nDuration      [total, attack, wait]             0s, 0s, 0s\n';
    await expect(parseText(text)).rejects.toMatchObject({ code: 'no-run' });
  });
});

describe('detection needs content, not names', () => {
  it('no load-test importer claims plain text or an empty file', () => {
    for (const t of ['', 'hello world\n', '{"a":1}\n', 'a,b,c\n1,2,3\n']) {
      for (const imp of loadTestImporters) expect(imp.detect(Buffer.from(t))).toBe(0);
    }
  });
});
