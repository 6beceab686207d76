import type { ComparisonSource } from '../client/comparison-source.ts';

/*
 * What the agent surface reads and writes through: the HTTP API of one stagediff server, whichever way
 * it is reached (a remote server over HTTP, a throwaway in-process server over capture folders, or the
 * serving process itself for /mcp). The tools never call the analysis or the store directly, so every
 * answer is the API's answer and every bound of the API (fair share, rate limits, body sizes) applies.
 */

export interface ApiAnswer {
  status: number;
  text: string;
  /** Seconds the API asked to wait before retrying (Retry-After), when it refused for rate. */
  retryAfter: string | null;
}

/** Sends one API request; `token` is a comparison's edit token (Authorization: Bearer). */
export type ApiSend = (method: 'GET' | 'PATCH', path: string, body?: unknown, token?: string) => Promise<ApiAnswer>;

export interface McpBackend {
  send: ApiSend;
  /** The comparisons this surface was pointed at: list_comparisons without ids lists these. */
  known: string[];
  /** Where share links of this server point (null: a local, in-process server). */
  origin: string | null;
  /** Human-readable name of where the answers come from, for the server's instructions. */
  where: string;
}

/** An API refusal, with the API's own message and status. */
export class ApiRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfter: string | null,
  ) {
    super(message);
  }
}

function message(a: ApiAnswer, method: string, path: string): string {
  let text = a.text.slice(0, 300);
  try {
    const body = JSON.parse(a.text) as { error?: { message?: string } };
    if (body.error?.message) text = body.error.message;
  } catch {
    /* not JSON */
  }
  const retry = a.retryAfter ? ` (retry after ${a.retryAfter} s)` : '';
  return `${method} ${path.split('?')[0]}: HTTP ${a.status}: ${text}${retry}`;
}

/** JSON of a successful answer, or an ApiRefusal naming the status and the API's message. */
export async function request<T>(
  b: McpBackend,
  method: 'GET' | 'PATCH',
  path: string,
  body?: unknown,
  token?: string,
): Promise<T> {
  const a = await b.send(method, path, body, token);
  if (a.status >= 400) throw new ApiRefusal(a.status, message(a, method, path), a.retryAfter);
  return JSON.parse(a.text) as T;
}

/** The same API as a ComparisonSource over one comparison (what `report` and `check` read). */
export function comparisonSource(b: McpBackend, comparisonId: string): ComparisonSource {
  return {
    comparisonId,
    get: <T>(path: string) => request<T>(b, 'GET', path),
    getOptional: async <T>(path: string) => {
      try {
        return await request<T>(b, 'GET', path);
      } catch (e) {
        if (e instanceof ApiRefusal && e.status >= 400 && e.status < 500 && e.status !== 429) return null;
        throw e;
      }
    },
    getBytes: async () => {
      throw new Error('images are not served through the agent surface');
    },
    publicUrl: (path: string) => (b.origin ? `${b.origin}${path}` : null),
    close: async () => undefined,
  };
}

/** A backend over a server reached by HTTP (`stagediff mcp --server URL`). */
export function httpBackend(origin: string, known: string[]): McpBackend {
  const base = origin.replace(/\/+$/, '');
  return {
    known,
    origin: base,
    where: base,
    send: async (method, path, body, token) => {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (token) headers.authorization = `Bearer ${token}`;
      let res: Response;
      try {
        res = await fetch(`${base}${path}`, {
          method,
          headers,
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(120_000),
        });
      } catch (e) {
        const cause =
          (e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message;
        return {
          status: 502,
          text: JSON.stringify({ error: { message: `cannot reach ${base}: ${cause}` } }),
          retryAfter: null,
        };
      }
      return { status: res.status, text: await res.text(), retryAfter: res.headers.get('retry-after') };
    },
  };
}

/** The inject function of a Fastify app, as much of it as the backend uses. */
export type Inject = (o: {
  method: 'GET' | 'PATCH';
  url: string;
  remoteAddress?: string;
  headers?: Record<string, string>;
  payload?: string;
}) => Promise<{ statusCode: number; body: string; headers: Record<string, unknown> }>;

/**
 * A backend over an app in this process: capture folders loaded into a throwaway server, or the serving
 * process itself, where `remoteAddress` is the agent's own address so the fair share and the rate
 * limits count its calls as its own.
 */
export function injectBackend(
  inject: Inject,
  opts: { known: string[]; origin: string | null; where: string; remoteAddress?: string },
): McpBackend {
  return {
    known: opts.known,
    origin: opts.origin,
    where: opts.where,
    send: async (method, path, body, token) => {
      const headers: Record<string, string> = {};
      if (body !== undefined) headers['content-type'] = 'application/json';
      if (token) headers.authorization = `Bearer ${token}`;
      const r = await inject({
        method,
        url: path,
        headers,
        ...(opts.remoteAddress ? { remoteAddress: opts.remoteAddress } : {}),
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
      const retry = r.headers['retry-after'];
      return { status: r.statusCode, text: r.body, retryAfter: retry === undefined ? null : String(retry) };
    },
  };
}
