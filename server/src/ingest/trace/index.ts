import type { TraceModel } from '../../model/trace.ts';
import type { ByteSource } from '../source.ts';
import { DerivedProfiles } from './derive.ts';
import { type Transition, transitionOf } from './events.ts';
import { headerVersion } from './format.ts';
import { type TraceLimits, defaultTraceLimits, readTrace } from './reader.ts';
import { TraceSummarizer } from './summary.ts';
import { RequestCollector } from './requests.ts';
import { requestFigures } from './request-figures.ts';

export { DERIVED_KINDS, type DerivedKind } from './derive.ts';
export {
  builtinTraceLimits,
  checkHeader,
  defaultTraceLimits,
  TraceLimitError,
  type TraceLimits,
  traceLimitsFromEnv,
} from './reader.ts';

/**
 * Confidence that a file is a Go execution trace: its first bytes are the `go 1.NN trace` header.
 * Any version is recognised here, so that one stagediff cannot read is refused with its version named.
 */
export function detect(head: Uint8Array): number {
  return headerVersion(head) !== null ? 0.99 : 0;
}

/**
 * Reads a Go execution trace (streamed: one generation at a time) into its summary and derived
 * profiles. Throws IngestError for anything it cannot read, within `limits`.
 */
export async function parseTrace(src: ByteSource, limits: Partial<TraceLimits> = {}): Promise<TraceModel> {
  const l = { ...defaultTraceLimits(), ...limits };
  const summary = new TraceSummarizer();
  const profiles = new DerivedProfiles(l.maxStacks);
  const requests = new RequestCollector(l.maxRequestStates, l.maxRequests);
  const t: Transition = { kind: 'goroutine', id: 0, from: 0, to: 0, reason: '', stack: 0 };
  const info = await readTrace(
    src,
    (e) => {
      if (transitionOf(e, t)) {
        summary.event(e, t);
        requests.event(e, t);
        if (t.kind === 'goroutine') profiles.transition(e, t);
      } else {
        summary.event(e, null);
        requests.event(e, null);
      }
    },
    l,
  );
  return {
    kind: 'trace',
    summary: summary.finish(info),
    profiles: profiles.finish(info.startTime, info.endTime),
    requests: requestFigures(requests.finish(info.endTime), requests.entries),
  };
}
