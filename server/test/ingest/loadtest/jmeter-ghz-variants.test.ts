/**
 * JMeter and ghz outputs as users have them: console lines behind a log prefix or in a decimal-comma
 * locale, a JTL cut mid-row, a JTL longer than the dashboard's statistic window, ghz summaries cut
 * before their status list. Every variant is made here by a script from a real file (the
 * reference samples, fixtures/loadtests/ghz), never edited by hand.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';
import { LOADTEST_FIXTURES as FIXTURES, LOADTEST_SAMPLES as SAMPLES } from '../../helpers/loadtest-expected.ts';

async function read(bytes: Buffer | string): Promise<LoadTestRun> {
  const p = await ingest({ name: 'upload', bytes: Buffer.from(bytes) });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  expect(p.runs).toHaveLength(1);
  return p.runs[0]!;
}
const sample = (rel: string) => readFileSync(join(SAMPLES, rel), 'utf8');

describe('JMeter console summariser', () => {
  const console = sample('jmeter/baseline-console.txt');

  it('reads the lines behind a log prefix (Maven plugin) as the plain ones', async () => {
    const plain = await read(console);
    const maven = console
      .split('\n')
      .map((l) => `[INFO] ${l}`)
      .join('\n');
    expect((await read(maven)).summary).toEqual(plain.summary);
  });

  it('two runs’ console logs in one file are two runs, not read as the last one', async () => {
    const both = await ingest({ name: 'upload', bytes: Buffer.from(console + sample('jmeter/fast-json-console.txt')) });
    if (both.kind !== 'loadtest') throw new Error('not a load test');
    const second = await read(sample('jmeter/fast-json-console.txt'));
    expect(both.runs.map((r) => r.summary.requests)).toEqual([
      (await read(console)).summary.requests,
      second.summary.requests,
    ]);
    expect(both.runs[1]!.summary.latencyMs).toEqual(second.summary.latencyMs);
  });

  it('reads a decimal-comma rate (a JVM in a de_DE locale prints "358,9/s")', async () => {
    const plain = await read(console);
    const comma = console.replace(/= +([\d]+)\.(\d)\/s/g, (m, a, b) => m.replace(`${a}.${b}`, `${a},${b}`));
    expect(comma).not.toBe(console);
    const s = (await read(comma)).summary;
    expect(s.rps).toBe(plain.summary.rps);
    expect(s.rps).toBe(358.9);
  });
});

describe('JMeter JTL', () => {
  it('a CSV cut mid-row is read without its last row, and says so', async () => {
    const text = sample('jmeter/baseline-csv.jtl');
    const full = await read(text);
    const cut = text.slice(0, text.lastIndexOf('\n', text.length - 2) + 30);
    const s = (await read(cut)).summary;
    expect(s.requests).toBe(full.summary.requests! - 1);
    expect(s.meta.notes!.at(-1)).toMatch(/cut off: its last row \(line \d+\) is incomplete/);
  });

  it('percentiles of a JTL over 20,000 samples see the last 20,000, as the dashboard does', async () => {
    // three real JTLs of one layout (no multi-line fields), one after the other, four times: > 20,000 rows
    const parts = ['baseline', 'async-log', 'fast-json'].map((n) =>
      sample(`jmeter/${n}-csv.jtl`).trimEnd().split('\n'),
    );
    const rows: string[] = [];
    for (let k = 0; k < 4; k++) for (const p of parts) rows.push(...p.slice(1));
    const a = parts[0]!;
    expect(rows.length).toBeGreaterThan(20_000);
    const s = (await read([a[0], ...rows].join('\n'))).summary;
    const elapsed = rows.map((r) => Number(r.split(',')[1]));
    const last = elapsed.slice(-20_000).sort((x, y) => x - y);
    // commons-math LEGACY: position p(n+1)/100, linear interpolation
    const legacy = (v: number[], p: number) => {
      const pos = (p * (v.length + 1)) / 100;
      if (pos < 1) return v[0]!;
      if (pos >= v.length) return v[v.length - 1]!;
      const lo = Math.floor(pos);
      return v[lo - 1]! + (pos - lo) * (v[lo]! - v[lo - 1]!);
    };
    expect(s.latencyMs.p50).toBe(legacy(last, 50));
    expect(s.latencyMs.p90).toBe(legacy(last, 90));
    expect(s.latencyMs.p99).toBe(legacy(last, 99));
    expect(s.latencyMs.max).toBe(Math.max(...elapsed));
    expect(s.requests).toBe(rows.length);
  });
});

describe('ghz summary text', () => {
  const text = readFileSync(join(FIXTURES, 'ghz/ok-summary.txt'), 'utf8');

  it('cut before its status list: latency as printed, errors unknown', async () => {
    const full = (await read(text)).summary;
    const s = (await read(text.slice(0, text.indexOf('Status code distribution:')))).summary;
    expect(s.errors).toBeNull();
    expect(s.latencyMs).toEqual(full.latencyMs);
    expect(s.requests).toBe(2000);
  });

  it('cut before its latency distribution: Fastest, Average and Slowest as printed', async () => {
    const s = (await read(text.slice(0, text.indexOf('Latency distribution:')))).summary;
    expect([s.latencyMs.min, s.latencyMs.mean, s.latencyMs.max]).toEqual([0.09, 0.28, 4.48]);
    expect(s.latencyMs.p50).toBeNull();
    expect(s.errors).toBeNull();
  });
});
