/**
 * A plain net/http server's connection opened inside the trace: no keep-alive wait comes before its
 * first request (net/http reads the first request at once, and peeks for the next one after each
 * response), so the first request runs from the goroutine's start. On the demo's baseline trace
 * (fixtures/traces/demo-go1.26-baseline.trace) the in-process upstream stub gets a new connection for
 * every call: each such goroutine that finished its first request inside the trace (it went on to peek
 * for the next one: bufio.(*Reader).Peek under net/http.(*conn).serve on its own stack) has that request
 * counted, from its creation.
 */
import { describe, expect, it } from 'vitest';
import { RequestCollector } from '../../../src/ingest/trace/requests.ts';
import { type Transition, transitionOf } from '../../../src/ingest/trace/events.ts';
import { G_NOT_EXIST } from '../../../src/ingest/trace/format.ts';
import type { OrderedEvent } from '../../../src/ingest/trace/order.ts';
import { defaultTraceLimits, readTrace } from '../../../src/ingest/trace/reader.ts';
import { fileSource } from '../../../src/ingest/source.ts';
import { fixturesDir } from '../../helpers/paths.ts';

/** The functions of a stack, leaf first. */
function functions(e: OrderedEvent, stack: number): string[] {
  return (e.gen.stacks.get(stack) ?? []).map((pc) => {
    const f = e.gen.frames.get(pc);
    return f && f.fn !== 0 ? (e.gen.strings.get(f.fn) ?? '') : '';
  });
}

describe('the first request of a connection opened inside the trace', () => {
  it('is counted from the goroutine start, up to its first keep-alive wait', async () => {
    const path = `${fixturesDir}traces/demo-go1.26-baseline.trace`;
    const c = new RequestCollector(8_000_000, 1_000_000);
    const t: Transition = { kind: 'goroutine', id: 0, from: 0, to: 0, reason: '', stack: 0 };
    let first = -1;
    const created = new Map<number, number>();
    const peeked = new Map<number, number>();
    await readTrace(
      fileSource(path),
      (e) => {
        if (first < 0) first = e.time;
        const isT = transitionOf(e, t);
        c.event(e, isT ? t : null);
        if (!isT || t.kind !== 'goroutine' || t.stack === 0) return;
        const fns = functions(e, t.stack);
        if (t.from === G_NOT_EXIST && fns[fns.length - 1] === 'net/http.(*conn).serve') created.set(t.id, e.time);
        const k = fns.indexOf('bufio.(*Reader).Peek');
        if (e.g === t.id && k >= 0 && fns[k + 1] === 'net/http.(*conn).serve')
          if (created.has(t.id) && !peeked.has(t.id)) peeked.set(t.id, e.time);
      },
      defaultTraceLimits(),
    );
    const r = c.finish();
    expect(r.method).toBe('http-connections');
    // hundreds of connections opened and served inside the trace
    expect(peeked.size).toBeGreaterThan(100);
    const firstOf = new Map<number, { startNanos: number; endNanos: number }>();
    for (const q of r.requests) {
      if (!created.has(q.goroutine)) continue;
      const f = firstOf.get(q.goroutine);
      if (!f || q.startNanos < f.startNanos) firstOf.set(q.goroutine, q);
    }
    // each connection that finished its first request has it, and no other connection opened here does
    expect([...firstOf.keys()].sort((a, b) => a - b)).toEqual([...peeked.keys()].sort((a, b) => a - b));
    for (const [g, q] of firstOf) {
      // from the goroutine's start (or later, if it waited for the request's bytes) to its first peek
      expect(q.startNanos).toBeGreaterThanOrEqual(created.get(g)! - first);
      expect(q.endNanos).toBe(peeked.get(g)! - first);
    }
    // most start with the goroutine: the stub's client writes the request as soon as it connects
    const atStart = [...firstOf].filter(([g, q]) => q.startNanos === created.get(g)! - first).length;
    expect(atStart).toBeGreaterThan(0);
  });
});
