import type { Change, TailChange } from '../api/changes.ts';
import type { RuntimeStage } from '../api/runtime.ts';
import type { TraceArtifactSummary } from '../api/resources.ts';
import { REQUEST_PART_WORDS, tailSentence } from '../api/words.ts';
import { NAMED_REQUEST_PARTS } from '../model/trace-requests.ts';

/** Goroutines (by entry function) the tail's rows name, at most. */
const MAX_GOROUTINES = 8;

/** A row of the engine: its figure's values on each side, judged (services/changes.ts builds it). */
export type RowOf = (
  f: { metric: string; label: string; subject: string | null },
  base: number[],
  target: number[],
) => Change;

/** The request figures of a stage's traces that have requests (those made before `tailVia` included). */
function traceRequests(side: RuntimeStage) {
  return side.traces.flatMap((x) => {
    const r = (x.summary as TraceArtifactSummary).requests;
    return r && r.status === 'ok' && r.duration.count > 0 ? [r] : [];
  });
}

/** Each entry function's tail time, one value per trace (0 where the tail did not go through it). */
function viaValues(side: RuntimeStage): Map<string, number[]> | null {
  const rs = traceRequests(side);
  if (rs.length === 0 || rs.some((r) => !r.tailVia)) return null;
  const out = new Map<string, number[]>();
  rs.forEach((r, i) => {
    for (const v of r.tailVia!) {
      if (v.entry === '') continue;
      let vs = out.get(v.entry);
      if (!vs) {
        vs = new Array<number>(rs.length).fill(0);
        out.set(v.entry, vs);
      }
      vs[i] = v.nanos;
    }
  });
  return out;
}

const delta = (c: Change) => Math.abs((c.target?.median ?? 0) - (c.base?.median ?? 0));
const byDelta = (a: Change, b: Change) =>
  delta(b) - delta(a) || (a.subject ?? a.metric).localeCompare(b.subject ?? b.metric);

/**
 * The tail of a pair (api/changes.ts TailChange) from its runtime rows and both stages' traces; null
 * unless both stages have traces with requests.
 */
export function tailChange(
  b: RuntimeStage,
  t: RuntimeStage,
  figures: readonly Change[],
  row: RowOf,
): TailChange | null {
  if (traceRequests(b).length === 0 || traceRequests(t).length === 0) return null;
  const p99 = figures.find((c) => c.metric === 'request-p99');
  if (!p99) return null;
  const words = new Map<string, string>(NAMED_REQUEST_PARTS.map((p) => [`request-tail-${p}`, REQUEST_PART_WORDS[p]]));
  const parts = figures.filter((c) => words.has(c.metric)).sort(byDelta);
  const goroutines: Change[] = [];
  const bv = viaValues(b);
  const tv = viaValues(t);
  if (bv && tv) {
    const zeros = (n: number) => new Array<number>(n).fill(0);
    const nb = traceRequests(b).length;
    const nt = traceRequests(t).length;
    for (const entry of new Set([...bv.keys(), ...tv.keys()]))
      goroutines.push(
        row(
          {
            metric: 'request-tail-via',
            label: 'Slowest 1 % of traced requests, time in goroutines of this entry on the critical path',
            subject: entry,
          },
          bv.get(entry) ?? zeros(nb),
          tv.get(entry) ?? zeros(nt),
        ),
      );
    goroutines.sort(byDelta);
    goroutines.length = Math.min(goroutines.length, MAX_GOROUTINES);
  }
  const t0 = { p99, parts, goroutines };
  return { ...t0, sentence: tailSentence(t0, (c) => words.get(c.metric) ?? c.label) };
}
