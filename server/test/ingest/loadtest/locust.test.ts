/**
 * Locust 1.x outputs (a real Locust 1.6 run, fixtures/loadtests/locust/v1-errors*): the console
 * table without its Type column, with the final percentile table; failures written as bare
 * "500 Server Error: …"; the same failures CSV as Windows writes it (\r\r\n, made here by script).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';
import { LOADTEST_FIXTURES as FIXTURES } from '../../helpers/loadtest-expected.ts';

const fx = (f: string) => readFileSync(join(FIXTURES, 'locust', f));
async function read(bytes: Buffer): Promise<LoadTestRun> {
  const p = await ingest({ name: 'upload', bytes });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  expect(p.runs).toHaveLength(1);
  return p.runs[0]!;
}

describe('Locust 1.x', () => {
  it('console: the last Aggregated row and percentile table, as printed', async () => {
    const s = (await read(fx('v1-errors-console.txt'))).summary;
    // " Aggregated   949   53(5.58%)  |  1  0  49  1  |  269.81  15.07"
    expect([s.requests, s.errors, s.latencyMs.mean, s.latencyMs.min, s.latencyMs.max, s.latencyMs.p50]).toEqual([
      949, 53, 1, 0, 49, 1,
    ]);
    // " None  Aggregated  1  2  2  2  2  4  8  12  49  49  49  949"
    expect([s.latencyMs.p75, s.latencyMs.p90, s.latencyMs.p95, s.latencyMs.p99, s.latencyMs.p999]).toEqual([
      2, 2, 4, 12, 49,
    ]);
  });

  it('failures CSV: "500 Server Error" is a failed response, the rest got no response', async () => {
    const s = (await read(fx('v1-errors_failures.csv'))).summary;
    expect([s.errors, s.non2xx, s.transportErrors]).toEqual([41, 37, 4]);
  });

  it('the same failures CSV with Windows line ends (\\r\\r\\n) reads the same', async () => {
    const windows = Buffer.from(fx('v1-errors_failures.csv').toString().replace(/\n/g, '\r\r\n'));
    expect((await read(windows)).summary).toEqual((await read(fx('v1-errors_failures.csv'))).summary);
  });

  it('stats CSV as written; the history of a short run holds only its zero row: no run', async () => {
    const s = (await read(fx('v1-errors_stats.csv'))).summary;
    expect([s.requests, s.errors]).toEqual([781, 41]);
    await expect(read(fx('v1-errors_stats_history.csv'))).rejects.toMatchObject({ code: 'no-run' });
  });
});
