import { type Answer, type Fetcher, ProfilerError, profilerFailure } from './guarded-fetch.ts';

/**
 * Parca's query API as its HTTP gateway serves it (`/api/profiles/…`, JSON; parca
 * query.v1alpha1.QueryService): the profile types, the per-scrape series of one type
 * (QueryRange with a step of one millisecond, so every scrape is its own point) and one scrape's
 * profile as pprof (Query, mode single, report type pprof). Parca's own merge is not used: it takes
 * every scrape whose start lies in a window, however far past the window's end it runs.
 */

export interface ParcaProfileType {
  name: string;
  sampleType: string;
  sampleUnit: string;
  periodType: string;
  periodUnit: string;
  delta: boolean;
}

/** One scrape (one point of a series): its start and span in ms since the epoch, and its total value. */
export interface Scrape {
  /** The series' labels as `k=v,…` (sorted), so scrapes of one target can be told apart. */
  series: string;
  startMs: number;
  durationMs: number;
  value: number;
}

/** The type part of a Parca query: `name:sample_type:unit:period_type:unit[:delta]`. */
export function typeKey(t: ParcaProfileType): string {
  return `${t.name}:${t.sampleType}:${t.sampleUnit}:${t.periodType}:${t.periodUnit}${t.delta ? ':delta' : ''}`;
}

/** An RFC 3339 time (any fraction digits) as ms since the epoch, truncated as Parca truncates. */
export function parseTimeMs(s: unknown): number {
  if (typeof s !== 'string') return Number.NaN;
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?Z$/.exec(s);
  if (!m) return Number.NaN;
  const whole = Date.parse(`${m[1]}Z`);
  const frac = (m[2] ?? '').padEnd(3, '0').slice(0, 3);
  return whole + Number(frac);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function api(base: URL, path: string, params: Record<string, string>): URL {
  const u = new URL(base.href);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/api/profiles/${path}`;
  u.search = new URLSearchParams(params).toString();
  u.hash = '';
  return u;
}

function json(a: Answer, what: string): unknown {
  if (a.status !== 200) throw profilerFailure(a, 'Parca', what);
  try {
    return JSON.parse(a.body.toString('utf8'));
  } catch {
    throw new ProfilerError(502, 'profiler-failed', `Parca's answer to ${what} is not JSON`);
  }
}

function bad(what: string): never {
  throw new ProfilerError(502, 'profiler-failed', `Parca's answer to ${what} is not what its API declares`);
}

export async function parcaTypes(fetch: Fetcher, base: URL, fromMs: number, toMs: number): Promise<ParcaProfileType[]> {
  const body = json(await fetch(api(base, 'types', { start: iso(fromMs), end: iso(toMs) })), 'profile types') as {
    types?: unknown;
  };
  if (!Array.isArray(body.types)) bad('profile types');
  return body.types.map((t: Record<string, unknown>) => ({
    name: String(t.name ?? ''),
    sampleType: String(t.sampleType ?? ''),
    sampleUnit: String(t.sampleUnit ?? ''),
    periodType: String(t.periodType ?? ''),
    periodUnit: String(t.periodUnit ?? ''),
    delta: t.delta === true,
  }));
}

/** Every scrape of a query's series whose start lies in [fromMs, toMs], one point per scrape. */
export async function parcaScrapes(
  fetch: Fetcher,
  base: URL,
  query: string,
  fromMs: number,
  toMs: number,
): Promise<Scrape[]> {
  const what = `query_range ${query}`;
  const body = json(
    await fetch(api(base, 'query_range', { query, start: iso(fromMs), end: iso(toMs), step: '0.001s' })),
    what,
  ) as { series?: unknown };
  if (!Array.isArray(body.series)) bad(what);
  const out: Scrape[] = [];
  for (const s of body.series as Record<string, unknown>[]) {
    const labels = ((s.labelset as { labels?: { name: string; value: string }[] })?.labels ?? [])
      .map((l) => `${l.name}=${l.value}`)
      .sort()
      .join(',');
    if (!Array.isArray(s.samples)) bad(what);
    for (const p of s.samples as Record<string, unknown>[]) {
      const startMs = parseTimeMs(p.timestamp);
      const value = Number(p.value ?? 0);
      const durationNs = Number(p.duration ?? 0);
      if (!Number.isFinite(startMs) || !Number.isFinite(value) || !Number.isFinite(durationNs)) bad(what);
      out.push({ series: labels, startMs, durationMs: durationNs / 1e6, value });
    }
  }
  out.sort((a, b) => a.startMs - b.startMs || (a.series < b.series ? -1 : a.series > b.series ? 1 : 0));
  return out;
}

/** The profile of the scrape(s) at one instant (ms) as pprof bytes (gzipped as Parca sends them). */
export async function parcaSingle(fetch: Fetcher, base: URL, query: string, timeMs: number): Promise<Buffer> {
  const what = `the scrape of ${query} at ${iso(timeMs)}`;
  const body = json(
    await fetch(
      api(base, 'query', {
        mode: 'MODE_SINGLE_UNSPECIFIED',
        'single.time': iso(timeMs),
        'single.query': query,
        reportType: 'REPORT_TYPE_PPROF',
      }),
    ),
    what,
  ) as { pprof?: unknown };
  if (typeof body.pprof !== 'string') bad(what);
  return Buffer.from(body.pprof, 'base64');
}
