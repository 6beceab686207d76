import type { ProfilerSettings } from '../../config.ts';
import type { PprofLimits } from '../../ingest/pprof/index.ts';
import { ProfilerError, checkProfilerUrl, guardedFetcher } from './guarded-fetch.ts';
import { type ImportOutcome, checkSelector, importFromParca } from './import-parca.ts';
import { importFromPyroscope } from './import-pyroscope.ts';

export { ProfilerError };

/** What a client asks of an import (the API body). */
export interface ProfilerImportAsk {
  source: 'parca' | 'pyroscope';
  url: string;
  query: string;
  from: string;
  to: string;
  runs: number;
}

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
): Promise<ImportOutcome> {
  const url = checkProfilerUrl(ask.url, settings.hosts);
  const selector = checkSelector(ask.query);
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
    return ask.source === 'pyroscope'
      ? await importFromPyroscope(fetcher, req, limits)
      : await importFromParca(fetcher, req, limits);
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
