import { gzipSync } from 'node:zlib';
import { mergeProfiles } from '../../analysis/merge.ts';
import { parsePprof, type PprofLimits } from '../../ingest/pprof/index.ts';
import { encodePprof } from '../../ingest/pprof/encode.ts';
import type { Profile, ProfileKind } from '../../model/profile.ts';
import { type Fetcher, ProfilerError } from './guarded-fetch.ts';
import { type ParcaProfileType, type Scrape, parcaScrapes, parcaSingle, parcaTypes, typeKey } from './parca.ts';
import { type RunPlan, assignScrapes, boundaries, coveredMs, cumulativePairs, nearest, planRuns } from './window.ts';

/**
 * A stage from Parca: for a selector and a window, N runs of whole scrapes, each run one pprof file
 * per profile kind with a real time and duration (window.ts says how each kind is taken).
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
  /** The Parca query (type and selector). */
  query: string;
  /** Scrapes read for this run (delta: those summed; cumulative: 2; snapshot: 1). */
  scrapes: number;
  /** The span the file covers (delta: first start to last end; cumulative: first to last snapshot). */
  fromMs: number;
  toMs: number;
  /** The file's total of its sample type (as `go tool pprof -top` totals it). */
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
  takes: (t: ParcaProfileType) => boolean;
}

/** Which of Parca's types each kind is made of (Go's pprof endpoints as Parca scrapes them). */
const KIND_RULES: KindRule[] = [
  { kind: 'cpu', mode: 'delta', takes: (t) => t.delta && t.sampleType === 'cpu' && t.sampleUnit === 'nanoseconds' },
  {
    kind: 'allocs',
    mode: 'cumulative',
    takes: (t) => !t.delta && t.name === 'memory' && t.sampleType === 'alloc_space',
  },
  { kind: 'heap', mode: 'snapshot', takes: (t) => !t.delta && t.name === 'memory' && t.sampleType === 'inuse_space' },
  { kind: 'mutex', mode: 'cumulative', takes: (t) => !t.delta && t.name === 'mutex' && t.sampleType === 'delay' },
  { kind: 'block', mode: 'cumulative', takes: (t) => !t.delta && t.name === 'block' && t.sampleType === 'delay' },
  {
    kind: 'goroutine',
    mode: 'snapshot',
    takes: (t) => !t.delta && t.name === 'goroutine' && t.sampleType === 'goroutine',
  },
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

function totalOf(p: Profile): number {
  let sum = 0;
  for (const v of p.values[0] ?? []) sum += v;
  return sum;
}

function negated(p: Profile): Profile {
  return { ...p, values: p.values.map((col) => col.map((v) => -v)) };
}

/** The profile at `fromMs`, lasting `durationMs` (a delta kind: its covered seconds, not the span with gaps). */
function retimed(p: Profile, fromMs: number, durationMs: number, comment: string): Profile {
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

export async function importFromParca(
  fetch: Fetcher,
  req: ProfilerImportRequest,
  limits: Partial<PprofLimits> = {},
): Promise<ImportOutcome> {
  const { url, selector, fromMs, toMs, runs } = req;
  const types = await parcaTypes(fetch, url, fromMs, toMs);
  const chosen: { rule: KindRule; type: ParcaProfileType; query: string }[] = [];
  const taken = new Set<string>();
  for (const rule of KIND_RULES) {
    const type = types.find(rule.takes);
    if (!type) continue;
    chosen.push({ rule, type, query: `${typeKey(type)}${selector}` });
    taken.add(typeKey(type));
  }
  if (chosen.length === 0)
    throw new ProfilerError(
      404,
      'no-profiles',
      `Parca has no Go profile type (process_cpu, memory, mutex, block, goroutine) between ${iso(fromMs)} and ${iso(toMs)}${types.length ? `; it has ${types.map(typeKey).slice(0, 20).join(', ')}` : ''}`,
      'from',
    );
  const scrapes = new Map<string, Scrape[]>();
  for (const c of chosen) scrapes.set(c.query, await parcaScrapes(fetch, url, c.query, fromMs, toMs));
  const lead = chosen.find((c) => c.rule.mode === 'delta');
  const plan = planRuns(fromMs, toMs, runs, lead ? scrapes.get(lead.query)! : null);
  const bounds = boundaries(plan);
  const windows = plan.map((r) => r.requested);

  // A snapshot two runs share (the end of one, the start of the next) is fetched once: only the last
  // one read is kept, so memory holds one snapshot per kind, not the window's.
  let kept: { key: string; p: Profile } | null = null;
  const single = async (query: string, t: number, keep = false): Promise<Profile> => {
    const key = `${query}@${t}`;
    if (kept?.key === key) return kept.p;
    const p = parsePprof(await parcaSingle(fetch, url, query, t), limits);
    if (keep) kept = { key, p };
    return p;
  };

  const out: ImportedRun[] = plan.map((r) => ({ ...r, profiles: [] }));
  const files: { filename: string; bytes: Buffer }[] = [];
  const source = `Parca ${url.host}`;
  for (const c of chosen) {
    const points = scrapes.get(c.query)!;
    const series = new Set(points.map((p) => p.series));
    if (c.rule.mode !== 'delta' && series.size > 1)
      throw new ProfilerError(
        422,
        'several-series',
        `query: ${c.type.name} ${c.type.sampleType} has ${series.size} series for this selector (${[...series].slice(0, 5).join('; ')}): a cumulative or snapshot profile is read per target, so narrow the selector to one (e.g. add instance="…")`,
        'query',
      );
    const add = (
      run: number,
      profile: Profile,
      {
        taken,
        ...info
      }: Omit<ImportedProfile, 'kind' | 'mode' | 'query' | 'filename' | 'total'> & { taken?: Scrape[] },
    ) => {
      const filename = `run-${run + 1}-${c.rule.kind}.pb.gz`;
      const comment = `stagediff import from ${source}: ${c.query}, run ${run + 1} of ${runs}; requested ${iso(plan[run]!.requested.startMs)} to ${iso(plan[run]!.requested.endMs)}; covered ${iso(info.fromMs)} to ${iso(info.toMs)} (${info.scrapes} scrape${info.scrapes === 1 ? '' : 's'}, ${c.rule.mode})`;
      const durationMs = c.rule.mode === 'snapshot' ? 0 : taken ? coveredMs(taken) : info.toMs - info.fromMs;
      const p = retimed(profile, info.fromMs, durationMs, comment);
      files.push({ filename, bytes: gzipSync(encodePprof(p)) });
      out[run]!.profiles.push({
        kind: c.rule.kind,
        mode: c.rule.mode,
        query: c.query,
        filename,
        total: totalOf(p),
        ...info,
      });
    };
    if (c.rule.mode === 'delta') {
      const byRun = assignScrapes(points, windows);
      for (let k = 0; k < runs; k++) {
        const taken = byRun[k]!;
        if (taken.length === 0) continue;
        const profiles: Profile[] = [];
        // Scrapes at the same instant (several targets) come back as one profile: fetch each instant once.
        const instants = [...new Set(taken.map((s) => s.startMs))];
        for (const t of instants) profiles.push(await single(c.query, t));
        const fromK = taken[0]!.startMs;
        const toK = taken.reduce((a, s) => Math.max(a, s.startMs + s.durationMs), 0);
        add(k, mergeProfiles(profiles), {
          scrapes: taken.length,
          fromMs: fromK,
          toMs: toK,
          seriesTotal: taken.reduce((a, s) => a + s.value, 0),
          taken,
        });
      }
    } else {
      const times = points.map((p) => p.startMs);
      if (c.rule.mode === 'cumulative') {
        const pairs = cumulativePairs(times, fromMs, toMs, bounds, `${c.type.name} ${c.type.sampleType}`);
        for (let k = 0; k < runs; k++) {
          const [a, b] = pairs[k]!;
          const first = await single(c.query, a);
          const last = await single(c.query, b, true);
          add(k, mergeProfiles([last, negated(first)]), { scrapes: 2, fromMs: a, toMs: b, seriesTotal: null });
        }
      } else {
        const inside = times.filter((t) => t >= fromMs && t <= toMs);
        if (inside.length === 0) continue;
        for (let k = 0; k < runs; k++) {
          const t = nearest(inside, bounds[k + 1]!);
          add(k, await single(c.query, t), { scrapes: 1, fromMs: t, toMs: t, seriesTotal: null });
        }
      }
    }
  }
  return { runs: out, files, skippedTypes: types.map(typeKey).filter((k) => !taken.has(k)) };
}
