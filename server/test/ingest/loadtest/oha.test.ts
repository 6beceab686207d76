/**
 * oha's own outputs (fixtures/loadtests/oha, made by oha 1.16.0 against the target server) and a
 * summary of an older oha published in a README: detected by content apart from hey, every printed
 * figure read as printed.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { heyImporter } from '../../../src/ingest/loadtest/hey.ts';
import { ohaImporter } from '../../../src/ingest/loadtest/oha.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';
import { LOADTEST_FIXTURES as FIXTURES } from '../../helpers/loadtest-expected.ts';

const fx = (rel: string) => readFileSync(`${FIXTURES}oha/${rel}`);

async function readAll(bytes: Buffer | string): Promise<LoadTestRun[]> {
  const p = await ingest({ name: 'upload', bytes: Buffer.from(bytes) });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  return p.runs;
}
async function read(bytes: Buffer | string): Promise<LoadTestRun> {
  const runs = await readAll(bytes);
  expect(runs).toHaveLength(1);
  return runs[0]!;
}

const MIB = 1024 * 1024;

describe('oha text summary (oha 1.16.0)', () => {
  it('ok.txt: every printed figure', async () => {
    const r = await read(fx('ok.txt'));
    expect(r.format).toBe('oha');
    const s = r.summary;
    expect(s.rps).toBe(35444.1559);
    expect(s.durationSeconds).toBe(0.5642679);
    expect(s.latencyMs).toEqual({
      min: 0.0342,
      mean: 0.4471,
      max: 13.0624,
      p50: 0.2181,
      p75: 0.4885,
      p90: 0.8434,
      p95: 1.4328,
      p99: 4.1202,
      p999: 7.0881,
    });
    expect(r.latencyDistribution).toEqual([
      { percentile: 0, ms: 0.0342 },
      { percentile: 10, ms: 0.0858 },
      { percentile: 25, ms: 0.1324 },
      { percentile: 50, ms: 0.2181 },
      { percentile: 75, ms: 0.4885 },
      { percentile: 90, ms: 0.8434 },
      { percentile: 95, ms: 1.4328 },
      { percentile: 99, ms: 4.1202 },
      { percentile: 99.9, ms: 7.0881 },
      { percentile: 99.99, ms: 10.3259 },
      { percentile: 100, ms: 13.0624 },
    ]);
    // "[200] 20000 responses", no error distribution
    expect([s.requests, s.errors, s.non2xx, s.transportErrors]).toEqual([20000, 0, 0, 0]);
    expect(s.bytesPerSecond).toBe(2.03 * MIB);
  });

  it('errors.txt: statuses and the error distribution, as oha counted them', async () => {
    const s = (await read(fx('errors.txt'))).summary;
    // [200] 18845, [500] 949 responses; [206] connection closed before message completed
    expect(s.requests).toBe(18845 + 949 + 206);
    expect(s.non2xx).toBe(949);
    expect(s.transportErrors).toBe(206);
    expect(s.errors).toBe(1155);
    // oha's "Success rate: 98.97%" is responses over requests
    expect(Math.round(((18845 + 949) / s.requests!) * 10000) / 100).toBe(98.97);
    expect(s.rps).toBe(33713.3128);
    expect(s.latencyMs.p99).toBe(4.0321);
    expect(s.latencyMs.max).toBe(10.6167);
    expect(s.bytesPerSecond).toBe(1.84 * MIB);
  });

  it('down.txt: nothing listening, every request refused; NaN and inf read as unknown', async () => {
    const s = (await read(fx('down.txt'))).summary;
    expect([s.requests, s.transportErrors, s.non2xx, s.errors]).toEqual([200, 200, 0, 200]);
    expect(s.rps).toBe(37926.6415);
    expect(s.durationSeconds).toBe(0.005273338);
    expect(Object.values(s.latencyMs).every((v) => v === null)).toBe(true);
  });

  it('paced and latency-corrected runs (-z 2s -q 2000, with and without --latency-correction)', async () => {
    const paced = (await read(fx('paced.txt'))).summary;
    expect([paced.requests, paced.rps, paced.latencyMs.p99]).toEqual([3999, 1997.9351, 0.4173]);
    const corrected = (await read(fx('corrected.txt'))).summary;
    expect([corrected.requests, corrected.rps, corrected.latencyMs.p99]).toEqual([3998, 1997.0032, 0.4558]);
  });
});

describe('oha JSON output (--output-format json)', () => {
  for (const f of ['ok.json', 'errors.json', 'down.json', 'corrected.json']) {
    it(`${f}: the figures of its summary, percentiles and distributions`, async () => {
      const doc = JSON.parse(fx(f).toString());
      const r = await read(fx(f));
      expect(r.format).toBe('oha-json');
      const s = r.summary;
      expect(s.rps).toBe(doc.summary.requestsPerSec);
      expect(s.durationSeconds! * 1000).toBeCloseTo(doc.summary.total * 1000, 9);
      const ms = (v: number | null) => (v === null ? null : v * 1000);
      for (const [field, key] of [
        ['p50', 'p50'],
        ['p90', 'p90'],
        ['p99', 'p99'],
        ['p999', 'p99.9'],
      ] as const) {
        const want = ms(doc.latencyPercentiles[key]);
        if (want === null) expect(s.latencyMs[field]).toBeNull();
        else expect(s.latencyMs[field]).toBeCloseTo(want, 12);
      }
      const responses = Object.values(doc.statusCodeDistribution as Record<string, number>).reduce((a, b) => a + b, 0);
      const errors = Object.values(doc.errorDistribution as Record<string, number>).reduce((a, b) => a + b, 0);
      expect(s.requests).toBe(responses + errors);
      expect(s.transportErrors).toBe(errors);
      expect(s.bytesPerSecond).toBe(doc.summary.sizePerSec);
    });
  }

  it('errors.json: 500s are non2xx', async () => {
    const doc = JSON.parse(fx('errors.json').toString());
    const s = (await read(fx('errors.json'))).summary;
    expect(s.non2xx).toBe(doc.statusCodeDistribution['500']);
    expect(s.non2xx).toBeGreaterThan(0);
  });
});

describe('oha apart from hey', () => {
  it('no oha output is taken for hey, no hey output for oha', () => {
    for (const f of ['ok.txt', 'errors.txt', 'down.txt', 'published/emanguy-rust-rest-readme.txt']) {
      expect(heyImporter.detect(fx(f)), f).toBe(0);
      expect(ohaImporter.detect(fx(f)), f).toBeGreaterThan(0.9);
    }
    for (const f of ['ok-summary.txt', 'errors-summary.txt', 'ok-paced.txt'])
      expect(ohaImporter.detect(readFileSync(`${FIXTURES}hey/${f}`)), f).toBe(0);
  });
});

describe('an older oha pasted with its shell prompt (published)', () => {
  it('README of github.com/emanguy/rust-rest: every printed figure, the command line above it', async () => {
    const r = await read(fx('published/emanguy-rust-rest-readme.txt'));
    expect(r.format).toBe('oha');
    const s = r.summary;
    expect(s.meta.commandLine).toBe('oha -z 5m http://localhost:8080/users/1/tasks');
    expect(s.meta.targetUrl).toBe('http://localhost:8080/users/1/tasks');
    expect(s.durationSeconds).toBe(300.001);
    expect(s.rps).toBe(1543.8113);
    expect(s.latencyMs).toEqual({
      min: 5.4,
      mean: 32.4,
      max: 670.9,
      p50: 31.7,
      p75: 35.3,
      p90: 40.9,
      p95: 45.1,
      p99: 55.6,
      p999: null,
    });
    expect(s.requests).toBe(463145);
    expect(s.bytesPerSecond).toBe(217.1 * 1024);
  });
});

describe('oha pastes', () => {
  it('cut off at any line: every figure still printed is kept, the rest unknown, never wrong', async () => {
    const full = (await read(fx('errors.txt'))).summary;
    const lines = fx('errors.txt').toString().split('\n');
    for (let n = 8; n < lines.length; n++) {
      const s = (await read(lines.slice(0, n).join('\n'))).summary;
      for (const [k, v] of Object.entries(s.latencyMs))
        if (v !== null) expect(v, `${k} cut at ${n}`).toBe(full.latencyMs[k as keyof typeof full.latencyMs]);
      expect(s.rps).toBe(full.rps);
      expect(s.durationSeconds).toBe(full.durationSeconds);
      if (s.requests !== null) expect(s.requests).toBeLessThanOrEqual(full.requests!);
    }
    const cut = (await read(lines.slice(0, lines.indexOf('Status code distribution:')).join('\n'))).summary;
    expect(cut.requests).toBeNull();
    expect(cut.meta.notes).toContain('the paste has no status code distribution: requests and errors are unknown');
    expect(cut.latencyMs.p999).toBe(6.7969);
  });

  it('two runs in one terminal log: two runs with their own figures', async () => {
    const log = `$ oha -n 20000 -c 16 --no-tui URL\n${fx('ok.txt')}\n$ oha -n 20000 -c 16 --no-tui URL2\n${fx('errors.txt')}`;
    const runs = await readAll(log);
    expect(runs.map((r) => r.summary.rps)).toEqual([35444.1559, 33713.3128]);
    expect(runs.map((r) => r.summary.meta.commandLine)).toEqual([
      'oha -n 20000 -c 16 --no-tui URL',
      'oha -n 20000 -c 16 --no-tui URL2',
    ]);
    expect(runs[0]!.summary.meta.connections).toBe(16);
  });
});
