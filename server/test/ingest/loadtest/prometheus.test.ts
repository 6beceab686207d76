/**
 * The requests a counter's samples say were served in a window (fixtures/prometheus: a real
 * Prometheus scraping the demo service every 5 s, through a restart; fixtures/parca: the samples the
 * import asked for each run of its window), and the import's record read back as a load run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { counterRequests } from '../../../src/ingest/loadtest/prometheus.ts';
import { REQUESTS_SCHEMA, type RequestsRecord } from '../../../src/model/requests-record.ts';
import { addStage, createComparison, testApp, upload } from '../../helpers/app.ts';
import { parcaAnswers } from '../../helpers/parca-replay.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const reset = JSON.parse(readFileSync(`${fixturesDir}prometheus/counter-reset.json`, 'utf8')) as {
  data: { result: { values: [number, string][] }[] };
};
const samples = reset.data.result[0]!.values.map(([t, v]) => ({ ms: Math.round(t * 1000), v: Number(v) }));

describe('counterRequests', () => {
  it('counts across a restart: the counts before it, then the restarted counter from zero', () => {
    // 885909 → 907325 → 942789, killed, started again: 38231 → 106749 → 163111 (README)
    expect(samples.map((s) => s.v)).toEqual([885909, 885909, 907325, 942789, 38231, 106749, 163111, 163111]);
    const c = counterRequests(reset, samples[0]!.ms, samples[samples.length - 1]!.ms);
    expect(c).toEqual({ requests: 942789 - 885909 + 163111, series: 1, resets: 1 });
  });

  it('takes a window edge between two samples on the straight line between them', () => {
    const [a, b] = [samples[2]!, samples[3]!]; // 907325 → 942789 over 5 s
    const mid = (a.ms + b.ms) / 2;
    const c = counterRequests(reset, mid, b.ms);
    expect('requests' in c && c.requests).toBeCloseTo((942789 - 907325) / 2, 6);
    // an edge after the restart: only the restarted process's counts
    const after = counterRequests(reset, samples[4]!.ms, samples[6]!.ms);
    expect(after).toEqual({ requests: 163111 - 38231, series: 1, resets: 0 });
  });

  it('refuses a window its samples do not enclose, saying which edge and what to do', () => {
    const first = samples[0]!.ms;
    const last = samples[samples.length - 1]!.ms;
    const early = counterRequests(reset, first - 1, last);
    expect('why' in early && early.why).toMatch(/no sample at or before the window's start .*start the window later/);
    const late = counterRequests(reset, first, last + 1);
    expect('why' in late && late.why).toMatch(
      /no sample at or after the window's end .*import again after the next scrape/,
    );
    expect('why' in late && late.why).toContain('route="GET /api/orders"');
    // the server's label values are untrusted: controls and bidirectional overrides do not reach a page or terminal
    const evil = structuredClone(reset) as unknown as { data: { result: { metric: Record<string, string> }[] } };
    evil.data.result[0]!.metric = { route: '\u202e\u001b[31mevil' };
    const said = counterRequests(evil, first, last + 1);
    expect('why' in said && said.why).toContain('{route="??[31mevil"}');
  });

  it("refuses an answer that is not a counter's samples, naming what came instead", () => {
    const refused = JSON.parse(readFileSync(`${fixturesDir}prometheus/refused-empty-matcher.json`, 'utf8'));
    expect(counterRequests(refused, 0, 1)).toEqual({ why: 'its status is "error"' });
    const vector = { status: 'success', data: { resultType: 'vector', result: [] } };
    expect(counterRequests(vector, 0, 1)).toMatchObject({ why: expect.stringContaining('a vector answered') });
    const none = { status: 'success', data: { resultType: 'matrix', result: [] } };
    expect(counterRequests(none, 0, 1)).toMatchObject({ why: expect.stringContaining('no series') });
    // a selector matching everything: refused, not read (nor stored)
    const series = reset.data.result[0]!;
    const many = { status: 'success', data: { resultType: 'matrix', result: Array(1001).fill(series) } };
    expect(counterRequests(many, samples[0]!.ms, samples[7]!.ms)).toMatchObject({
      why: expect.stringContaining('1001 series answered, more than the 1000'),
    });
    const enough = { status: 'success', data: { resultType: 'matrix', result: Array(1000).fill(series) } };
    expect(counterRequests(enough, samples[2]!.ms, samples[3]!.ms)).toMatchObject({ series: 1000 });
  });

  it("agrees with the interpolation of the import's recorded samples, and differs from increase()", () => {
    // fixtures/parca holds, for each run, the samples the import asked for and Prometheus's own
    // increase() over the same window (which the import does not use)
    const asked = parcaAnswers().filter((a) => a.request.startsWith('/api/v1/query'));
    const ranges = asked.filter((a) => !a.request.includes('increase'));
    const increases = asked.filter((a) => a.request.includes('increase'));
    expect(ranges).toHaveLength(6);
    expect(increases).toHaveLength(6);
    let worst = 0;
    for (let k = 0; k < 6; k++) {
      const q = new URLSearchParams(increases[k]!.request.split('?')[1]);
      const endMs = Number(q.get('time')) * 1000;
      const rangeMs = Number(/\[(\d+)ms\]/.exec(q.get('query')!)![1]);
      const mine = counterRequests(JSON.parse(ranges[k]!.body), endMs - rangeMs, endMs);
      if (!('requests' in mine)) throw new Error(mine.why);
      const theirs = Number(
        (JSON.parse(increases[k]!.body) as { data: { result: { value: [number, string] }[] } }).data.result[0]!
          .value[1],
      );
      worst = Math.max(worst, Math.abs(theirs - mine.requests) / mine.requests);
      expect(mine.requests).toBeGreaterThan(80_000);
    }
    // increase() extrapolates two samples to a 10 s range: 12.6 % off in the worst run here
    expect(worst).toBeGreaterThan(0.1);
  });
});

describe('the import record, read as a load run', () => {
  const record = (over: Partial<RequestsRecord> = {}): Buffer => {
    const r: RequestsRecord = {
      schema: REQUESTS_SCHEMA,
      url: 'http://127.0.0.1:49090/',
      query: 'demo_http_requests_total{job="demo"}',
      evaluated: 'demo_http_requests_total{job="demo"}[60000ms]',
      from: new Date(samples[2]!.ms).toISOString(),
      to: new Date(samples[6]!.ms).toISOString(),
      run: 2,
      runs: 6,
      answer: reset,
      ...over,
    };
    return Buffer.from(JSON.stringify(r, null, 1));
  };

  it('is a prometheus run: the requests of the window over its seconds, no latency', async () => {
    const p = await ingest({ name: 'run-2-requests.json', bytes: record() });
    if (p.kind !== 'loadtest') throw new Error(p.kind);
    const run = p.runs[0]!;
    expect(run.format).toBe('prometheus');
    const seconds = (samples[6]!.ms - samples[2]!.ms) / 1000;
    expect(run.summary.requests).toBe(942789 - 907325 + 163111);
    expect(run.summary.durationSeconds).toBe(seconds);
    expect(run.summary.rps).toBeCloseTo((942789 - 907325 + 163111) / seconds, 9);
    expect(run.summary.latencyMs.p99).toBeNull();
    expect(run.summary.meta.startedAt).toBe(samples[2]!.ms);
    expect(run.summary.meta.notes!.join(' ')).toMatch(
      /run 2 of 6.*1 counter reset undone.*not a load test's throughput/,
    );
  });

  it('refuses a record whose answer holds no count, saying why', async () => {
    const p = ingest({
      name: 'run-1-requests.json',
      bytes: record({ to: new Date(samples[7]!.ms + 1).toISOString() }),
    });
    await expect(p).rejects.toThrow(/^the answer holds no count of requests: .*no sample at or after/);
    const q = ingest({ name: 'run-1-requests.json', bytes: record({ from: 'yesterday' }) });
    await expect(q).rejects.toThrow(/^"from" and "to" must be ISO 8601 times/);
  });
});

describe('a requests record uploaded', () => {
  it('is refused with a 4xx naming the file once, and the reason', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-requests-'));
    const app = await testApp({ ANALYSIS_WORKERS: '0' });
    try {
      const c = await createComparison(app, 'requests record');
      const stage = await addStage(app, c.id, c.auth, 'x');
      const text = JSON.stringify({
        schema: REQUESTS_SCHEMA,
        url: 'http://127.0.0.1:49090/',
        query: 'demo_http_requests_total',
        evaluated: 'demo_http_requests_total[60000ms]',
        from: new Date(samples[0]!.ms).toISOString(),
        to: new Date(samples[7]!.ms).toISOString(),
        run: 1,
        runs: 1,
        answer: reset,
      });
      writeFileSync(join(dir, 'run-1-requests.json'), text.slice(0, text.length / 2));
      const r = await upload(app, c.id, stage, c.auth, [join(dir, 'run-1-requests.json')]);
      expect(r.statusCode).toBe(422);
      const message = r.json().results[0].error.message as string;
      expect(message).toMatch(/^run-1-requests\.json: the requests record is not valid JSON/);
      expect(message.match(/run-1-requests\.json/g)).toHaveLength(1);
    } finally {
      await app.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
