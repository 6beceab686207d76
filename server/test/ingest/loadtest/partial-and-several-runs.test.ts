/**
 * What users paste and concatenate: partial copies of real reports (cut by the script in each
 * test, never edited), several runs appended to one file, wrk pastes that start below the
 * "Running … test @" line. Detection sees content only (the name is neutral).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import { splitRuns } from '../../../src/ingest/loadtest/common/text.ts';
import { SEVERAL_RUNS_SCAN_BYTES } from '../../../src/ingest/loadtest/runs.ts';
import { MAX_RUNS_PER_FILE } from '../../../src/ingest/loadtest/types.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';
import { LOADTEST_FIXTURES as FIXTURES } from '../../helpers/loadtest-expected.ts';

const fx = (rel: string) => readFileSync(join(FIXTURES, rel));

async function read(bytes: Buffer | string): Promise<LoadTestRun> {
  const p = await ingest({ name: 'upload', bytes: Buffer.from(bytes) });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  expect(p.runs).toHaveLength(1);
  return p.runs[0]!;
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

async function readAll(bytes: Buffer | string): Promise<LoadTestRun[]> {
  const p = await ingest({ name: 'upload', bytes: Buffer.from(bytes) });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  return p.runs;
}

/** A run's summary without the note of which run of its file it is. */
function own(r: LoadTestRun): unknown {
  const { fileRun: _f, ...meta } = r.summary.meta;
  return { ...r.summary, meta };
}

describe("several runs in one file: read as that many runs, in the file's order, never mixed", () => {
  it('wrk/two-runs.txt: two runs appended with >>, each with the figures wrk printed for it', async () => {
    const runs = await readAll(fx('wrk/two-runs.txt'));
    expect(runs.map((r) => r.summary.rps)).toEqual([47060.35, 40220.62]);
    expect(runs.map((r) => r.summary.meta.targetUrl)).toEqual([
      'http://127.0.0.1:18381/api/item',
      'http://127.0.0.1:18382/api/item',
    ]);
    expect(runs.map((r) => r.summary.meta.fileRun)).toEqual([
      { index: 1, count: 2, line: 1 },
      { index: 2, count: 2, line: 9 },
    ]);
  });

  it('ab/two-runs.txt: 2000 then 1000 requests', async () => {
    const runs = await readAll(fx('ab/two-runs.txt'));
    expect(runs.map((r) => r.summary.requests)).toEqual([2000, 1000]);
    expect(runs.map((r) => r.summary.meta.fileRun?.line)).toEqual([1, 43]);
    // each part read alone gives the same figures
    const text = fx('ab/two-runs.txt').toString();
    const at = text.indexOf('This is ApacheBench', 10);
    expect(runs.map(own)).toEqual([own(await read(text.slice(0, at))), own(await read(text.slice(at)))]);
  });

  it('hey/two-runs.txt: each summary its own run', async () => {
    const runs = await readAll(fx('hey/two-runs.txt'));
    expect(runs.map((r) => r.summary.rps)).toEqual([8790.6317, 12487.8287]);
    expect(runs.map((r) => r.summary.durationSeconds)).toEqual([0.2275, 0.1602]);
  });

  it('vegeta text reports appended twice', async () => {
    const one = await read(fx('vegeta/errors-report.txt'));
    const runs = await readAll(Buffer.concat([fx('vegeta/errors-report.txt'), fx('vegeta/errors-report.txt')]));
    expect(runs.map(own)).toEqual([own(one), own(one)]);
  });

  for (const rel of [
    'bombardier/errors.txt',
    'ghz/ok-summary.txt',
    'locust/ok-console.txt',
    'k6/console-v0-ok.txt',
    'k6/console-v1-ok.txt',
    'hey/ok-paced.txt',
    'wrk/errors-latency.txt',
  ]) {
    it(`${rel} appended to itself`, async () => {
      const one = await read(fx(rel));
      const runs = await readAll(Buffer.concat([fx(rel), fx(rel)]));
      expect(runs.map(own)).toEqual([own(one), own(one)]);
      expect(runs.map((r) => r.summary.meta.fileRun?.index)).toEqual([1, 2]);
    });
  }

  it('autocannon tables of two runs', async () => {
    const a = await read(fx('autocannon/ok-plain-table.txt'));
    const b = await read(fx('autocannon/ok-amount-table.txt'));
    const runs = await readAll(
      Buffer.concat([fx('autocannon/ok-plain-table.txt'), fx('autocannon/ok-amount-table.txt')]),
    );
    expect(runs.map(own)).toEqual([own(a), own(b)]);
  });

  it('a terminal log: each run with the prompt and command that started it', async () => {
    const first = fx('wrk/errors-latency.txt').toString();
    const log = `$ wrk -t2 -c16 -d3s --latency URL\n${first}\nuser@host:~$ wrk -t2 -c16 -d3s --latency URL\n\n${first}`;
    const runs = await readAll(log);
    expect(runs).toHaveLength(2);
    // the second run starts at the blank line above its prompt
    expect(runs[1]!.summary.meta.fileRun?.line).toBe(first.split('\n').length + 1);
    expect(own(runs[1]!)).toEqual(own(runs[0]!));
  });

  it('a run that does not read is named with its place in the file', async () => {
    const text = fx('ab/two-runs.txt').toString();
    const cut = text.slice(0, text.indexOf('Complete requests:', text.indexOf('This is ApacheBench', 10)));
    const e = await readAll(cut).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(IngestError);
    expect((e as IngestError).message).toMatch(/^run 2 of 2 \(from line 43\): /);
  });

  it('wrk runs pasted without their "Running" lines cannot be told apart: refused, naming the lines', async () => {
    const text = fx('wrk/two-runs.txt')
      .toString()
      .split('\n')
      .filter((l) => !l.startsWith('Running'))
      .join('\n');
    await expect(readAll(text)).rejects.toMatchObject({ code: 'concatenated' });
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

describe('a real loop appending to one file', () => {
  it('hey/three-runs.txt: three runs with the figures hey printed', async () => {
    const runs = await readAll(fx('hey/three-runs.txt'));
    expect(runs.map((r) => r.summary.rps)).toEqual([8887.6888, 11389.1608, 9332.466]);
    expect(runs.map((r) => r.summary.requests)).toEqual([1000, 1000, 1000]);
  });

  it('wrk/three-runs.txt: three runs with the figures wrk printed', async () => {
    const runs = await readAll(fx('wrk/three-runs.txt'));
    expect(runs.map((r) => r.summary.rps)).toEqual([19925.47, 18360, 21217.19]);
  });
});

describe('thousands of wrk runs appended (a loop left running): every run found, its line counted once', () => {
  const one = fx('wrk/ok-latency.txt').toString();
  const linesPerRun = one.split('\n').length - 1;

  it('8,000 copies: split into 8,000 runs at the right lines, and the file refused naming the run limit', async () => {
    const text = one.repeat(8000);
    const parts = splitRuns(text, /^Running \S+ test @ /);
    expect(parts).toHaveLength(8000);
    for (const i of [0, 1, 2, 999, 4321, 7999]) expect(parts[i]).toEqual({ text: one, line: 1 + i * linesPerRun });
    const e = await readAll(text).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(IngestError);
    expect(e).toMatchObject({ code: 'too-large' });
    expect((e as IngestError).message).toBe(
      `the file holds 8000 runs, more than the ${MAX_RUNS_PER_FILE} read from one file: split it`,
    );
  });

  it('20,000 copies (past the bytes scanned for runs): refused the same way, naming the limit', async () => {
    const text = one.repeat(20_000);
    expect(text.length).toBeGreaterThan(SEVERAL_RUNS_SCAN_BYTES);
    const e = await readAll(text).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(IngestError);
    expect(e).toMatchObject({ code: 'too-large' });
    expect((e as IngestError).message).toBe(
      `the file holds 20000 wrk runs, more than the ${MAX_RUNS_PER_FILE} read from one file: split it`,
    );
  });

  it(`${MAX_RUNS_PER_FILE} copies (the limit): every run read with the figures wrk printed, each at its line`, async () => {
    const single = await read(one);
    const runs = await readAll(one.repeat(MAX_RUNS_PER_FILE));
    expect(runs).toHaveLength(MAX_RUNS_PER_FILE);
    for (const [i, r] of runs.entries()) {
      expect(own(r)).toEqual(own(single));
      expect(r.summary.meta.fileRun).toEqual({ index: i + 1, count: MAX_RUNS_PER_FILE, line: 1 + i * linesPerRun });
    }
  });
});

describe('a hey paste between shell prompts', () => {
  for (const rel of ['hey/ok-paced.txt', 'hey/errors-summary.txt']) {
    it(`${rel}: the prompt and command above and the bare prompt below are no part of the report`, async () => {
      const out = fx(rel).toString();
      const single = await read(out);
      for (const paste of [
        `user@host:~$ hey -n 2000 -q 1000 http://127.0.0.1:18181/api/item\n${out}user@host:~$ `,
        `user@host:~/bench$ hey -n 2000 http://127.0.0.1:18181/api/item\n\n${out}\nuser@host:~/bench$ \n`,
        `${out}user@host:~$ `,
      ]) {
        expect(own(await read(paste))).toEqual(own(single));
      }
    });
  }
});
