/**
 * k6's end-of-test console summary, both layouts, read from real runs (fixtures/loadtests/k6/
 * console-*.txt) and checked against k6's own --summary-export of the same run: every figure equal
 * within the precision the console printed it with.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const k6 = (f: string) => `${fixturesDir}loadtests/k6/${f}`;

async function read(bytes: Buffer): Promise<LoadTestRun> {
  // a neutral name: detection must work on content alone
  const p = await ingest({ name: 'upload', bytes });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  expect(p.runs).toHaveLength(1);
  return p.runs[0]!;
}

/** ms per unit of a printed k6 duration token, and the token's last printed digit in ms. */
function printedPrecisionMs(token: string): number {
  const m = /^[\d]+(?:\.(\d+))?(ns|µs|ms|s)$/.exec(token);
  if (!m) throw new Error(`not a k6 duration: ${token}`);
  const unitMs = { ns: 1e-6, µs: 1e-3, ms: 1, s: 1000 }[m[2] as 'ns' | 'µs' | 'ms' | 's'];
  return 10 ** -(m[1]?.length ?? 0) * unitMs;
}

const cases = [
  { file: 'console-v1-ok', layout: 'grouped', p99: true },
  { file: 'console-v1-errors-full', layout: 'grouped', p99: false },
  { file: 'console-v0-ok', layout: 'classic', p99: true },
  { file: 'console-v0-errors', layout: 'classic', p99: false },
  // k6 v0.50: http_req_failed as "5.00% ✓ 5 ✗ 95" (✓ counts the failed requests)
  { file: 'console-v050-errors', layout: 'classic', p99: false },
];

describe('k6 console summary', () => {
  for (const c of cases) {
    it(`${c.file}.txt equals its --summary-export within the printed precision`, async () => {
      const text = readFileSync(k6(`${c.file}.txt`));
      const exp = JSON.parse(readFileSync(k6(`${c.file}-summary.json`), 'utf8')).metrics;
      const run = await read(text);
      expect(run.format).toBe('k6-stdout');
      expect(run.summary.meta.layout).toBe(c.layout);
      const s = run.summary;
      expect(s.requests).toBe(exp.http_reqs.count);
      expect(Math.abs(s.rps! - exp.http_reqs.rate)).toBeLessThanOrEqual(5e-7); // printed with 6 decimals
      expect(s.errors).toBe(exp.http_req_failed.passes);
      if (s.errors === 0) expect([s.transportErrors, s.non2xx]).toEqual([0, 0]);
      else expect([s.transportErrors, s.non2xx]).toEqual([null, null]);
      // every column of the http_req_duration line, against the export
      const line = text
        .toString('utf8')
        .split('\n')
        .find((l) => /^\s*(?:✓ )?http_req_duration\.+:/.test(l))!;
      const cols = [...line.matchAll(/([\w()._]+)=(\S+)/g)].filter((m) => m[1] !== 'count');
      expect(cols.length).toBe(c.p99 ? 8 : 6);
      const field: Record<string, keyof typeof s.latencyMs> = {
        avg: 'mean',
        min: 'min',
        med: 'p50',
        max: 'max',
        'p(90)': 'p90',
        'p(95)': 'p95',
        'p(99)': 'p99',
        'p(99.9)': 'p999',
      };
      for (const [, key, token] of cols) {
        const ours = s.latencyMs[field[key!]!];
        expect(ours, key).not.toBeNull();
        expect(Math.abs(ours! - exp.http_req_duration[key!]), key).toBeLessThan(printedPrecisionMs(token!));
      }
      if (!c.p99) expect([s.latencyMs.p99, s.latencyMs.p999]).toEqual([null, null]);
      expect(s.latencyMs.p75).toBeNull(); // not printed
      expect(Math.abs(s.bytesPerSecond! - exp.data_received.rate)).toBeLessThanOrEqual(100); // "9.1 kB/s"
      expect(Math.abs(s.durationSeconds! - exp.http_reqs.count / exp.http_reqs.rate)).toBeLessThan(1e-6);
      const ok = exp['http_req_duration{expected_response:true}'];
      expect(Math.abs((s.meta.successfulOnlyLatencyMs as { max: number }).max - ok.max)).toBeLessThan(0.01);
    });
  }

  it('takes the totals, not the per-scenario and per-group blocks of --summary-mode=full', async () => {
    const text = readFileSync(k6('console-v1-errors-full.txt'), 'utf8');
    expect(text).toContain('█ SCENARIO: api');
    expect(text).toContain('↳ GROUP: item');
    const run = await read(Buffer.from(text));
    expect(run.summary.requests).toBe(100);
  });

  it('a CI log copy with colour codes reads the same', async () => {
    const plain = readFileSync(k6('console-v0-errors.txt'), 'utf8');
    const coloured = plain.replace(/(http_req_duration)/g, '\x1b[36m$1\x1b[0m').replace(/(avg=)/g, '\x1b[2m$1\x1b[0m');
    expect(coloured).not.toBe(plain);
    expect((await read(Buffer.from(coloured))).summary).toEqual((await read(Buffer.from(plain))).summary);
  });

  it('two summaries in one log are two runs, each with its own figures, never mixed', async () => {
    for (const [a, b] of [
      ['console-v1-ok.txt', 'console-v1-errors-full.txt'],
      ['console-v0-ok.txt', 'console-v0-errors.txt'],
    ]) {
      const both = await ingest({ name: 'upload', bytes: Buffer.concat([readFileSync(k6(a!)), readFileSync(k6(b!))]) });
      if (both.kind !== 'loadtest') throw new Error('not a load test');
      expect(both.runs.map((r) => r.summary.requests)).toEqual([
        (await read(readFileSync(k6(a!)))).summary.requests,
        (await read(readFileSync(k6(b!)))).summary.requests,
      ]);
      expect(both.runs.map((r) => r.summary.latencyMs)).toEqual([
        (await read(readFileSync(k6(a!)))).summary.latencyMs,
        (await read(readFileSync(k6(b!)))).summary.latencyMs,
      ]);
    }
  });

  it('every cut of a summary gives a clear error or a partial run whose figures are the full run’s or null', async () => {
    for (const f of ['console-v1-ok.txt', 'console-v0-errors.txt']) {
      const bytes = readFileSync(k6(f));
      const full = (await read(bytes)).summary;
      let partial = 0;
      let refused = 0;
      for (let n = 1; n < bytes.length; n++) {
        try {
          const s = (await read(bytes.subarray(0, n))).summary;
          partial++;
          for (const k of ['requests', 'rps', 'errors'] as const) if (s[k] !== null) expect(s[k]).toBe(full[k]);
          for (const [k, v] of Object.entries(s.latencyMs))
            if (v !== null) expect(v).toBe(full.latencyMs[k as keyof typeof full.latencyMs]);
        } catch (e) {
          if (!(e instanceof IngestError)) throw e;
          refused++;
        }
      }
      expect(partial).toBeGreaterThan(0);
      expect(refused).toBeGreaterThan(0);
    }
  });

  it('a paste cut right after http_req_duration keeps latency and marks the counts unknown', async () => {
    const text = readFileSync(k6('console-v0-errors.txt'), 'utf8');
    const cut = text.slice(0, text.indexOf('{ expected_response:true }'));
    const s = (await read(Buffer.from(cut))).summary;
    expect(s.latencyMs.p95).toBe(0.48817);
    expect([s.requests, s.rps, s.errors, s.durationSeconds]).toEqual([null, null, null, null]);
  });

  it('a log cut before the summary says so', async () => {
    const text = readFileSync(k6('console-v1-ok.txt'), 'utf8');
    const cut = text.slice(0, text.indexOf('█ THRESHOLDS'));
    await expect(read(Buffer.from(cut))).rejects.toMatchObject({ code: 'no-run' });
  });
});
