import type { Durations } from '../../model/trace.ts';
import {
  latencyBin,
  MAX_PATH_SEGMENTS,
  PATH_SEGMENT_REQUESTS,
  MAX_WAIT_STACKS,
  WAIT_STACK_FRAMES,
  type PartNanos,
  type StoredPath,
  REQUEST_LATENCY_EDGES,
  type RequestPart,
  type SlowRequest,
  type TraceRequestFigures,
} from '../../model/trace-requests.ts';
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

/** The durations binned on REQUEST_LATENCY_EDGES, from the first non-empty bin to the last. */
export function latencyHistogram(durations: Iterable<number>): { first: number; counts: number[] } {
  const all = new Array<number>(REQUEST_LATENCY_EDGES.length - 1).fill(0);
  for (const d of durations) all[latencyBin(d)]!++;
  const first = all.findIndex((c) => c > 0);
  if (first < 0) return { first: 0, counts: [] };
  let last = all.length - 1;
  while (all[last] === 0) last--;
  return { first, counts: all.slice(first, last + 1) };
}

/** Parts that are not waits: their stretches name no stack. */
const NO_STACK_PARTS = new Set([
  PART_NAMES.indexOf('running'),
  PART_NAMES.indexOf('runnable'),
  PART_NAMES.indexOf('unknown'),
]);

/** A stack's functions to keep: the runtime's own frames above the first other one left out, at most WAIT_STACK_FRAMES. */
function waitStack(fns: string[]): string[] {
  let i = 0;
  while (i < fns.length - 1 && (fns[i]!.startsWith('runtime.') || fns[i] === '')) i++;
  return fns.slice(i, i + WAIT_STACK_FRAMES);
}

/**
 * A slow request's critical path as stored: its stretches in time order, offsets from its start, the
 * longest MAX_PATH_SEGMENTS kept; the wait stacks they name numbered in `stacks` (shared by the trace's
 * slow requests, at most MAX_WAIT_STACKS; past it a stretch names none).
 */
function storedPath(
  r: TraceRequests,
  q: TracedRequest,
  entries: ReadonlyMap<number, string>,
  stacks: { list: string[][]; byText: Map<string, number> },
): StoredPath {
  const raw = r.segments(q);
  const all: number[][] = [];
  for (let i = 0; i + 4 < raw.length; i += 5) all.push([raw[i]!, raw[i + 1]!, raw[i + 2]!, raw[i + 3]!, raw[i + 4]!]);
  const kept =
    all.length > MAX_PATH_SEGMENTS
      ? all.sort((x, y) => y[3]! - y[2]! - (x[3]! - x[2]!) || x[2]! - y[2]!).slice(0, MAX_PATH_SEGMENTS)
      : all;
  kept.sort((x, y) => x[2]! - y[2]!);
  const index = new Map<number, number>();
  const out: StoredPath = { goroutines: [], entries: [], segments: [], omitted: all.length - kept.length };
  for (const [g, part, s, e, st] of kept) {
    let k = index.get(g!);
    if (k === undefined) {
      k = out.goroutines.length;
      index.set(g!, k);
      out.goroutines.push(g!);
      out.entries.push(entries.get(g!) ?? '');
    }
    let si = -1;
    if (st! > 0 && !NO_STACK_PARTS.has(part!)) {
      const fns = waitStack(r.stack(st!));
      const text = fns.join('\n');
      const known = stacks.byText.get(text);
      if (known !== undefined) si = known;
      else if (fns.length > 0 && stacks.list.length < MAX_WAIT_STACKS) {
        si = stacks.list.length;
        stacks.list.push(fns);
        stacks.byText.set(text, si);
      }
    }
    out.segments.push(k, part!, s! - q.startNanos, e! - q.startNanos, si);
  }
  return out;
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
  const stacks = { list: [] as string[][], byText: new Map<string, number>() };
  const slowest: SlowRequest[] = qs
    .slice(Math.max(0, n - 10))
    .reverse()
    .map((q, i) => ({
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
      ...(i < PATH_SEGMENT_REQUESTS ? { path: storedPath(r, q, entries, stacks) } : {}),
    }));
  return {
    method: r.method,
    status: r.tooLarge === '' ? 'ok' : 'too-large',
    reason: r.tooLarge,
    name,
    groups: ranked.slice(0, 20),
    histogram: latencyHistogram(qs.map(span)),
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
    waitStacks: stacks.list,
    omitted: r.omitted,
  };
}
