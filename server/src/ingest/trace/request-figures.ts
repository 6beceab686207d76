import type { Durations } from '../../model/trace.ts';
import type { PartNanos, RequestPart, SlowRequest, TraceRequestFigures } from '../../model/trace-requests.ts';
import { PART_COUNT, PART_NAMES } from './critical-path.ts';
import type { TracedRequest, TraceRequests } from './requests.ts';

/** Nearest-rank percentile of ascending values: the ⌈p/100·n⌉-th smallest (0 when empty). */
function rank(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  const r = Math.max(1, Math.ceil((p * sorted.length) / 100));
  return sorted[Math.min(r, sorted.length) - 1]!;
}

/** The distribution of `values` (ns), as the trace summary's Durations. */
export function distribution(values: Float64Array): Durations {
  const s = Float64Array.from(values).sort();
  let total = 0;
  for (const v of s) total += v;
  return {
    count: s.length,
    totalNanos: total,
    meanNanos: s.length > 0 ? total / s.length : 0,
    p50Nanos: rank(s, 50),
    p90Nanos: rank(s, 90),
    p99Nanos: rank(s, 99),
    maxNanos: s.length > 0 ? s[s.length - 1]! : 0,
  };
}

function partNanos(parts: ArrayLike<number>): PartNanos {
  const out = {} as PartNanos;
  for (let i = 0; i < PART_COUNT; i++) out[PART_NAMES[i] as RequestPart] = parts[i] ?? 0;
  return out;
}

const span = (q: TracedRequest) => q.endNanos - q.startNanos;

/** Mean parts (and duration) of `qs`. */
function meanParts(qs: TracedRequest[]): PartNanos & { durationNanos: number; requests: number } {
  const sum = new Array<number>(PART_COUNT).fill(0);
  let d = 0;
  for (const q of qs) {
    d += span(q);
    for (let i = 0; i < PART_COUNT; i++) sum[i]! += q.path.parts[i]!;
  }
  const n = Math.max(1, qs.length);
  return { ...partNanos(sum.map((v) => v / n)), durationNanos: d / n, requests: qs.length };
}

/** Mean time the critical paths of `qs` spent in other goroutines, by entry function, most first (≤ 8). */
function viaEntries(qs: TracedRequest[], entries: ReadonlyMap<number, string>): { entry: string; nanos: number }[] {
  const by = new Map<string, number>();
  for (const q of qs)
    for (const o of q.path.others) {
      let t = 0;
      for (const v of o.parts) t += v;
      const entry = entries.get(o.goroutine) ?? '';
      by.set(entry, (by.get(entry) ?? 0) + t);
    }
  return [...by]
    .map(([entry, t]) => ({ entry, nanos: t / qs.length }))
    .sort((a, b) => b.nanos - a.nanos || (a.entry < b.entry ? -1 : 1))
    .slice(0, 8);
}

const EMPTY: Durations = {
  count: 0,
  totalNanos: 0,
  meanNanos: 0,
  p50Nanos: 0,
  p90Nanos: 0,
  p99Nanos: 0,
  maxNanos: 0,
};

/**
 * The figures of a trace's requests (model/trace-requests.ts): the group with the most time, its
 * latency and parts' distributions, the median's and the tail's parts side by side, the slowest.
 */
export function requestFigures(r: TraceRequests, entries: ReadonlyMap<number, string>): TraceRequestFigures {
  const groups = new Map<string, { name: string; count: number; totalNanos: number }>();
  for (const q of r.requests) {
    let g = groups.get(q.name);
    if (!g) {
      g = { name: q.name, count: 0, totalNanos: 0 };
      groups.set(q.name, g);
    }
    g.count++;
    g.totalNanos += span(q);
  }
  const ranked = [...groups.values()].sort((a, b) => b.totalNanos - a.totalNanos || (a.name < b.name ? -1 : 1));
  const name = ranked[0]?.name ?? '';
  const qs = r.requests.filter((q) => q.name === name).sort((a, b) => span(a) - span(b) || a.startNanos - b.startNanos);
  const n = qs.length;
  const parts = {} as Record<RequestPart, Durations>;
  for (let i = 0; i < PART_COUNT; i++)
    parts[PART_NAMES[i] as RequestPart] = n > 0 ? distribution(Float64Array.from(qs, (q) => q.path.parts[i]!)) : EMPTY;
  const lo = Math.floor(n * 0.45);
  const hi = Math.max(lo + 1, Math.ceil(n * 0.55));
  const tailFrom = n - Math.max(1, Math.ceil(n / 100));
  let assist = 0;
  let stw = 0;
  let via = 0;
  for (const q of qs) {
    assist += q.path.gcAssistNanos;
    stw += q.stwNanos;
    via += q.path.viaOthersNanos;
  }
  const slowest: SlowRequest[] = qs
    .slice(Math.max(0, n - 10))
    .reverse()
    .map((q) => ({
      goroutine: q.goroutine,
      startNanos: q.startNanos,
      durationNanos: span(q),
      parts: partNanos(q.path.parts),
      viaOthersNanos: q.path.viaOthersNanos,
      others: q.path.others.map((o) => ({
        goroutine: o.goroutine,
        entry: entries.get(o.goroutine) ?? '',
        parts: partNanos(o.parts),
      })),
    }));
  return {
    method: r.method,
    status: r.tooLarge === '' ? 'ok' : 'too-large',
    reason: r.tooLarge,
    name,
    groups: ranked.slice(0, 20),
    duration: n > 0 ? distribution(Float64Array.from(qs, span)) : EMPTY,
    parts,
    median: meanParts(n > 0 ? qs.slice(lo, Math.min(hi, n)) : []),
    tail: meanParts(n > 0 ? qs.slice(tailFrom) : []),
    gcAssistMeanNanos: n > 0 ? assist / n : 0,
    stwMeanNanos: n > 0 ? stw / n : 0,
    viaOthersMeanNanos: n > 0 ? via / n : 0,
    slowest,
    keepAliveWaitNanos: r.keepAliveWaitNanos,
    tailVia: viaEntries(n > 0 ? qs.slice(tailFrom) : [], entries),
    omitted: r.omitted,
  };
}
