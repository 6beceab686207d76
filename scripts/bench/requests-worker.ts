// Child process of the bench's "requests" section: reads one Go execution trace for its requests and
// their parts along the critical path (ingest/trace/requests.ts and request-figures.ts, nothing else:
// no summary, no derived profile) with the trace limits of the environment (TRACE_*), and prints one
// JSON line: the method, the requests found, the status and how long it took.
//   node --import tsx scripts/bench/requests-worker.ts TRACE
import { fileSource } from '../../server/src/ingest/source.ts';
import { type Transition, transitionOf } from '../../server/src/ingest/trace/events.ts';
import { readTrace, traceLimitsFromEnv } from '../../server/src/ingest/trace/reader.ts';
import { RequestCollector } from '../../server/src/ingest/trace/requests.ts';
import { requestFigures } from '../../server/src/ingest/trace/request-figures.ts';

const file = process.argv[2];
if (!file) {
  console.error('usage: requests-worker.ts TRACE');
  process.exit(2);
}
const limits = traceLimitsFromEnv();
const t0 = performance.now();
const c = new RequestCollector(limits.maxRequestStates, limits.maxRequests);
const t: Transition = { kind: 'goroutine', id: 0, from: 0, to: 0, reason: '', stack: 0 };
const info = await readTrace(fileSource(file), (e) => c.event(e, transitionOf(e, t) ? t : null), limits);
const f = requestFigures(c.finish(info.endTime), c.entries);
console.log(
  JSON.stringify({
    ms: performance.now() - t0,
    method: f.method,
    status: f.status,
    reason: f.reason,
    requests: f.duration.count,
    groups: f.groups.length,
    p99Nanos: f.duration.p99Nanos,
  }),
);
