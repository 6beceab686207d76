import type { ProfilerSettings } from '../../config.ts';
import type { PprofLimits } from '../../ingest/pprof/index.ts';
import { type Fetcher, ProfilerError, checkProfilerUrl, guardedFetcher } from './guarded-fetch.ts';
import { type ImportOutcome, checkSelector, importFromParca } from './import-parca.ts';
import { importFromPyroscope } from './import-pyroscope.ts';
import { checkRequestsQuery, queryRequests } from './prometheus.ts';
import { REQUESTS_SCHEMA, type RequestsRecord } from '../../model/requests-record.ts';

export { ProfilerError };

/** What a client asks of an import (the API body). */
export interface ProfilerImportAsk {
  source: 'parca' | 'pyroscope';
  url: string;
  query: string;
  from: string;
  to: string;
  runs: number;
  /** A Prometheus-compatible server's base URL, for the requests of each run (with `requestsQuery`). */
  requestsUrl?: string;
  /** The service's requests counter, as a selector: http_requests_total{job="api"} (prometheus.ts). */
  requestsQuery?: string;
}

/** The requests a run's window served, as the requests query answered (null: no query given). */
export interface RunRequests {
  requests: number;
  fromMs: number;
  toMs: number;
  evaluated: string;
  filename: string;
}

export type ProfilerImportOutcome = Omit<ImportOutcome, 'runs'> & {
  runs: (ImportOutcome['runs'][number] & { requests: RunRequests | null })[];
};

/** A time as RFC 3339 or milliseconds since the epoch; a 400 naming the parameter otherwise. */
export function parseWindowTime(raw: string, param: 'from' | 'to'): number {
  const s = raw.trim();
  const ms = /^\d{10,16}$/.test(s)
    ? Number(s)
    : /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(s)
      ? Date.parse(s)
      : Number.NaN;
  if (!Number.isFinite(ms))
    throw new ProfilerError(
      400,
      'invalid-request',
      `${param}: an RFC 3339 time (2026-11-29T04:03:27Z) or milliseconds since the epoch, got "${s.slice(0, 60)}"`,
      param,
    );
  return ms;
}

/**
 * One import: its request checked (URL against PROFILER_HOSTS before any connection, selector,
 * window, runs), then fetched under the settings' bounds and the whole import's deadline.
 */
export async function runProfilerImport(
  settings: ProfilerSettings,
  ask: ProfilerImportAsk,
  limits: Partial<PprofLimits>,
  signal?: AbortSignal,
): Promise<ProfilerImportOutcome> {
  const url = checkProfilerUrl(ask.url, settings.hosts);
  const selector = checkSelector(ask.query);
  // Both or neither; both checked before any connection, as the profiler's URL is.
  const wantsRequests = (ask.requestsUrl ?? '').trim() !== '' || (ask.requestsQuery ?? '').trim() !== '';
  if (wantsRequests && !(ask.requestsUrl ?? '').trim())
    throw new ProfilerError(
      400,
      'invalid-request',
      'requestsUrl: a requests query needs the Prometheus-compatible server to ask (http://host:9090)',
      'requestsUrl',
    );
  const requestsUrl = wantsRequests ? checkProfilerUrl(ask.requestsUrl!, settings.hosts, 'requestsUrl') : null;
  const requestsQuery = wantsRequests ? checkRequestsQuery(ask.requestsQuery ?? '') : null;
  const fromMs = parseWindowTime(ask.from, 'from');
  const toMs = parseWindowTime(ask.to, 'to');
  if (!(toMs > fromMs))
    throw new ProfilerError(400, 'invalid-request', 'to: the window must end after it starts', 'to');
  if (!Number.isInteger(ask.runs) || ask.runs < 1 || ask.runs > settings.maxRuns)
    throw new ProfilerError(
      400,
      'invalid-request',
      `runs: a whole number from 1 to ${settings.maxRuns} (PROFILER_MAX_RUNS)`,
      'runs',
    );
  const deadline = AbortSignal.timeout(settings.importTimeoutMs);
  const all = signal ? AbortSignal.any([signal, deadline]) : deadline;
  const fetcher = guardedFetcher(
    {
      hosts: settings.hosts,
      timeoutMs: settings.timeoutMs,
      maxResponseBytes: settings.maxResponseBytes,
      maxFetches: settings.maxFetches,
    },
    all,
  );
  try {
    const req = { url, selector, fromMs, toMs, runs: ask.runs };
    const outcome =
      ask.source === 'pyroscope'
        ? await importFromPyroscope(fetcher, req, limits)
        : await importFromParca(fetcher, req, limits);
    return requestsUrl && requestsQuery
      ? await withRequests(fetcher, outcome, requestsUrl, requestsQuery)
      : { ...outcome, runs: outcome.runs.map((r) => ({ ...r, requests: null })) };
  } catch (e) {
    if (deadline.aborted && !(e instanceof ProfilerError && e.status < 500))
      throw new ProfilerError(
        504,
        'profiler-timeout',
        `the import took longer than ${settings.importTimeoutMs} ms (PROFILER_IMPORT_TIMEOUT_MS): use a shorter window or fewer runs`,
      );
    throw e;
  }
}

/**
 * Each run's requests, asked of a Prometheus-compatible server for the window the run's profiles
 * cover (its delta scrapes' span; its requested sub-window when none was scraped), written as one
 * `run-K-requests.json` per run beside its profiles, so the run's profiles are divided by the load
 * of their own window (services/requests.ts pairs them by run number).
 */
export async function withRequests(
  fetch: Fetcher,
  outcome: ImportOutcome,
  base: URL,
  query: string,
): Promise<ProfilerImportOutcome> {
  const runs: ProfilerImportOutcome['runs'] = [];
  const files = outcome.files.slice();
  for (const r of outcome.runs) {
    // Whole milliseconds, as the record keeps them (so reading it back counts the same window).
    const window = r.covered ?? r.requested;
    const span = { startMs: Math.round(window.startMs), endMs: Math.round(window.endMs) };
    const a = await queryRequests(fetch, base, query, span.startMs, span.endMs);
    const filename = `run-${r.run + 1}-requests.json`;
    const record: RequestsRecord = {
      schema: REQUESTS_SCHEMA,
      url: `${base.origin}${base.pathname}`,
      query,
      evaluated: a.evaluated,
      from: new Date(span.startMs).toISOString(),
      to: new Date(span.endMs).toISOString(),
      run: r.run + 1,
      runs: outcome.runs.length,
      answer: JSON.parse(a.answer) as unknown,
    };
    files.push({ filename, bytes: Buffer.from(`${JSON.stringify(record, null, 1)}\n`) });
    runs.push({
      ...r,
      requests: { requests: a.requests, fromMs: span.startMs, toMs: span.endMs, evaluated: a.evaluated, filename },
    });
  }
  return { ...outcome, runs, files };
}
