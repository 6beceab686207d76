/**
 * Requests found in real traces and their critical paths: the annotated lock-wait program
 * (fixtures/traces/requests, one task per request) and the demo service under wrk (a plain net/http
 * server: requests from its connection goroutines, keep-alive waits excluded).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as parts from '../../../src/ingest/trace/critical-path.ts';
import { REQUEST_PARTS } from '../../../src/api/options.ts';

const { PART_NAMES } = parts;
import type { RegionsSummary } from '../../../src/ingest/trace/regions.ts';
import { RequestCollector, type TraceRequests } from '../../../src/ingest/trace/requests.ts';
import { type Transition, transitionOf } from '../../../src/ingest/trace/events.ts';
import { defaultTraceLimits, readTrace } from '../../../src/ingest/trace/reader.ts';
import { parseTrace } from '../../../src/ingest/trace/index.ts';
import { fileSource } from '../../../src/ingest/source.ts';
import { fixturesDir } from '../../helpers/paths.ts';

async function requestsOf(path: string): Promise<TraceRequests> {
  const c = new RequestCollector(8_000_000, 1_000_000);
  const t: Transition = { kind: 'goroutine', id: 0, from: 0, to: 0, reason: '', stack: 0 };
  await readTrace(fileSource(path), (e) => c.event(e, transitionOf(e, t) ? t : null), defaultTraceLimits());
  return c.finish();
}

const part = (name: (typeof PART_NAMES)[number]) => PART_NAMES.indexOf(name);
const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);

describe('a request waiting on a mutex held through 5 ms of CPU work (lockwait)', () => {
  const dir = `${fixturesDir}traces/requests/`;
  const ref = JSON.parse(readFileSync(`${dir}expected/lockwait-go1.26.regions.json`, 'utf8')) as RegionsSummary;
  const tasks = ref.tasks.sort((a, b) => a.startNanos! - b.startNanos!);

  it('finds each task as a request, with the task span go tool trace gives, split whole', async () => {
    const r = await requestsOf(`${dir}lockwait-go1.26.trace`);
    expect(r.method).toBe('tasks');
    expect(r.requests.map((q) => [q.name, q.startNanos, q.endNanos])).toEqual(
      tasks.map((t) => ['request', t.startNanos, t.endNanos]),
    );
    for (const q of r.requests) expect(sum(q.path.parts)).toBe(q.endNanos - q.startNanos);
  });

  it("follows the wait into the holder: the holder's running time is at least 90 % of the wait", async () => {
    const r = await requestsOf(`${dir}lockwait-go1.26.trace`);
    const holders = new Set(ref.goroutines.filter((g) => g.name === 'main.holder').map((g) => g.id));
    expect(holders.size).toBe(14);
    let checked = 0;
    let longest = 0;
    for (const [i, q] of r.requests.entries()) {
      // the request's own wait on the mutex, as go tool trace counts it (the task's own statistics)
      const wait = tasks[i]!.own!.blockNanos.sync ?? 0;
      if (wait < 1_000_000) continue;
      checked++;
      longest = Math.max(longest, wait);
      const holderRunning = sum(
        q.path.others.filter((o) => holders.has(o.goroutine)).map((o) => o.parts[part('running')]!),
      );
      expect(holderRunning).toBeGreaterThanOrEqual(0.9 * wait);
      // and the wait no longer counts as the request's own blocking on sync
      expect(q.path.parts[part('sync')]!).toBeLessThan(0.1 * wait);
    }
    expect(checked).toBeGreaterThanOrEqual(3);
    expect(longest).toBeGreaterThan(4_500_000);
  });
});

describe('a plain net/http service (the demo under wrk)', () => {
  it('finds the requests of its connection goroutines, keep-alive waits excluded', async () => {
    const r = await requestsOf(`${fixturesDir}traces/demo-go1.26-pooled.trace`);
    expect(r.method).toBe('http-connections');
    const orders = r.requests.filter((q) => q.name === 'main.(*service).handleOrders');
    expect(orders.length).toBeGreaterThan(1000);
    const byG = new Map<number, [number, number][]>();
    for (const q of r.requests) {
      expect(q.endNanos).toBeGreaterThan(q.startNanos);
      expect(sum(q.path.parts)).toBe(q.endNanos - q.startNanos);
      const list = byG.get(q.goroutine) ?? [];
      list.push([q.startNanos, q.endNanos]);
      byG.set(q.goroutine, list);
    }
    for (const list of byG.values()) {
      for (let i = 1; i < list.length; i++) expect(list[i]![0]).toBeGreaterThanOrEqual(list[i - 1]![1]);
    }
    // The connection goroutines' own keep-alive waits are not in any request: a request's own network
    // wait (not followed into another goroutine) is the handler's, so far below the idle time.
    const own = orders.map(
      (q) => q.path.parts[part('network')]! - sum(q.path.others.map((o) => o.parts[part('network')]!)),
    );
    expect(own.filter((v) => v >= 1_000_000)).toEqual([]);
  });
});

describe('the request figures a parsed trace carries', () => {
  it('has the annotated requests, their latency distribution and the tail next to the median', async () => {
    const m = await parseTrace(fileSource(`${fixturesDir}traces/requests/lockwait-go1.26.trace`));
    const r = m.requests!;
    expect([r.method, r.status, r.name, r.duration.count]).toEqual(['tasks', 'ok', 'request', 14]);
    const raw = await requestsOf(`${fixturesDir}traces/requests/lockwait-go1.26.trace`);
    const spans = raw.requests.map((q) => q.endNanos - q.startNanos).sort((a, b) => a - b);
    expect(r.duration.p50Nanos).toBe(spans[6]);
    expect(r.duration.p99Nanos).toBe(spans[13]);
    expect(r.tail.durationNanos).toBe(spans[13]);
    expect(r.slowest[0]!.durationNanos).toBe(spans[13]);
    // the slowest request's path names the goroutines it went through by their entry function
    expect(r.slowest.flatMap((s) => s.others.map((o) => o.entry))).toContain('main.holder');
  });

  it('gives a typed answer, not a hang, past TRACE_MAX_REQUEST_STATES; the other figures stay', async () => {
    const m = await parseTrace(fileSource(`${fixturesDir}traces/demo-go1.26-pooled.trace`), { maxRequestStates: 1000 });
    expect(m.requests!.status).toBe('too-large');
    expect(m.requests!.reason).toMatch(/more than 1000 goroutine states \(TRACE_MAX_REQUEST_STATES\)/);
    expect(m.summary.events).toBeGreaterThan(100_000);
  });
});

describe('the parts, declared once', () => {
  it('numbers each part where its name stands, and gates every named part as a request-tail row', () => {
    const numbered: [number, string][] = [
      [parts.PART_RUNNING, 'running'],
      [parts.PART_RUNNABLE, 'runnable'],
      [parts.PART_SYSCALL, 'syscall'],
      [parts.PART_NETWORK, 'network'],
      [parts.PART_SYNC, 'sync'],
      [parts.PART_CHANNEL, 'channel'],
      [parts.PART_SELECT, 'select'],
      [parts.PART_SLEEP, 'sleep'],
      [parts.PART_GC_WAIT, 'gcWait'],
      [parts.PART_OTHER, 'other'],
      [parts.PART_UNKNOWN, 'unknown'],
    ];
    for (const [i, name] of numbered) expect(PART_NAMES[i]).toBe(name);
    expect(PART_NAMES.length).toBe(parts.PART_COUNT);
    expect([...REQUEST_PARTS]).toEqual(PART_NAMES.slice(0, parts.PART_OTHER));
  });
});
