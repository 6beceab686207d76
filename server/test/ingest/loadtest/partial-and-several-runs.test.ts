/**
 * What users paste and concatenate: partial copies of real reports (cut by the script in each
 * test, never edited), several runs appended to one file, wrk pastes that start below the
 * "Running … test @" line. Detection sees content only (the name is neutral).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import '../../../src/ingest/registry.ts';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';
import { LOADTEST_FIXTURES as FIXTURES } from '../../helpers/loadtest-expected.ts';

const fx = (rel: string) => readFileSync(join(FIXTURES, rel));

async function read(bytes: Buffer | string): Promise<LoadTestRun> {
  const p = await ingest({ name: 'upload', bytes: Buffer.from(bytes) });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  return p.run;
}

/** The text up to (not including) the first line that matches `re`. */
function before(text: string, re: RegExp): string {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => re.test(l));
  expect(i).toBeGreaterThan(0);
  return lines.slice(0, i).join('\n');
}

describe('partial hey pastes', () => {
  it('without "Status code distribution": latency as printed, statuses unknown, requests from Requests/sec × Total', async () => {
    const full = await read(fx('hey/ok-paced.txt'));
    const cut = before(fx('hey/ok-paced.txt').toString(), /^Status code distribution:/);
    const s = (await read(cut)).summary;
    // 924.8146 req/s × 2.0080 s: one integer (1857) within Total's 4 printed decimals
    expect(s.requests).toBe(1857);
    expect([s.non2xx, s.transportErrors, s.errors]).toEqual([null, null, null]);
    expect(s.latencyMs).toEqual(full.summary.latencyMs);
    expect(s.rps).toBe(full.summary.rps);
  });

  it('a faster run: the histogram counts the responses, confirmed by Requests/sec × Total', async () => {
    const text = fx('hey/ok-summary.txt').toString();
    const s = (await read(before(text, /^Status code distribution:/))).summary;
    expect(s.requests).toBe(51806); // the printed "[200] 51806 responses" that was cut away
    expect(s.latencyMs.p99).toBe(6.9);
  });

  it('a histogram cut short is not a count: Requests/sec × Total allows 51806 and 51807, so requests is null', async () => {
    const text = fx('hey/ok-summary.txt').toString();
    const s = (await read(before(text, /^\s+0\.045 \[/))).summary;
    expect(s.requests).toBeNull();
    expect(s.rps).toBe(17255.0412);
  });

  it('only the Summary block: every latency percentile unknown, no crash', async () => {
    const s = (await read(before(fx('hey/ok-paced.txt').toString(), /^Response time histogram:/))).summary;
    expect(s.latencyMs.p50).toBeNull();
    expect(s.latencyMs.max).toBeCloseTo(85.7, 9);
    expect(s.requests).toBe(1857);
  });
});

describe('several runs in one file are refused, never mixed', () => {
  for (const rel of ['wrk/two-runs.txt', 'hey/two-runs.txt', 'ab/two-runs.txt']) {
    it(rel, async () => {
      const e = await read(fx(rel)).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(IngestError);
      expect((e as IngestError).code).toBe('concatenated');
      expect((e as IngestError).message).toMatch(/holds 2 .*runs|holds 2 hey summaries/);
    });
  }

  it('vegeta text reports appended twice', async () => {
    const both = Buffer.concat([fx('vegeta/errors-report.txt'), fx('vegeta/errors-report.txt')]);
    await expect(read(both)).rejects.toMatchObject({ code: 'concatenated' });
  });

  for (const rel of [
    'bombardier/errors.txt',
    'ghz/ok-summary.txt',
    'locust/ok-console.txt',
    'k6/console-v0-ok.txt',
    'hey/ok-paced.txt',
  ]) {
    it(`${rel} appended to itself`, async () => {
      await expect(read(Buffer.concat([fx(rel), fx(rel)]))).rejects.toMatchObject({ code: 'concatenated' });
    });
  }

  it('autocannon tables appended twice', async () => {
    const both = Buffer.concat([fx('autocannon/ok-plain-table.txt'), fx('autocannon/ok-amount-table.txt')]);
    await expect(read(both)).rejects.toMatchObject({ code: 'concatenated' });
  });
});

describe('wrk paste without its "Running … test @" line', () => {
  it('reads every figure the rest of the report prints', async () => {
    const text = fx('wrk/errors-latency.txt').toString();
    const full = await read(text);
    const pasted = await read(text.split('\n').slice(1).join('\n'));
    expect(pasted.format).toBe('wrk');
    expect(pasted.summary.meta.targetUrl).toBeNull();
    expect({ ...pasted.summary, meta: null }).toEqual({ ...full.summary, meta: null });
  });
});

describe('cut-off reports: a clear error or a partial run, never a crash', () => {
  const files = [
    'wrk/errors-latency.txt',
    'hey/ok-paced.txt',
    'ab/errors.txt',
    'autocannon/ok-plain-table.txt',
    'autocannon/errors-table.txt',
    'bombardier/errors.txt',
  ];
  for (const rel of files) {
    it(rel, async () => {
      const bytes = fx(rel);
      let refused = 0;
      for (let n = 1; n < bytes.length; n++) {
        try {
          // a few first bytes may read as another format ("Running 3" is a folded stack): fine
          await ingest({ name: 'upload', bytes: bytes.subarray(0, n) });
        } catch (e) {
          if (!(e instanceof IngestError)) throw new Error(`cut at ${n}: ${(e as Error).stack}`);
          expect(e.message.length).toBeGreaterThan(10);
          refused++;
        }
      }
      expect(refused).toBeGreaterThan(0);
    });
  }
});
