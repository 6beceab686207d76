/**
 * Fixtures recorded for this project with the real tools (fixtures/loadtests/{ghz,locust}, exact
 * commands in each folder's README.md). Every file goes through `ingest` by content only (no file
 * name), and the parsed figures are checked against what the tool itself wrote:
 *
 * - ghz: the JSON report's headline figures against its own per-call `details` (ghz's rules
 *   re-done here: count, status split, rps = count / total, mean over all calls, min/max and the
 *   rank-rule percentiles over OK calls), and the text summary against its own lines (status lines
 *   and histogram counts add up, rps = count / total). ghz writes one format per run, so the JSON
 *   and the text of a pair are two runs of the same command: compared only loosely.
 * - Locust: the `_stats.csv` Aggregated row as written, the same snapshot in `_stats_history.csv`,
 *   the failures CSV against the failure count, the console's last table, and the `--json-file`
 *   final totals (which Locust 2.47 writes after its last CSV snapshot, so they can only be larger).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import type { LoadTestRun } from '../../../src/model/loadtest.ts';

const FIX = new URL('../../../../fixtures/loadtests/', import.meta.url);
const fx = (rel: string): string => fileURLToPath(new URL(rel, FIX));
const text = (rel: string): string => readFileSync(fx(rel), 'utf8');

/** Parses a fixture by content only: the name handed to `ingest` is empty. */
async function parse(rel: string): Promise<LoadTestRun> {
  const p = await ingest({ name: '', bytes: readFileSync(fx(rel)) });
  expect(p.kind, rel).toBe('loadtest');
  if (p.kind !== 'loadtest') throw new Error('unreachable');
  expect(p.runs).toHaveLength(1);
  return p.runs[0]!;
}

function relErr(a: number | null | undefined, b: number): number {
  expect(a).not.toBeNull();
  expect(a).toBeDefined();
  return b === 0 ? Math.abs(a!) : Math.abs(a! - b) / Math.abs(b);
}

const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);

// ---------------------------------------------------------------------------------------------
// ghz
// ---------------------------------------------------------------------------------------------

interface GhzDetail {
  timestamp: string;
  latency: number;
  error: string;
  status: string;
}

/** ghz's `latencies()` (runner/reporter.go, v0.120.0): 0-based index floor(p/100*n), minus one when whole. */
function ghzRank(sortedSec: number[], p: number): number {
  const ip = (p / 100) * sortedSec.length;
  let di = Math.trunc(ip);
  if (ip === di) di -= 1;
  if (di < 0) di = 0;
  return sortedSec[di]!;
}

/** ghz converts float seconds back to integer ns with time.Duration(x * 1e9): allow that 1 ns. */
function expectNs(ms: number | null | undefined, ns: number, what: string): void {
  expect(ms, what).not.toBeNull();
  expect(Math.abs(ms! * 1e6 - ns), `${what}: ${ms} ms vs ${ns} ns`).toBeLessThanOrEqual(1.5);
}

describe('ghz fixtures: JSON reports against their own per-call details', () => {
  for (const stage of ['ok', 'deadline']) {
    const rel = `ghz/${stage}-report.json`;
    it(`${rel}`, async () => {
      // biome-ignore lint/suspicious/noExplicitAny: ghz's report JSON, read by path; a wrong path fails the assertion
      const o = JSON.parse(text(rel)) as Record<string, any>;
      const details = o.details as GhzDetail[];
      const run = await parse(rel);
      expect(run.format).toBe('ghz');
      const s = run.summary;

      // counts: every call is one detail row, and the status map covers them all
      expect(details.length).toBe(o.count);
      expect(s.requests).toBe(o.count);
      expect(sum(Object.values(o.statusCodeDistribution as Record<string, number>))).toBe(o.count);
      const failed = details.filter((d) => d.status !== 'OK');
      expect(failed.every((d) => d.error !== '')).toBe(true);
      expect(s.errors).toBe(failed.length);
      expect(s.errors).toBe(o.count - (o.statusCodeDistribution.OK ?? 0));
      expect(sum(Object.values(o.errorDistribution as Record<string, number>))).toBe(failed.length);
      // gRPC: no HTTP status, so ghz's errors are not split
      expect(s.non2xx).toBeNull();
      expect(s.transportErrors).toBeNull();

      // rate: ghz's rps is count / total, and our duration is its total
      expect(s.durationSeconds).toBeCloseTo(o.total / 1e9, 9);
      expect(relErr(s.rps, o.rps)).toBeLessThan(1e-12);
      expect(relErr(s.rps, o.count / (o.total / 1e9))).toBeLessThan(1e-9);
      // the run asked for -r 500 for -z 4s
      expect(o.options.rps).toBe(500);
      expect(o.options.duration).toBe(4e9);
      expect(relErr(s.rps, 500)).toBeLessThan(0.01);

      // latency: mean over all calls; min, max and percentiles over OK calls (ghz's own mix)
      const allSec = details.map((d) => d.latency / 1e9);
      expectNs(s.latencyMs.mean, (sum(allSec) / allSec.length) * 1e9, 'mean');
      expectNs(s.latencyMs.mean, o.average, 'mean (printed)');
      const okSec = details
        .filter((d) => d.error === '')
        .map((d) => d.latency / 1e9)
        .sort((a, b) => a - b);
      expectNs(s.latencyMs.min, okSec[0]! * 1e9, 'min');
      expectNs(s.latencyMs.max, okSec[okSec.length - 1]! * 1e9, 'max');
      expectNs(s.latencyMs.min, o.fastest, 'min (printed)');
      expectNs(s.latencyMs.max, o.slowest, 'max (printed)');
      const byP = {
        50: s.latencyMs.p50,
        75: s.latencyMs.p75,
        90: s.latencyMs.p90,
        95: s.latencyMs.p95,
        99: s.latencyMs.p99,
      };
      for (const [p, ms] of Object.entries(byP)) {
        expectNs(ms, ghzRank(okSec, Number(p)) * 1e9, `p${p} recomputed from details`);
        const printed = (o.latencyDistribution as { percentage: number; latency: number }[]).find(
          (d) => d.percentage === Number(p),
        );
        expect(printed, `p${p} printed`).toBeDefined();
        expectNs(ms, printed!.latency, `p${p} printed`);
      }
      expect(s.latencyMs.p50! < s.latencyMs.p99!).toBe(true);
      expect(run.latencyDistribution!.map((d) => d.percentile)).toEqual([10, 25, 50, 75, 90, 95, 99]);

      // histogram of the OK calls (printed) holds every OK call once
      expect(sum((o.histogram as { count: number }[]).map((b) => b.count))).toBe(okSec.length);

      // timeline from the details: every call in exactly one second, errors likewise
      expect(run.timeline).not.toBeNull();
      expect(sum(run.timeline!.map((b) => b.requests))).toBe(o.count);
      expect(sum(run.timeline!.map((b) => b.errors))).toBe(failed.length);
      expect(run.timeline!.length).toBeGreaterThanOrEqual(4);
      expect(run.timeline!.length).toBeLessThanOrEqual(5);
      expect(s.meta.targetUrl).toBe('127.0.0.1:18291');
      expect(s.meta.concurrency).toBe(8);
    });
  }

  it('deadline-report.json holds DeadlineExceeded calls, ok-report.json none', () => {
    const ok = JSON.parse(text('ghz/ok-report.json'));
    const dl = JSON.parse(text('ghz/deadline-report.json'));
    expect(Object.keys(ok.statusCodeDistribution)).toEqual(['OK']);
    expect(dl.statusCodeDistribution.DeadlineExceeded).toBeGreaterThan(0);
    expect(dl.options.timeout).toBe(1e6); // --timeout 1ms
  });
});

interface GhzText {
  count: number;
  totalS: number;
  rps: number;
  fastestMs: number;
  slowestMs: number;
  averageMs: number;
  pct: Map<number, number>;
  status: Map<string, number>;
  histogram: number[];
  errorLines: number[];
}

/** Reads ghz's text summary independently of the importer (all durations in this run are ms). */
function readGhzText(t: string): GhzText {
  const line = (name: string): string => {
    const m = new RegExp(`^  ${name}:\\t+(.+)$`, 'm').exec(t);
    expect(m, name).not.toBeNull();
    return m![1]!;
  };
  const ms = (v: string): number => {
    const m = /^([\d.]+) ms$/.exec(v);
    expect(m, v).not.toBeNull();
    return Number(m![1]);
  };
  const totalM = /^([\d.]+) s$/.exec(line('Total'));
  expect(totalM).not.toBeNull();
  const section = (title: string): string => {
    const i = t.indexOf(`\n${title}:\n`);
    expect(i, title).toBeGreaterThan(0);
    const rest = t.slice(i + title.length + 3);
    const end = rest.indexOf('\n\n');
    return end < 0 ? rest : rest.slice(0, end);
  };
  return {
    count: Number(line('Count')),
    totalS: Number(totalM![1]),
    rps: Number(line('Requests/sec')),
    fastestMs: ms(line('Fastest')),
    slowestMs: ms(line('Slowest')),
    averageMs: ms(line('Average')),
    pct: new Map(
      [...section('Latency distribution').matchAll(/^ {2}(\d+) % in ([\d.]+) ms $/gm)].map((m) => [
        Number(m[1]),
        Number(m[2]),
      ]),
    ),
    status: new Map(
      [...section('Status code distribution').matchAll(/^ {2}\[(\w+)\]\s+(\d+) responses/gm)].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    ),
    histogram: [...section('Response time histogram').matchAll(/^ {2}[\d.]+ \[(\d+)\]/gm)].map((m) => Number(m[1])),
    errorLines: [
      ...(t.includes('\nError distribution:\n') ? section('Error distribution') : '').matchAll(
        /^ {2}\[(\d+)\]\s+rpc error/gm,
      ),
    ].map((m) => Number(m[1])),
  };
}

describe('ghz fixtures: text summaries against their own lines', () => {
  for (const stage of ['ok', 'deadline']) {
    const rel = `ghz/${stage}-summary.txt`;
    it(rel, async () => {
      const g = readGhzText(text(rel));
      const run = await parse(rel);
      expect(run.format).toBe('ghz');
      const s = run.summary;

      // the printed lines agree with each other
      expect(sum([...g.status.values()])).toBe(g.count);
      const ok = g.status.get('OK') ?? 0;
      expect(ok).toBeGreaterThan(0);
      expect(g.histogram).toHaveLength(11);
      expect(sum(g.histogram)).toBe(ok); // the histogram is over OK calls only
      expect(sum(g.errorLines)).toBe(g.count - ok);
      expect(relErr(g.rps, g.count / g.totalS)).toBeLessThan(0.005); // Total is printed with 2 decimals
      expect(g.pct.size).toBe(7);

      // our summary is those lines
      expect(s.requests).toBe(g.count);
      expect(s.errors).toBe(g.count - ok);
      expect(s.rps).toBe(g.rps);
      expect(s.durationSeconds).toBeCloseTo(g.totalS, 9);
      expect(s.latencyMs.min).toBeCloseTo(g.fastestMs, 9);
      expect(s.latencyMs.max).toBeCloseTo(g.slowestMs, 9);
      expect(s.latencyMs.mean).toBeCloseTo(g.averageMs, 9);
      for (const [p, got] of [
        [50, s.latencyMs.p50],
        [75, s.latencyMs.p75],
        [90, s.latencyMs.p90],
        [95, s.latencyMs.p95],
        [99, s.latencyMs.p99],
      ] as const) {
        expect(got, `p${p}`).toBeCloseTo(g.pct.get(p)!, 9);
      }
      expect(run.latencyDistribution).toHaveLength(7);
      expect(run.timeline).toBeNull(); // the text has no per-second data
    });
  }

  it('JSON and text of each pair (two runs of one command) agree loosely', async () => {
    for (const stage of ['ok', 'deadline']) {
      const j = (await parse(`ghz/${stage}-report.json`)).summary;
      const t = (await parse(`ghz/${stage}-summary.txt`)).summary;
      expect(relErr(t.requests, j.requests!), stage).toBeLessThan(0.01);
      expect(relErr(t.rps, j.rps!), stage).toBeLessThan(0.01);
      expect(relErr(t.latencyMs.p50, j.latencyMs.p50!), stage).toBeLessThan(0.25);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Locust
// ---------------------------------------------------------------------------------------------

/** A small RFC 4180 reader for these few-line files (kept apart from the importer's parser). */
function csvRows(t: string): Record<string, string>[] {
  const lines = t.split('\n').filter((l) => l !== '');
  const split = (l: string): string[] => {
    const out: string[] = [];
    let cur = '';
    let q = false;
    for (let i = 0; i < l.length; i++) {
      const c = l[i]!;
      if (q) {
        if (c === '"' && l[i + 1] === '"') {
          cur += '"';
          i++;
        } else if (c === '"') q = false;
        else cur += c;
      } else if (c === '"') q = true;
      else if (c === ',') {
        out.push(cur);
        cur = '';
      } else cur += c;
    }
    out.push(cur);
    return out;
  };
  const head = split(lines[0]!.replace(/\r$/, ''));
  return lines.slice(1).map((l) => {
    const f = split(l.replace(/\r$/, ''));
    expect(f).toHaveLength(head.length);
    return Object.fromEntries(head.map((h, i) => [h, f[i]!]));
  });
}

const LOCUST = { ok: { failures: 0 }, errors: { failures: 1 } } as const;

describe('Locust fixtures: CSVs, console and final JSON of the same run', () => {
  for (const stage of Object.keys(LOCUST) as (keyof typeof LOCUST)[]) {
    const stats = csvRows(text(`locust/${stage}_stats.csv`));
    const agg = stats.find((r) => r.Name === 'Aggregated')!;
    const history = csvRows(text(`locust/${stage}_stats_history.csv`)).filter((r) => r.Name === 'Aggregated');
    const lastHist = history[history.length - 1]!;
    // biome-ignore lint/suspicious/noExplicitAny: Locust's final JSON, read by path; a wrong path fails the assertion
    const final = JSON.parse(text(`locust/${stage}-final.json`)) as Record<string, any>[];
    const n = Number(agg['Request Count']);
    const e = Number(agg['Failure Count']);

    it(`${stage}_stats.csv: the Aggregated row as written`, async () => {
      expect(agg).toBeDefined();
      // one endpoint: the Aggregated row repeats it
      const ep = stats.filter((r) => r.Name !== 'Aggregated');
      expect(ep).toHaveLength(1);
      for (const k of ['Request Count', 'Failure Count', 'Average Response Time', 'Requests/s', '99%'])
        expect(ep[0]![k]).toBe(agg[k]);

      const run = await parse(`locust/${stage}_stats.csv`);
      expect(run.format).toBe('locust');
      const s = run.summary;
      expect(n).toBeGreaterThan(1000);
      expect(s.requests).toBe(n);
      expect(s.errors).toBe(e);
      if (LOCUST[stage].failures) expect(e).toBeGreaterThan(0);
      else expect(e).toBe(0);
      expect(s.rps).toBe(Number(agg['Requests/s']));
      expect(relErr(s.durationSeconds, n / Number(agg['Requests/s']))).toBeLessThan(1e-12);
      expect(s.latencyMs.mean).toBe(Number(agg['Average Response Time']));
      expect(s.latencyMs.min).toBe(Number(agg['Min Response Time']));
      expect(s.latencyMs.max).toBe(Number(agg['Max Response Time']));
      expect(s.latencyMs.p50).toBe(Number(agg['50%']));
      expect(s.latencyMs.p75).toBe(Number(agg['75%']));
      expect(s.latencyMs.p90).toBe(Number(agg['90%']));
      expect(s.latencyMs.p95).toBe(Number(agg['95%']));
      expect(s.latencyMs.p99).toBe(Number(agg['99%']));
      expect(s.latencyMs.p999).toBe(Number(agg['99.9%']));
      expect(run.latencyDistribution!.find((d) => d.percentile === 100)!.ms).toBe(Number(agg['100%']));
      expect(run.timeline).toBeNull();
    });

    it(`${stage}_stats_history.csv: same snapshot as _stats.csv, timeline sums to its totals`, async () => {
      // Locust writes both files at the same moment: the last Aggregated row is the stats row
      expect(lastHist['Total Request Count']).toBe(agg['Request Count']);
      expect(lastHist['Total Failure Count']).toBe(agg['Failure Count']);
      expect(lastHist['Total Average Response Time']).toBe(agg['Average Response Time']);
      expect(lastHist['Total Max Response Time']).toBe(agg['Max Response Time']);

      const run = await parse(`locust/${stage}_stats_history.csv`);
      expect(['locust', 'locust-history']).toContain(run.format);
      const s = run.summary;
      expect(s.requests).toBe(n);
      expect(s.errors).toBe(e);
      expect(s.latencyMs.mean).toBe(Number(agg['Average Response Time']));
      expect(s.latencyMs.min).toBe(Number(agg['Min Response Time']));
      expect(s.latencyMs.max).toBe(Number(agg['Max Response Time']));
      const tl = run.timeline!;
      expect(tl).not.toBeNull();
      expect(sum(tl.map((b) => b.requests))).toBe(n);
      expect(sum(tl.map((b) => b.errors))).toBe(e);
      // one bucket per second of the history's own clock, gaps included
      const ts = history.map((r) => Number(r.Timestamp));
      expect(tl).toHaveLength(ts[ts.length - 1]! - ts[0]! + 1);
      expect(tl.map((b) => b.t)).toEqual(tl.map((_, i) => i));
      // each bucket is the rise of the cumulative count in that row
      history.forEach((r, i) => {
        const prev = i === 0 ? 0 : Number(history[i - 1]!['Total Request Count']);
        expect(tl[Number(r.Timestamp) - ts[0]!]!.requests).toBe(Number(r['Total Request Count']) - prev);
      });
    });

    it(`${stage}_failures.csv: occurrences add up to the failure count`, async () => {
      const rows = csvRows(text(`locust/${stage}_failures.csv`));
      const occ = rows.map((r) => Number(r.Occurrences));
      expect(sum(occ)).toBe(e);
      const http = sum(
        rows.filter((r) => (r.Error ?? '').startsWith("HTTPError('500 ")).map((r) => Number(r.Occurrences)),
      );
      const run = await parse(`locust/${stage}_failures.csv`);
      expect(run.format).toBe('locust-failures');
      expect(run.summary.non2xx).toBe(http);
      expect(run.summary.transportErrors).toBe(e - http);
      if (LOCUST[stage].failures) {
        // the server's -fail-rate (HTTP 500) and -drop-rate (closed without a response) both showed
        expect(http).toBeGreaterThan(0);
        expect(e - http).toBeGreaterThan(0);
      }
    });

    it(`${stage}_exceptions.csv: header only, refused with a typed error`, async () => {
      expect(text(`locust/${stage}_exceptions.csv`).trim()).toBe('Count,Message,Traceback,Nodes');
      const r = await ingest({ name: '', bytes: readFileSync(fx(`locust/${stage}_exceptions.csv`)) }).catch(
        (x: unknown) => x,
      );
      expect(r).toBeInstanceOf(IngestError);
    });

    it(`${stage}-console.txt: the last table printed`, async () => {
      const t = text(`locust/${stage}-console.txt`);
      expect(t).toContain('Starting Locust 2.47.0');
      const rows = [
        ...t.matchAll(/^\s+Aggregated\s+(\d+)\s+(\d+)\(([\d.]+)%\)\s+\|\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+\|/gm),
      ];
      const last = rows[rows.length - 1]!;
      const run = await parse(`locust/${stage}-console.txt`);
      expect(run.format).toBe('locust');
      const s = run.summary;
      expect(s.requests).toBe(Number(last[1]));
      expect(s.errors).toBe(Number(last[2]));
      expect(s.latencyMs.mean).toBe(Number(last[4]));
      expect(s.latencyMs.min).toBe(Number(last[5]));
      expect(s.latencyMs.max).toBe(Number(last[6]));
      expect(s.latencyMs.p50).toBe(Number(last[7]));
      // printed at most a moment before the CSV snapshot: never more, and close to it
      expect(s.requests!).toBeLessThanOrEqual(n);
      expect(relErr(s.requests, n)).toBeLessThan(0.02);
      expect(s.errors!).toBeLessThanOrEqual(e);
      // the console truncates the CSV's exact figures to whole ms
      expect(s.latencyMs.max).toBe(Math.trunc(Number(agg['Max Response Time'])));
    });

    it(`${stage}-final.json: final totals, at least the last CSV snapshot`, async () => {
      expect(final).toHaveLength(1);
      const f = final[0]!;
      const run = await parse(`locust/${stage}-final.json`);
      expect(['locust', 'locust-json']).toContain(run.format);
      const s = run.summary;
      expect(s.requests).toBe(f.num_requests);
      expect(s.errors).toBe(f.num_failures);
      expect(sum(Object.values(f.response_times as Record<string, number>))).toBe(f.num_requests);
      expect(relErr(s.latencyMs.mean, f.total_response_time / f.num_requests)).toBeLessThan(1e-12);
      expect(s.latencyMs.min).toBe(f.min_response_time);
      expect(s.latencyMs.max).toBe(f.max_response_time);
      // the timeline is Locust's own per-second counters
      expect(sum(run.timeline!.map((b) => b.requests))).toBe(f.num_requests);
      expect(sum(run.timeline!.map((b) => b.errors))).toBe(f.num_failures);
      // written after the last CSV snapshot of the same run
      expect(f.num_requests).toBeGreaterThanOrEqual(n);
      expect(f.num_failures).toBeGreaterThanOrEqual(e);
      expect(f.max_response_time).toBeGreaterThanOrEqual(Number(agg['Max Response Time']));
      expect(f.min_response_time).toBeLessThanOrEqual(Number(agg['Min Response Time']));
      expect(Number(agg['Average Content Size'])).toBeGreaterThan(0);
    });
  }
});

describe('every ghz and Locust fixture file is covered here', () => {
  it('no file left untested', () => {
    const covered = new Set<string>(['locust/README.md', 'locust/locustfile.py', 'ghz/README.md']);
    // Locust 1.6 files: server/test/ingest/loadtest/locust.test.ts
    for (const f of ['-console.txt', '_stats.csv', '_failures.csv', '_stats_history.csv'])
      covered.add(`locust/v1-errors${f}`);
    for (const s of ['ok', 'deadline']) for (const f of ['report.json', 'summary.txt']) covered.add(`ghz/${s}-${f}`);
    for (const s of Object.keys(LOCUST)) {
      for (const f of [
        '_stats.csv',
        '_stats_history.csv',
        '_failures.csv',
        '_exceptions.csv',
        '-final.json',
        '-console.txt',
      ])
        covered.add(`locust/${s}${f}`);
    }
    for (const tool of ['ghz', 'locust']) {
      for (const f of readdirSync(fx(tool))) expect(covered.has(`${tool}/${f}`), `${tool}/${f} has no test`).toBe(true);
    }
  });
});
