import type { RequestsStage, RequestsTrace, RequestsView, TailWait } from '../api/requests.ts';
import type { RuntimeStage } from '../api/runtime.ts';
import type { TraceArtifactSummary } from '../api/resources.ts';
import type { ComparisonTree } from '../store/index.ts';
import { pathSegments, REQUEST_LATENCY_EDGES, REQUEST_PART_NAMES } from '../model/trace-requests.ts';
import type { AnalysisService } from './analysis.ts';
import { ChangeEngine } from './changes.ts';
import { ServiceError } from './errors.ts';
import { findStage } from './stage-profiles.ts';

/** Tail waits listed per stage, at most. */
const MAX_TAIL_WAITS = 20;

/** Parts where a request waits rather than runs: listed first among the tail's waits. */
const RUNNING_PARTS = new Set(['running', 'runnable']);

const NO_DURATIONS = { count: 0, totalNanos: 0, meanNanos: 0, p50Nanos: 0, p90Nanos: 0, p99Nanos: 0, maxNanos: 0 };

/** One trace's figures as stored, its histogram still on its own bins (first bin, counts). */
interface TraceFigures {
  trace: Omit<RequestsTrace, 'histogram'>;
  histogram: { first: number; counts: number[] } | null;
}

function traceFigures(x: RuntimeStage['traces'][number]): TraceFigures {
  const r = (x.summary as TraceArtifactSummary).requests;
  const base = { artifactId: x.artifactId, filename: x.filename };
  if (!r?.histogram) {
    const empty = Object.fromEntries(REQUEST_PART_NAMES.map((p) => [p, 0]));
    return {
      trace: {
        ...base,
        status: 'unread',
        reason: 'recorded before the request analysis kept its histogram and paths: upload the trace again',
        method: r?.method ?? 'none',
        name: r?.name ?? '',
        omitted: r?.omitted ?? 0,
        duration: r?.duration ?? NO_DURATIONS,
        parts: r?.parts ?? (Object.fromEntries(REQUEST_PART_NAMES.map((p) => [p, NO_DURATIONS])) as never),
        median: r?.median ?? ({ ...empty, durationNanos: 0, requests: 0 } as never),
        tail: r?.tail ?? ({ ...empty, durationNanos: 0, requests: 0 } as never),
        waitStacks: [],
        slowest: [],
      },
      histogram: null,
    };
  }
  return {
    trace: {
      ...base,
      status: r.status,
      reason: r.reason,
      method: r.method,
      name: r.name,
      omitted: r.omitted,
      duration: r.duration,
      parts: r.parts,
      median: r.median,
      tail: r.tail,
      waitStacks: r.waitStacks ?? [],
      slowest: r.slowest.map(({ path, ...q }) => ({
        ...q,
        segments: path ? pathSegments(path) : [],
        segmentsOmitted: path?.omitted ?? 0,
      })),
    },
    histogram: r.status === 'ok' ? r.histogram : null,
  };
}

/** The trace a stage's parts and slowest requests are shown from: the one whose P99 is the (lower) median of its traces'. */
function shownTrace(traces: RequestsTrace[]): RequestsTrace | null {
  const ok = traces.filter((t) => t.status === 'ok' && t.duration.count > 0);
  const sorted = ok.sort((a, b) => a.duration.p99Nanos - b.duration.p99Nanos);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? null;
}

/** Where a stage's slowest requests spent their critical paths, by goroutine entry, part and wait stack. */
function tailWaits(traces: RequestsTrace[]): TailWait[] {
  const by = new Map<string, TailWait>();
  for (const t of traces)
    for (const q of t.slowest) {
      const seen = new Set<string>();
      for (const s of q.segments) {
        const stack = t.waitStacks[s.stack] ?? [];
        const key = `${s.part}\u0000${s.entry}\u0000${stack.join('\n')}`;
        let w = by.get(key);
        if (!w) {
          w = { entry: s.entry, part: s.part, stack, nanos: 0, requests: 0 };
          by.set(key, w);
        }
        w.nanos += s.endNanos - s.startNanos;
        if (!seen.has(key)) {
          seen.add(key);
          w.requests++;
        }
      }
    }
  return [...by.values()]
    .sort(
      (a, b) =>
        Number(RUNNING_PARTS.has(a.part)) - Number(RUNNING_PARTS.has(b.part)) ||
        b.nanos - a.nanos ||
        (a.entry < b.entry ? -1 : a.entry > b.entry ? 1 : 0),
    )
    .slice(0, MAX_TAIL_WAITS);
}

/**
 * The Requests view of a pair of stages (ids or names): each stage's traces with their request figures
 * as stored (one trace's own), their latency histograms on one set of log-scale bins, the slowest
 * requests' critical paths, and the change engine's request rows. Reads stored summaries only.
 */
export async function requestsView(
  svc: AnalysisService,
  tree: ComparisonTree,
  q: { base: string; target: string },
): Promise<RequestsView> {
  const base = findStage(tree, q.base, 'base');
  const target = findStage(tree, q.target, 'target');
  if (base.id === target.id)
    throw new ServiceError('invalid-request', `base and target are the same stage ("${base.name}")`, {
      param: 'target',
    });
  const rows = await new ChangeEngine(svc).runtimeRows(tree, base, target);
  const sides = [rows.base, rows.target].map((st) => ({ st, figures: st.traces.map(traceFigures) }));
  // One set of bins for both stages: from the lowest non-empty bin of any trace to the highest.
  let lo = Number.POSITIVE_INFINITY;
  let hi = -1;
  for (const s of sides)
    for (const f of s.figures)
      if (f.histogram && f.histogram.counts.length > 0) {
        lo = Math.min(lo, f.histogram.first);
        hi = Math.max(hi, f.histogram.first + f.histogram.counts.length - 1);
      }
  const bins = hi < 0 ? 0 : hi - lo + 1;
  const edgesNanos = hi < 0 ? [] : REQUEST_LATENCY_EDGES.slice(lo, hi + 2);
  const place = (h: { first: number; counts: number[] } | null): number[] => {
    const out = new Array<number>(bins).fill(0);
    if (h) for (const [k, c] of h.counts.entries()) out[h.first + k - lo]! += c;
    return out;
  };
  const [b, t] = sides.map(({ st, figures }): RequestsStage => {
    const all = figures.map((f) => ({ ...f.trace, histogram: place(f.histogram) }));
    const shown = shownTrace(all);
    const waits = tailWaits(all.filter((x) => x.status === 'ok'));
    // the slowest requests (their paths and wait stacks) of the shown trace only: bounded however many traces
    const traces = all.map((x) => (x === shown ? x : { ...x, slowest: [], waitStacks: [] }));
    const histogram = new Array<number>(bins).fill(0);
    for (const x of traces) for (const [k, c] of x.histogram.entries()) histogram[k]! += c;
    const methods = new Set(traces.filter((x) => x.status === 'ok' && x.method !== 'none').map((x) => x.method));
    return {
      stageId: st.stageId,
      name: st.name,
      method: methods.size === 0 ? 'none' : methods.size > 1 ? 'mixed' : [...methods][0]!,
      traces,
      histogram,
      requests: histogram.reduce((x, y) => x + y, 0),
      shownTrace: shown?.artifactId ?? null,
      tailWaits: waits,
    };
  }) as [RequestsStage, RequestsStage];
  let status: RequestsView['status'] = 'ok';
  let reason = '';
  for (const s of [b, t]) {
    if (status !== 'ok' || s.requests > 0) continue;
    const large = s.traces.find((x) => x.status === 'too-large');
    const unread = s.traces.find((x) => x.status === 'unread');
    if (large) {
      status = 'too-large';
      reason = `stage "${s.name}": ${large.filename} is too large for the request analysis (${large.reason})`;
    } else {
      status = 'no-requests';
      reason =
        s.traces.length === 0
          ? `stage "${s.name}" has no execution trace`
          : unread
            ? `stage "${s.name}": ${unread.filename} ${unread.reason}`
            : `stage "${s.name}" has no traced requests (no runtime/trace tasks, no net/http connection goroutines)`;
    }
  }
  return {
    status,
    reason,
    parts: [...REQUEST_PART_NAMES],
    edgesNanos,
    base: b,
    target: t,
    figures: rows.figures.filter((c) => c.metric.startsWith('request-')),
  };
}
