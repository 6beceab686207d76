import { oneLine } from '../../api/untrusted-text.ts';
import { counterRequests } from '../../ingest/loadtest/prometheus.ts';
import { type Fetcher, ProfilerError } from './guarded-fetch.ts';

/**
 * The load behind an imported run, from a Prometheus-compatible server (Prometheus, Thanos, Mimir,
 * VictoriaMetrics: anything that answers `GET /api/v1/query`): the stage editor names the service's
 * requests counter with a selector, as `http_requests_total{job="api"}`. For each run, the server is
 * asked for that counter's raw samples from a margin before the run's window to a margin after it
 * (a range selector, evaluated at the margin's end), and the requests served in exactly the window
 * are read from them (ingest/loadtest/prometheus.ts `counterRequests`: each series interpolated at
 * the window's edges, resets undone, series added up).
 */

/** Samples are asked for this far either side of a window: scrape intervals up to a minute. */
export const REQUESTS_MARGIN_MS = 60_000;

/** A counter selector, `name{label="v",…}` or `{…}`: what a range selector can be made of. */
const SELECTOR = /^(?:[A-Za-z_:][A-Za-z0-9_:]*(?:\{[^{}]*\})?|\{[^{}]*\})$/;

/** A requests query as the stage editor gives it: a counter selector, printable and bounded. */
export function checkRequestsQuery(raw: string): string {
  const s = raw.trim();
  if (s.length > 2000)
    throw new ProfilerError(400, 'invalid-request', 'requestsQuery: longer than 2000 characters', 'requestsQuery');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\u0000-\u001f\u007f]/.test(s))
    throw new ProfilerError(
      400,
      'invalid-request',
      'requestsQuery: control characters (NUL, escape, newline…) are refused',
      'requestsQuery',
    );
  if (!SELECTOR.test(s))
    throw new ProfilerError(
      400,
      'invalid-request',
      `requestsQuery: the service's requests counter as a selector, as http_requests_total{job="api"} (no function, no range: stagediff reads the counter's samples around each run's window), got "${oneLine(s).slice(0, 200)}"`,
      'requestsQuery',
    );
  return s;
}

/** What one run's query asked and what the server answered. */
export interface RequestsAnswer {
  /** The query as sent: the selector with its range. */
  evaluated: string;
  /** The requests served in the window, from the answer. */
  requests: number;
  /** The server's answer, verbatim. */
  answer: string;
}

/** Seconds since the epoch as Prometheus's `time` parameter takes them (milliseconds kept exactly). */
function promTime(ms: number): string {
  const whole = Math.round(ms);
  const s = Math.floor(whole / 1000);
  const frac = whole - s * 1000;
  return frac === 0 ? String(s) : `${s}.${String(frac).padStart(3, '0')}`;
}

/** A short, printable piece of a server's own words (they end up in a page and a terminal). */
function quoted(v: unknown): string {
  return oneLine(String(v)).slice(0, 300);
}

/** The requests served in [startMs, endMs] by the counter `selector`, as the server at `base` has it. */
export async function queryRequests(
  fetch: Fetcher,
  base: URL,
  selector: string,
  startMs: number,
  endMs: number,
): Promise<RequestsAnswer> {
  const from = Math.floor(startMs - REQUESTS_MARGIN_MS);
  const to = Math.ceil(endMs + REQUESTS_MARGIN_MS);
  const evaluated = `${selector}[${to - from}ms]`;
  const u = new URL(base.href);
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/api/v1/query`;
  u.search = new URLSearchParams({ query: evaluated, time: promTime(to) }).toString();
  let a: Awaited<ReturnType<Fetcher>>;
  try {
    a = await fetch(u);
  } catch (e) {
    // The fetcher names the profiler's URL; here the server asked is the requests one.
    if (e instanceof ProfilerError && e.param === 'url')
      throw new ProfilerError(e.status, e.code, `requestsUrl: ${e.message}`, 'requestsUrl');
    throw e;
  }
  const answer = a.body.toString('utf8');
  const fail = (why: string) =>
    new ProfilerError(
      422,
      'requests-query-failed',
      `requestsQuery: ${why} (query ${quoted(evaluated)})`,
      'requestsQuery',
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    throw fail(`the server answered HTTP ${a.status} with something other than the Prometheus API's JSON`);
  }
  const o = parsed as { status?: unknown; error?: unknown; errorType?: unknown } | null;
  if (o?.status !== 'success')
    throw fail(
      `the server refused it: ${o?.errorType ? `${quoted(o.errorType)}: ` : ''}${o?.error ? quoted(o.error) : `HTTP ${a.status}`}`,
    );
  const c = counterRequests(parsed, startMs, endMs);
  if ('why' in c) throw fail(quoted(c.why));
  return { evaluated, requests: c.requests, answer };
}
