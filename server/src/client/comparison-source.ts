import { type ClientQuery, type EndpointName, type Params, type Reply, endpointUrl } from '../api/endpoints.ts';

/**
 * Where `report` and `check` read a comparison: the same HTTP API either way. A server is asked over
 * HTTP; a folder written by `stagediff capture --out` is loaded into a throwaway in-process server
 * (temporary SQLite, analysis on the calling thread: capture-folders.ts), so local figures are the
 * server's figures.
 */
export interface ComparisonSource {
  /** GETs an API path (starting with /api/); rejects with the API's own message on an error status. */
  get<T>(path: string): Promise<T>;
  /** Like get, but resolves null on a 4xx (an optional view the comparison has no data for). */
  getOptional<T>(path: string): Promise<T | null>;
  /** GETs an API path as bytes (images). */
  getBytes(path: string): Promise<Buffer>;
  /** Absolute URL of an API path when the comparison lives on a server others can reach, else null. */
  publicUrl(path: string): string | null;
  comparisonId: string;
  close(): Promise<void>;
}

type QueryArg<N extends EndpointName> = [ClientQuery<N>] extends [never] ? Record<string, never> : ClientQuery<N>;

/** The URL of endpoint N of the contract, for this comparison (path parameters besides the id given). */
export function apiPath<N extends EndpointName>(
  src: Pick<ComparisonSource, 'comparisonId'>,
  name: N,
  query?: QueryArg<N>,
  params?: Omit<Params<N>, 'id'>,
): string {
  return endpointUrl(name, { id: src.comparisonId, ...(params as Record<string, string>) }, (query ?? {}) as never);
}

/** Calls endpoint N of the contract for this comparison and returns its typed answer. */
export function call<N extends EndpointName>(src: ComparisonSource, name: N, query?: QueryArg<N>): Promise<Reply<N>> {
  return src.get<Reply<N>>(apiPath(src, name, query));
}

/** Like call, but null on a 4xx (a view the comparison has no data for). */
export function callOptional<N extends EndpointName>(
  src: ComparisonSource,
  name: N,
  query?: QueryArg<N>,
): Promise<Reply<N> | null> {
  return src.getOptional<Reply<N>>(apiPath(src, name, query));
}

class ApiCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function apiMessage(status: number, path: string, text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    if (body.error?.message) return `GET ${path}: HTTP ${status}: ${body.error.message}`;
  } catch {
    /* not JSON */
  }
  return `GET ${path}: HTTP ${status}: ${text.slice(0, 200)}`;
}

/** `--server URL --comparison ID`, or `--comparison` given as a share link (`https://host/c/ID`). */
export function serverSource(server: string | undefined, comparison: string): ComparisonSource {
  let origin = server?.replace(/\/+$/, '');
  let id = comparison;
  const link = /^(https?:\/\/.+?)\/c\/([A-Za-z0-9_-]+)\/?(?:[?#].*)?$/.exec(comparison);
  if (link) {
    origin ??= link[1]!;
    id = link[2]!;
  }
  if (!origin) throw new Error('--comparison ID needs --server URL (or give the share link as --comparison)');
  if (!/^https?:\/\//.test(origin)) throw new Error(`--server must be an http(s) URL, got "${origin}"`);
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new Error(`--comparison: not a comparison id or share link: "${id}"`);
  const fetchPath = async (path: string): Promise<Response> => {
    const url = `${origin}${path}`;
    try {
      return await fetch(url, { signal: AbortSignal.timeout(120_000) });
    } catch (e) {
      const cause = (e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message;
      throw new Error(`cannot reach ${url}: ${cause}`);
    }
  };
  const getText = async (path: string) => {
    const res = await fetchPath(path);
    const text = await res.text();
    if (!res.ok) throw new ApiCallError(res.status, apiMessage(res.status, path, text));
    return text;
  };
  return {
    comparisonId: id,
    get: async <T>(path: string) => JSON.parse(await getText(path)) as T,
    getOptional: async <T>(path: string) => {
      try {
        return JSON.parse(await getText(path)) as T;
      } catch (e) {
        if (e instanceof ApiCallError && e.status >= 400 && e.status < 500) return null;
        throw e;
      }
    },
    getBytes: async (path: string) => {
      const res = await fetchPath(path);
      const body = Buffer.from(await res.arrayBuffer());
      if (!res.ok) throw new ApiCallError(res.status, apiMessage(res.status, path, body.toString('utf8')));
      return body;
    },
    publicUrl: (path: string) => `${origin}${path}`,
    close: async () => undefined,
  };
}

/** A source over an app in this process (tests, and local folders); `origin` makes public links. */
export function injectSource(
  app: { inject: (o: { url: string }) => Promise<{ statusCode: number; body: string; rawPayload: Buffer }> },
  comparisonId: string,
  origin: string | null,
): ComparisonSource {
  const call = async (path: string) => {
    const r = await app.inject({ url: path });
    if (r.statusCode >= 400) throw new ApiCallError(r.statusCode, apiMessage(r.statusCode, path, r.body));
    return r;
  };
  return {
    comparisonId,
    get: async <T>(path: string) => JSON.parse((await call(path)).body) as T,
    getOptional: async <T>(path: string) => {
      try {
        return JSON.parse((await call(path)).body) as T;
      } catch (e) {
        if (e instanceof ApiCallError && e.status < 500) return null;
        throw e;
      }
    },
    getBytes: async (path: string) => (await call(path)).rawPayload,
    publicUrl: (path: string) => (origin ? `${origin}${path}` : null),
    close: async () => undefined,
  };
}
