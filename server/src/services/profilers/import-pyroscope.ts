import { gzipSync } from 'node:zlib';
import { encodePprof } from '../../ingest/pprof/encode.ts';
import { type PprofLimits, parsePprof } from '../../ingest/pprof/index.ts';
import type { Profile, ProfileKind } from '../../model/profile.ts';
import { type Fetcher, ProfilerError, fetchBudget } from './guarded-fetch.ts';
import { type ImportOutcome, type ImportedRun, type ProfilerImportRequest, retimed } from './import-parca.ts';
import { joinSampleTypes } from './join-types.ts';
import { type PyroscopeType, type SeriesPoint, pyroscopeMerge, pyroscopeSeries, pyroscopeTypes } from './pyroscope.ts';
import { type Span, subWindows } from './window.ts';

/**
 * A stage from Pyroscope: for a selector and a window, N equal sub-windows as runs, each run one
 * pprof file per Go profile kind Pyroscope holds (ProfileTypes), each kind read as its type is stored:
 *
 * - Delta kinds: CPU, allocations (alloc_objects, alloc_space), mutex and block (contentions, delay).
 *   Where this is stated: Pyroscope's Go SDK (github.com/grafana/pyroscope-go, session.go) uploads
 *   each upload period's CPU profile (StartCPUProfile … StopCPUProfile per period) and writes heap,
 *   mutex and block through godeltaprof's HeapProfiler / BlockProfiler / MutexProfiler, its sample
 *   types declared `Cumulative: false`; godeltaprof/README.md: "an efficient delta profiler for
 *   memory, mutex, and block", each profile the difference since the previous one. Alloy's
 *   pyroscope.scrape does the same for scraped cumulative profiles (its delta appender sends the
 *   difference to the previous scrape, labelled `__delta__="false"`: "we don't need to compute the
 *   delta again" on the server). So a run is the merge of the profiles whose time lies in its
 *   sub-window (SelectMergeProfile), lasting the sub-window (Pyroscope's API gives no profile's own
 *   span, so no covered window is claimed).
 * - Snapshot kinds: heap (inuse_objects, inuse_space) and goroutine. godeltaprof leaves inuse_* as
 *   they are (the same README: in-use values are not cumulative, a subtraction corrupts them), and
 *   session.go declares inuse_* and goroutine with `Aggregation: "average"`, not a sum: each profile
 *   is what was alive at one instant, so merging a window would add its snapshots up. A run takes the
 *   one profile nearest the run's end: its instant is found with SelectSeries at a fine step (Pyroscope puts a profile of time t in the point T = start + k·step
 *   with T − step < t ≤ T, and emits no empty point: see rangeSeries in its pkg/querier), then
 *   SelectMergeProfile over (T − step, T], a window holding only that instant; the file lasts 0 s.
 *   The step is 1 s, or longer for a window past 11,000 s so no series has more points than a
 *   Prometheus-style query would allow (still far below the SDK's 15 s between uploads for any
 *   window under a day and a half).
 *
 * Pyroscope keeps each sample type apart: a kind of two types (allocs, heap, mutex, block; CPU's
 * samples and cpu) is fetched type by type and joined stack by stack (join-types.ts) into one file of
 * Go's own sample types, in Go's order. Types no kind takes are reported as skipped.
 */

type Mode = 'delta' | 'snapshot';

interface KindRule {
  kind: ProfileKind;
  mode: Mode;
  /** Pyroscope's profile names for it (the first part of a type's ID). */
  names: string[];
  /** Its sample types in Go's order; the last is the one its figures are read in (total, series). */
  types: { sampleType: string; unit?: string }[];
}

const KIND_RULES: KindRule[] = [
  {
    kind: 'cpu',
    mode: 'delta',
    names: ['process_cpu'],
    types: [{ sampleType: 'samples' }, { sampleType: 'cpu', unit: 'nanoseconds' }],
  },
  {
    kind: 'allocs',
    mode: 'delta',
    names: ['memory'],
    types: [{ sampleType: 'alloc_objects' }, { sampleType: 'alloc_space' }],
  },
  {
    kind: 'heap',
    mode: 'snapshot',
    names: ['memory'],
    types: [{ sampleType: 'inuse_objects' }, { sampleType: 'inuse_space' }],
  },
  { kind: 'mutex', mode: 'delta', names: ['mutex'], types: [{ sampleType: 'contentions' }, { sampleType: 'delay' }] },
  { kind: 'block', mode: 'delta', names: ['block'], types: [{ sampleType: 'contentions' }, { sampleType: 'delay' }] },
  { kind: 'goroutine', mode: 'snapshot', names: ['goroutine', 'goroutines'], types: [{ sampleType: 'goroutine' }] },
];

/** A kind Pyroscope holds for the selector: its types present, each with its series in the window. */
interface Chosen {
  rule: KindRule;
  members: { type: PyroscopeType; points: SeriesPoint[] }[];
}

const iso = (ms: number) => new Date(ms).toISOString();

function totalOf(p: Profile, type: string): number {
  const i = p.sampleTypes.findIndex((t) => t.type === type);
  let sum = 0;
  for (const v of p.values[i < 0 ? p.values.length - 1 : i] ?? []) sum += v;
  return sum;
}

export async function importFromPyroscope(
  fetch: Fetcher,
  req: ProfilerImportRequest,
  limits: Partial<PprofLimits> = {},
): Promise<ImportOutcome> {
  const { url, selector, fromMs, toMs, runs } = req;
  const windows = subWindows(fromMs, toMs, runs);
  const types = await pyroscopeTypes(fetch, url, fromMs, toMs);
  const candidates: { rule: KindRule; types: PyroscopeType[] }[] = [];
  const taken = new Set<string>();
  for (const rule of KIND_RULES) {
    const found: PyroscopeType[] = [];
    for (const want of rule.types) {
      const t = types.find(
        (x) =>
          rule.names.includes(x.name) &&
          x.sampleType === want.sampleType &&
          (want.unit === undefined || x.sampleUnit === want.unit),
      );
      if (t) found.push(t);
    }
    if (found.length === 0) continue;
    candidates.push({ rule, types: found });
    for (const t of found) taken.add(t.id);
  }
  if (candidates.length === 0)
    throw new ProfilerError(
      404,
      'no-profiles',
      `Pyroscope has no Go profile type (process_cpu, memory, mutex, block, goroutine) between ${iso(fromMs)} and ${iso(toMs)}${
        types.length
          ? `; it has ${types
              .map((t) => t.id)
              .slice(0, 20)
              .join(', ')}`
          : ''
      }`,
      'from',
    );

  // Refused before the series and merges when they cannot all be fetched: one series per type, then
  // one merge per run and type (an upper bound: a type without points for the selector is not merged).
  const budget = fetchBudget(fetch);
  const typeCount = candidates.reduce((a, c) => a + c.types.length, 0);
  const needed = typeCount * (1 + runs);
  if (budget && budget.used + needed > budget.max)
    throw new ProfilerError(
      413,
      'too-many-fetches',
      `runs: ${runs} run${runs === 1 ? '' : 's'} of ${typeCount} profile types need ${budget.used + needed} fetches from Pyroscope, more than ${budget.max} (PROFILER_MAX_FETCHES): ask for fewer runs`,
      'runs',
    );

  const deltaStep = Math.max(1, Math.round((toMs - fromMs) / 1000 / Math.max(1, runs * 60)));
  const snapshotStep = Math.max(1, Math.ceil((toMs - fromMs) / 1000 / 11_000));
  const chosen: Chosen[] = [];
  for (const c of candidates) {
    const step = c.rule.mode === 'snapshot' ? snapshotStep : deltaStep;
    const members: Chosen['members'] = [];
    for (const type of c.types) {
      const points = await pyroscopeSeries(fetch, url, type.id, selector, fromMs, toMs, step);
      const inside = points.filter((p) => p.timestampMs >= fromMs && p.timestampMs <= toMs);
      if (inside.length > 0) members.push({ type, points: inside });
    }
    if (members.length > 0) chosen.push({ rule: c.rule, members });
  }
  if (chosen.length === 0)
    throw new ProfilerError(
      422,
      'no-profiles',
      `query: Pyroscope has no profile for ${selector} between ${iso(fromMs)} and ${iso(toMs)} (of the types ${[...taken].slice(0, 12).join(', ')}): check the selector and the window`,
      'query',
    );

  const out: ImportedRun[] = windows.map((w, run) => ({ run, requested: w, covered: null, profiles: [] }));
  const files: { filename: string; bytes: Buffer }[] = [];
  const source = `Pyroscope ${url.host}`;
  for (const c of chosen) {
    const lead = c.members[c.members.length - 1]!;
    const leadType = lead.type.sampleType;
    const query = `${lead.type.id}${selector}`;
    const typeList = c.members.map((m) => m.type.id).join(' + ');
    const fetchRun = async (w: Span): Promise<Profile> => {
      const parts: Profile[] = [];
      for (const m of c.members)
        parts.push(parsePprof(await pyroscopeMerge(fetch, url, m.type.id, selector, w.startMs, w.endMs), limits));
      return joinSampleTypes(parts);
    };
    const add = (
      k: number,
      p: Profile,
      span: Span,
      durationMs: number,
      scrapes: number,
      seriesTotal: number | null,
    ) => {
      const filename = `run-${k + 1}-${c.rule.kind}.pb.gz`;
      const w = windows[k]!;
      const how =
        c.rule.mode === 'delta'
          ? "Pyroscope's merge of the profiles whose time lies in it, stored as deltas"
          : `the snapshot of ${iso(span.endMs)}, the one nearest the run's end (not merged: a snapshot)`;
      const comment = `stagediff import from ${source}: ${c.rule.kind} (${typeList})${selector}, run ${k + 1} of ${runs}; requested ${iso(w.startMs)} to ${iso(w.endMs)}; ${how}`;
      const profile = retimed(p, span.startMs, durationMs, comment);
      files.push({ filename, bytes: gzipSync(encodePprof(profile)) });
      out[k]!.profiles.push({
        kind: c.rule.kind,
        mode: c.rule.mode,
        query,
        scrapes,
        fromMs: span.startMs,
        toMs: span.endMs,
        total: totalOf(profile, leadType),
        seriesTotal,
        filename,
      });
    };
    if (c.rule.mode === 'delta') {
      for (let k = 0; k < runs; k++) {
        const w = windows[k]!;
        // Each instant belongs to one run: Pyroscope's window includes both ends, so a run before the
        // last stops 1 ms before the next one starts.
        const span = { startMs: w.startMs, endMs: k === runs - 1 ? w.endMs : w.endMs - 1 };
        const inRun = lead.points.filter((x) => x.timestampMs >= span.startMs && x.timestampMs <= span.endMs);
        const p = await fetchRun(span);
        if (p.sampleStack.length === 0)
          throw new ProfilerError(
            422,
            'no-profiles',
            `runs: Pyroscope has no ${lead.type.id} profile for ${selector} between ${iso(w.startMs)} and ${iso(w.endMs)} (run ${k + 1} of ${runs}): check the selector and the window, or ask for fewer runs`,
            'runs',
          );
        add(
          k,
          p,
          w,
          w.endMs - w.startMs,
          inRun.length,
          inRun.reduce((a, x) => a + x.value, 0),
        );
      }
    } else {
      const series = new Set(lead.points.map((p) => p.series));
      if (series.size > 1)
        throw new ProfilerError(
          422,
          'several-series',
          `query: ${lead.type.id} has ${series.size} series for this selector (${[...series].slice(0, 5).join('; ')}): a snapshot profile is read per target, so narrow the selector to one (e.g. add instance="…")`,
          'query',
        );
      const instants = [...new Set(lead.points.map((p) => p.timestampMs))].sort((a, b) => a - b);
      for (let k = 0; k < runs; k++) {
        const end = windows[k]!.endMs;
        let t = instants[0]!;
        for (const x of instants) if (Math.abs(x - end) <= Math.abs(t - end)) t = x;
        const p = await fetchRun({ startMs: Math.max(fromMs, t - snapshotStep * 1000 + 1), endMs: t });
        add(k, p, { startMs: t, endMs: t }, 0, 1, null);
      }
    }
  }
  return { runs: out, files, skippedTypes: types.map((t) => t.id).filter((id) => !taken.has(id)) };
}
