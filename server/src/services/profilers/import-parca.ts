import { gzipSync } from 'node:zlib';
import { mergeProfiles } from '../../analysis/merge.ts';
import { parsePprof, type PprofLimits } from '../../ingest/pprof/index.ts';
import { encodePprof } from '../../ingest/pprof/encode.ts';
import type { Profile, ProfileKind } from '../../model/profile.ts';
import { type Fetcher, ProfilerError, fetchBudget } from './guarded-fetch.ts';
import { joinSampleTypes } from './join-types.ts';
import { type ParcaProfileType, type Scrape, parcaScrapes, parcaSingle, parcaTypes, typeKey } from './parca.ts';
import { type RunPlan, assignScrapes, boundaries, coveredMs, cumulativePairs, nearest, planRuns } from './window.ts';

/**
 * A stage from Parca: for a selector and a window, N runs of whole scrapes, each run one pprof file
 * per profile kind with a real time and duration (window.ts says how each kind is taken). Parca
 * answers one sample type per query, so each of a kind's types is read on its own (its series, then
 * its scrapes or snapshots) and the run's parts are joined into one file of Go's sample types. Every
 * fetch is known once the series are in: an import that would pass PROFILER_MAX_FETCHES is refused
 * then, before any profile is fetched.
 */

export interface ProfilerImportRequest {
  url: URL;
  /** Label matchers, `{job="api"}` (the profile type is added per kind). */
  selector: string;
  fromMs: number;
  toMs: number;
  runs: number;
}

/** How a kind is read from a window: scrapes summed, last − first of snapshots, or one snapshot. */
export type ImportMode = 'delta' | 'cumulative' | 'snapshot';

export interface ImportedProfile {
  kind: ProfileKind;
  mode: ImportMode;
  /** The Parca query (type and selector) of the type the figures are read in (the last of the kind). */
  query: string;
  /** Scrapes read for this run (delta: those summed; cumulative: 2; snapshot: 1). */
  scrapes: number;
  /** The span the file covers (delta: first start to last end; cumulative: first to last snapshot). */
  fromMs: number;
  toMs: number;
  /** The file's total of that type (as `go tool pprof -top` totals it). */
  total: number;
  /** For delta kinds: the sum of Parca's query_range values of the scrapes taken. */
  seriesTotal: number | null;
  filename: string;
}

export interface ImportedRun extends RunPlan {
  profiles: ImportedProfile[];
}

export interface ImportOutcome {
  runs: ImportedRun[];
  files: { filename: string; bytes: Buffer }[];
  /** Profile types the profiler had in the window that no kind takes. */
  skippedTypes: string[];
}

interface KindRule {
  kind: ProfileKind;
  mode: ImportMode;
  /** Parca's profile name for it (the first part of a type's key) and whether Parca stores it as deltas. */
  name: string;
  delta: boolean;
  /**
   * Its sample types in the order Go's own profile writes them; the last is the one its figures are
   * read in (the run's total, the series, the plan of the runs).
   */
  types: { sampleType: string; unit?: string }[];
}

/**
 * Which of Parca's types each kind is made of (Go's pprof endpoints as Parca scrapes them). Parca
 * keeps each sample type of a scrape as its own type (process_cpu samples and cpu, memory's four,
 * contentions and delay): a kind takes every one of them that Parca has, and its file joins them
 * stack by stack (join-types.ts), so it holds what Go's endpoint wrote. Go writes the four memory
 * types in one profile; here alloc_objects/alloc_space (taken over a window, last − first) make the
 * allocs file and inuse_objects/inuse_space (a snapshot) the heap file, so each keeps its kind.
 */
const KIND_RULES: KindRule[] = [
  {
    kind: 'cpu',
    mode: 'delta',
    name: 'process_cpu',
    delta: true,
    types: [{ sampleType: 'samples' }, { sampleType: 'cpu', unit: 'nanoseconds' }],
  },
  {
    kind: 'allocs',
    mode: 'cumulative',
    name: 'memory',
    delta: false,
    types: [{ sampleType: 'alloc_objects' }, { sampleType: 'alloc_space' }],
  },
  {
    kind: 'heap',
    mode: 'snapshot',
    name: 'memory',
    delta: false,
    types: [{ sampleType: 'inuse_objects' }, { sampleType: 'inuse_space' }],
  },
  {
    kind: 'mutex',
    mode: 'cumulative',
    name: 'mutex',
    delta: false,
    types: [{ sampleType: 'contentions' }, { sampleType: 'delay' }],
  },
  {
    kind: 'block',
    mode: 'cumulative',
    name: 'block',
    delta: false,
    types: [{ sampleType: 'contentions' }, { sampleType: 'delay' }],
  },
  { kind: 'goroutine', mode: 'snapshot', name: 'goroutine', delta: false, types: [{ sampleType: 'goroutine' }] },
];

/** A selector as the stage editor gives it: `{…}` label matchers, printable, bounded. */
export function checkSelector(raw: string): string {
  const s = raw.trim() === '' ? '{}' : raw.trim();
  if (s.length > 1000) throw new ProfilerError(400, 'invalid-request', 'query: longer than 1000 characters', 'query');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\u0000-\u001f\u007f]/.test(s))
    throw new ProfilerError(
      400,
      'invalid-request',
      'query: control characters (NUL, escape, newline…) are refused',
      'query',
    );
  if (!/^\{[^{}]*\}$/.test(s))
    throw new ProfilerError(
      400,
      'invalid-request',
      `query: label matchers in braces, as {job="api",instance="10.0.0.1:6060"}; the profile type is added per kind, got "${s.slice(0, 200)}"`,
      'query',
    );
  return s;
}

/** The file's total of its last sample type (the one its kind's figures are read in). */
function totalOf(p: Profile): number {
  let sum = 0;
  for (const v of p.values[p.values.length - 1] ?? []) sum += v;
  return sum;
}

function negated(p: Profile): Profile {
  return { ...p, values: p.values.map((col) => col.map((v) => -v)) };
}

/** The profile at `fromMs`, lasting `durationMs` (a delta kind: its covered seconds, not the span with gaps). */
export function retimed(p: Profile, fromMs: number, durationMs: number, comment: string): Profile {
  const { timeNanosExact: _exact, ...rest } = p;
  return {
    ...rest,
    timeNanos: fromMs * 1e6,
    timeNanosExact: (BigInt(Math.round(fromMs)) * 1_000_000n).toString(),
    durationNanos: Math.round(durationMs * 1e6),
    comments: [comment],
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A kind Parca holds: its types present, in Go's order, each with its query and its scrapes in the window. */
interface Chosen {
  rule: KindRule;
  members: { type: ParcaProfileType; query: string; points: Scrape[] }[];
}

export async function importFromParca(
  fetch: Fetcher,
  req: ProfilerImportRequest,
  limits: Partial<PprofLimits> = {},
): Promise<ImportOutcome> {
  const { url, selector, fromMs, toMs, runs } = req;
  const types = await parcaTypes(fetch, url, fromMs, toMs);
  const candidates: { rule: KindRule; types: ParcaProfileType[] }[] = [];
  const taken = new Set<string>();
  for (const rule of KIND_RULES) {
    const found: ParcaProfileType[] = [];
    for (const want of rule.types) {
      const t = types.find(
        (x) =>
          x.name === rule.name &&
          x.delta === rule.delta &&
          x.sampleType === want.sampleType &&
          (want.unit === undefined || x.sampleUnit === want.unit),
      );
      if (t) found.push(t);
    }
    if (found.length === 0) continue;
    candidates.push({ rule, types: found });
    for (const t of found) taken.add(typeKey(t));
  }
  if (candidates.length === 0)
    throw new ProfilerError(
      404,
      'no-profiles',
      `Parca has no Go profile type (process_cpu, memory, mutex, block, goroutine) between ${iso(fromMs)} and ${iso(toMs)}${types.length ? `; it has ${types.map(typeKey).slice(0, 20).join(', ')}` : ''}`,
      'from',
    );
  const typeCount = candidates.reduce((a, c) => a + c.types.length, 0);
  // The series come first (one fetch per type): refused before them when even they do not fit.
  const budget = fetchBudget(fetch);
  const refuse = (needed: number, what: string): never => {
    throw new ProfilerError(
      413,
      'too-many-fetches',
      `runs: ${runs} run${runs === 1 ? '' : 's'} of ${typeCount} profile types need ${needed} fetches from Parca (${what}), more than ${budget!.max} (PROFILER_MAX_FETCHES): ask for fewer runs or a shorter window`,
      'runs',
    );
  };
  if (budget && budget.used + typeCount > budget.max) refuse(budget.used + typeCount, 'one series per type');
  const chosen: Chosen[] = [];
  for (const c of candidates) {
    const members: Chosen['members'] = [];
    for (const type of c.types) {
      const query = `${typeKey(type)}${selector}`;
      members.push({ type, query, points: await parcaScrapes(fetch, url, query, fromMs, toMs) });
    }
    chosen.push({ rule: c.rule, members });
  }
  const leadOf = (c: Chosen) => c.members[c.members.length - 1]!;
  const deltaKind = chosen.find((c) => c.rule.mode === 'delta');
  const plan = planRuns(fromMs, toMs, runs, deltaKind ? leadOf(deltaKind).points : null);
  const bounds = boundaries(plan);
  const windows = plan.map((r) => r.requested);

  // What each type's runs are read from, decided before any profile is fetched: the scrapes a delta
  // run sums, the two snapshots a cumulative run subtracts, the snapshot a run of a snapshot kind is.
  interface Reads {
    query: string;
    label: string;
    /** Per run: delta → its scrapes; cumulative → [first, last]; snapshot → [t] (empty: no run). */
    byRun: { scrapes: Scrape[]; times: number[] }[];
  }
  const reads = new Map<Chosen, Reads[]>();
  for (const c of chosen) {
    const list: Reads[] = [];
    for (const m of c.members) {
      const label = `${m.type.name} ${m.type.sampleType}`;
      const series = new Set(m.points.map((p) => p.series));
      if (c.rule.mode !== 'delta' && series.size > 1)
        throw new ProfilerError(
          422,
          'several-series',
          `query: ${label} has ${series.size} series for this selector (${[...series].slice(0, 5).join('; ')}): a cumulative or snapshot profile is read per target, so narrow the selector to one (e.g. add instance="…")`,
          'query',
        );
      let byRun: Reads['byRun'];
      if (c.rule.mode === 'delta') {
        byRun = assignScrapes(m.points, windows).map((scrapes) => ({
          scrapes,
          // Scrapes at the same instant (several targets) come back as one profile: fetched once.
          times: [...new Set(scrapes.map((s) => s.startMs))],
        }));
      } else {
        const times = m.points.map((p) => p.startMs);
        if (c.rule.mode === 'cumulative') {
          byRun = cumulativePairs(times, fromMs, toMs, bounds, label).map(([a, b]) => ({ scrapes: [], times: [a, b] }));
        } else {
          const inside = times.filter((t) => t >= fromMs && t <= toMs);
          byRun = bounds.slice(1).map((b) => ({ scrapes: [], times: inside.length === 0 ? [] : [nearest(inside, b)] }));
        }
      }
      list.push({ query: m.query, label, byRun });
    }
    reads.set(c, list);
  }
  // Refused before any profile is fetched when they cannot all be: a snapshot two runs share (the end
  // of one, the start of the next) is fetched once.
  const after = fetchBudget(fetch);
  if (after) {
    let needed = after.used;
    for (const [c, list] of reads)
      for (const r of list) {
        if (c.rule.mode !== 'cumulative') {
          for (const x of r.byRun) needed += x.times.length;
          continue;
        }
        const shared = new Set<number>();
        for (const x of r.byRun) for (const t of x.times) shared.add(t);
        needed += shared.size;
      }
    if (needed > after.max) refuse(needed, 'one per scrape or snapshot of each type');
  }

  // A snapshot two runs share is fetched once: per query, only the last one read is kept, so memory
  // holds one snapshot per type, not the window's.
  const kept = new Map<string, { t: number; p: Profile }>();
  const single = async (query: string, t: number, keep = false): Promise<Profile> => {
    const k = kept.get(query);
    if (k?.t === t) return k.p;
    const p = parsePprof(await parcaSingle(fetch, url, query, t), limits);
    if (keep) kept.set(query, { t, p });
    return p;
  };

  const out: ImportedRun[] = plan.map((r) => ({ ...r, profiles: [] }));
  const files: { filename: string; bytes: Buffer }[] = [];
  const source = `Parca ${url.host}`;
  for (const c of chosen) {
    const list = reads.get(c)!;
    const lead = list[list.length - 1]!;
    const queries = list.map((r) => r.query).join(' + ');
    for (let k = 0; k < runs; k++) {
      const leadRun = lead.byRun[k]!;
      if (leadRun.times.length === 0) continue;
      const parts: Profile[] = [];
      for (const r of list) {
        const x = r.byRun[k]!;
        if (x.times.length === 0) continue;
        if (c.rule.mode === 'delta') {
          const profiles: Profile[] = [];
          for (const t of x.times) profiles.push(await single(r.query, t));
          parts.push(mergeProfiles(profiles));
        } else if (c.rule.mode === 'cumulative') {
          const first = await single(r.query, x.times[0]!);
          const last = await single(r.query, x.times[1]!, true);
          parts.push(mergeProfiles([last, negated(first)]));
        } else {
          parts.push(await single(r.query, x.times[0]!));
        }
      }
      let info: { scrapes: number; fromMs: number; toMs: number; seriesTotal: number | null; durationMs: number };
      if (c.rule.mode === 'delta') {
        const sc = leadRun.scrapes;
        const fromK = sc[0]!.startMs;
        info = {
          scrapes: sc.length,
          fromMs: fromK,
          toMs: sc.reduce((a, s) => Math.max(a, s.startMs + s.durationMs), 0),
          seriesTotal: sc.reduce((a, s) => a + s.value, 0),
          durationMs: coveredMs(sc),
        };
      } else if (c.rule.mode === 'cumulative') {
        const [a, b] = leadRun.times as [number, number];
        info = { scrapes: 2, fromMs: a, toMs: b, seriesTotal: null, durationMs: b - a };
      } else {
        const t = leadRun.times[0]!;
        info = { scrapes: 1, fromMs: t, toMs: t, seriesTotal: null, durationMs: 0 };
      }
      const { durationMs, ...shown } = info;
      const filename = `run-${k + 1}-${c.rule.kind}.pb.gz`;
      const comment = `stagediff import from ${source}: ${queries}, run ${k + 1} of ${runs}; requested ${iso(plan[k]!.requested.startMs)} to ${iso(plan[k]!.requested.endMs)}; covered ${iso(info.fromMs)} to ${iso(info.toMs)} (${info.scrapes} scrape${info.scrapes === 1 ? '' : 's'}, ${c.rule.mode})`;
      const p = retimed(joinSampleTypes(parts), info.fromMs, durationMs, comment);
      files.push({ filename, bytes: gzipSync(encodePprof(p)) });
      out[k]!.profiles.push({
        kind: c.rule.kind,
        mode: c.rule.mode,
        query: lead.query,
        filename,
        total: totalOf(p),
        ...shown,
      });
    }
  }
  return { runs: out, files, skippedTypes: types.map(typeKey).filter((k) => !taken.has(k)) };
}
