/**
 * The keep-alive waits of a net/http server's connection goroutines (waiting in bufio.(*Reader).Peek
 * under net/http.(*conn).serve for the client's next request) are idle time, not a request's: the
 * runtime rows leave them out of the network total. Counted while the trace streams by, they equal
 * what `go tool trace -pprof=net` gives the keep-alive wait's stacks (our derived net profile, tested
 * equal to Go's in derive tests), plus the waits still open at the trace's end, which the summary counts
 * and the profile does not.
 */
import { describe, expect, it } from 'vitest';
import { parseTrace } from '../../../src/ingest/trace/index.ts';
import { RequestCollector } from '../../../src/ingest/trace/requests.ts';
import { type Transition, transitionOf } from '../../../src/ingest/trace/events.ts';
import { defaultTraceLimits, readTrace } from '../../../src/ingest/trace/reader.ts';
import { fileSource } from '../../../src/ingest/source.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const TRACES = [
  'traces/demo-go1.26-baseline.trace',
  'traces/demo-go1.26-pooled.trace',
  'demo/baseline/run-1/trace.out',
  'demo/pooled/run-1/trace.out',
];

describe('keep-alive waits of net/http connections', () => {
  for (const f of TRACES)
    it(`${f}: as go tool trace -pprof=net counts the keep-alive stacks, open waits aside`, async () => {
      const path = `${fixturesDir}${f}`;
      const m = await parseTrace(fileSource(path));
      const c = new RequestCollector(8_000_000, 1_000_000);
      const t: Transition = { kind: 'goroutine', id: 0, from: 0, to: 0, reason: '', stack: 0 };
      await readTrace(fileSource(path), (e) => c.event(e, transitionOf(e, t) ? t : null), defaultTraceLimits());
      const p = m.profiles.net;
      const delay = p.sampleTypes.findIndex((x) => x.type === 'delay');
      let keepAlive = 0;
      let all = 0;
      for (let s = 0; s < p.sampleStack.length; s++) {
        const st = p.sampleStack[s]!;
        const names: string[] = [];
        for (let i = p.stackOffsets[st]!; i < p.stackOffsets[st + 1]!; i++)
          names.push(p.frames[p.stackFrames[i]!]!.name);
        const v = p.values[delay]![s]!;
        all += v;
        const k = names.indexOf('bufio.(*Reader).Peek');
        if (k >= 0 && names[k + 1] === 'net/http.(*conn).serve') keepAlive += v;
      }
      expect(keepAlive).toBeGreaterThan(0);
      expect(c.keepAliveEnded).toBe(keepAlive);
      // with the waits still open at the end: no more than the summary's open network waits
      const total = m.requests!.keepAliveWaitNanos!;
      expect(total).toBeGreaterThanOrEqual(keepAlive);
      expect(total - keepAlive).toBeLessThanOrEqual(m.summary.blocked.network.totalNanos - all);
      expect(total).toBeLessThan(m.summary.blocked.network.totalNanos);
    });
});
