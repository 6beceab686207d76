import { lookup } from 'node:dns/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';

/**
 * Fetches from a continuous profiler on behalf of a client, without becoming an open proxy: only
 * hosts the server's settings name (PROFILER_HOSTS) are reached, the address a name resolves to is
 * the one connected to (no second lookup a DNS answer could change), redirects are not followed,
 * and every fetch is bounded in time (PROFILER_FETCH_TIMEOUT_MS), in bytes
 * (PROFILER_MAX_RESPONSE_BYTES) and in number per import (PROFILER_MAX_FETCHES).
 */

/** Why an import stopped: an HTTP status for the client, a code, and the parameter it concerns. */
export class ProfilerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

export interface FetchLimits {
  /** Host names, host:port pairs or IP addresses the server may fetch from (empty: none). */
  hosts: string[];
  timeoutMs: number;
  maxResponseBytes: number;
  maxFetches: number;
}

/** One answer: its status and body (bytes, already bounded). */
export interface Answer {
  status: number;
  body: Buffer;
}

/**
 * A profiler's answer other than 200 as a 502 for the client: the profiler's own words (the `message`
 * of its JSON error, Parca's gateway and Connect alike, else the text as it came), cut short.
 */
export function profilerFailure(a: Answer, who: string, what: string): ProfilerError {
  let msg = a.body.toString('utf8').slice(0, 300);
  try {
    const m = (JSON.parse(a.body.toString('utf8')) as { message?: unknown }).message;
    if (typeof m === 'string') msg = m.slice(0, 300);
  } catch {
    // not a JSON error: the text as it came
  }
  return new ProfilerError(502, 'profiler-failed', `${who} answered ${what} with HTTP ${a.status}: ${msg}`);
}

/** A POST's body (Connect's binary protocol), when the fetch is not a GET. */
export interface PostBody {
  body: Buffer;
  contentType: string;
}

/** A fetcher: GET (or POST) of a URL. The guarded one below, a recording wrapper, or a test's own. */
export type Fetcher = (url: URL, post?: PostBody) => Promise<Answer>;

/** Is `host` (lower-case name or address) with `port` listed? An entry without a port allows every port. */
function listed(hosts: string[], host: string, port: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return hosts.some((entry) => {
    const e = entry.trim().toLowerCase();
    let name = e;
    let p: string | undefined;
    const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(e);
    if (bracketed) {
      name = bracketed[1]!;
      p = bracketed[2];
    } else if (isIP(e) !== 6) {
      const m = /^(.+):(\d+)$/.exec(e);
      if (m) {
        name = m[1]!;
        p = m[2];
      }
    }
    return name !== '' && name === bare && (p === undefined || p === port);
  });
}

/** The checks made before any connection: a URL's scheme and host against the allow list. */
export function checkProfilerUrl(raw: string, hosts: string[], param = 'url'): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ProfilerError(400, 'invalid-request', `${param}: not a URL: "${raw.slice(0, 200)}"`, param);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new ProfilerError(
      400,
      'invalid-request',
      `${param}: only http:// and https:// profiler URLs are fetched`,
      param,
    );
  if (url.username || url.password)
    throw new ProfilerError(
      400,
      'invalid-request',
      `${param}: a profiler URL with a user name or password is refused`,
      param,
    );
  if (hosts.length === 0)
    throw new ProfilerError(
      403,
      'profiler-host-not-allowed',
      `this server fetches from no profiler: its setting PROFILER_HOSTS names no host (set it to the Parca or Pyroscope hosts it may reach, e.g. PROFILER_HOSTS=parca.internal:7070)`,
      param,
    );
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  if (!listed(hosts, url.hostname, port))
    throw new ProfilerError(
      403,
      'profiler-host-not-allowed',
      `${param}: the host ${url.host} is not among the profiler hosts this server may fetch from (PROFILER_HOSTS)`,
      param,
    );
  return url;
}

/**
 * The guarded fetcher of one import. Each call checks its URL again (the allow list, before any
 * connection), resolves the name once and connects to that address; an IP entry of the list must
 * match what a listed name resolves to only when the name itself is not listed.
 */
export function guardedFetcher(limits: FetchLimits, signal?: AbortSignal): Fetcher {
  let fetches = 0;
  const fetcher: Fetcher = async (url: URL, post?: PostBody) => {
    checkProfilerUrl(url.href, limits.hosts);
    if (++fetches > limits.maxFetches)
      throw new ProfilerError(
        413,
        'too-many-fetches',
        `the import needs more than ${limits.maxFetches} fetches from the profiler (PROFILER_MAX_FETCHES): use a shorter window or fewer runs`,
      );
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let address: string;
    let family: number;
    if (isIP(host)) {
      address = host;
      family = isIP(host);
    } else {
      try {
        const r = await lookup(host);
        address = r.address;
        family = r.family;
      } catch (e) {
        throw new ProfilerError(502, 'profiler-unreachable', `cannot resolve ${host}: ${(e as Error).message}`, 'url');
      }
    }
    return new Promise<Answer>((resolve, reject) => {
      const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = request(url, {
        method: post ? 'POST' : 'GET',
        headers: post
          ? {
              'content-type': post.contentType,
              'content-length': String(post.body.length),
              'connect-protocol-version': '1',
            }
          : { accept: 'application/json' },
        // The address resolved above, so a second DNS answer cannot point the connection elsewhere.
        lookup: (_name, opts, cb) => {
          if ((opts as { all?: boolean }).all)
            (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address, family }]);
          else (cb as (e: null, a: string, f: number) => void)(null, address, family);
        },
        ...(signal ? { signal } : {}),
      });
      const timer = setTimeout(() => {
        req.destroy(
          new ProfilerError(
            504,
            'profiler-timeout',
            `${url.host} did not answer ${url.pathname} within ${limits.timeoutMs} ms (PROFILER_FETCH_TIMEOUT_MS)`,
          ),
        );
      }, limits.timeoutMs);
      req.on('error', (e) => {
        clearTimeout(timer);
        reject(
          e instanceof ProfilerError
            ? e
            : new ProfilerError(
                502,
                'profiler-unreachable',
                `cannot fetch ${url.host}${url.pathname}: ${e.message}`,
                'url',
              ),
        );
      });
      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          clearTimeout(timer);
          res.resume();
          req.destroy();
          reject(
            new ProfilerError(
              502,
              'profiler-redirect',
              `${url.host}${url.pathname} answered a redirect (HTTP ${status}); redirects are not followed: give the profiler's own URL`,
              'url',
            ),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > limits.maxResponseBytes) {
            req.destroy(
              new ProfilerError(
                502,
                'profiler-answer-too-large',
                `${url.host}${url.pathname} answered more than ${limits.maxResponseBytes} bytes (PROFILER_MAX_RESPONSE_BYTES)`,
              ),
            );
            return;
          }
          chunks.push(c);
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status, body: Buffer.concat(chunks) });
        });
        res.on('error', () => undefined);
      });
      req.end(post?.body);
    });
  };
  budgets.set(fetcher, () => ({ max: limits.maxFetches, used: fetches }));
  return fetcher;
}

/** A guarded fetcher's bound on fetches (PROFILER_MAX_FETCHES) and how many it has made. */
export interface FetchBudget {
  max: number;
  used: number;
}

const budgets = new WeakMap<Fetcher, () => FetchBudget>();

/**
 * The fetch budget of a guarded fetcher (null for another fetcher): an importer that knows how many
 * fetches it still needs refuses up front, rather than after fetching up to the bound.
 */
export function fetchBudget(fetch: Fetcher): FetchBudget | null {
  return budgets.get(fetch)?.() ?? null;
}
