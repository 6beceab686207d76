/**
 * The web client's side of the API contract (server/src/api): every request is made by endpoint name,
 * its URL built by the contract's own `endpointUrl`, its parameters, query, body and answer typed from
 * the contract's schemas. Only routes.ts is imported at run time (plain data); the schemas' types are
 * erased at build time, so the bundle carries no schema library and no server code.
 */
import type { Body, ClientQuery, EndpointName, Params, Reply, ErrorBody } from '../../../server/src/api/endpoints.ts';
import type { FileResult } from '../../../server/src/api/resources.ts';
import type { Static } from 'typebox';
import { ENDPOINT_ROUTES, endpointUrl } from '../../../server/src/api/routes.ts';

export type { Body, EndpointName, Reply };

/* The contract's shapes under the names the page uses (all derived, none restated). */
export type Comparison = Reply<'getComparison'>;
export type Stage = Comparison['stages'][number];
export type Artifact = Stage['artifacts'][number];
export type CaptureRecord = Stage['captures'][number];
export type CaptureRun = CaptureRecord['runs'][number];
export type CreatedComparison = Reply<'createComparison'>;
export type { FileResult };
export type {
  ChangePointMark,
  StageTable,
  StageRow,
  StageChanges,
  Change,
  Verdict,
  Estimate,
  FigureKey,
} from '../../../server/src/api/changes.ts';
export type {
  Diff,
  DiffNode,
  DiffRow,
  DiffMode,
  DiffModeParam,
  Flamegraph,
  FlameNode,
  Granularity,
  ProfileKind,
  SampleTypeInfo,
  Sandwich,
  Top,
  Trajectory,
  Timeline,
  TimelineRun,
  GcStages,
  Benchmarks,
  BenchmarkRow,
} from '../../../server/src/api/views.ts';
export type {
  ProfileSummary,
  BenchmarkArtifactSummary,
  ArtifactSummary,
  MetricsArtifactSummary,
  TraceArtifactSummary,
} from '../../../server/src/api/resources.ts';
export type GcTrace = Reply<'gc'>['stages'][number]['traces'][number]['trace'];
export type GcCycle = GcTrace['cycles'][number];

/** `{error: {code, message, param?}}`: every 4xx and 5xx answer. */
type ApiErrorBody = Static<typeof ErrorBody>;

/** An API failure with the server's error code and message (or a network/parse failure). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The request parameter the server named as at fault, if any. */
    readonly param?: string,
  ) {
    super(message);
  }
}

function isErrorBody(v: unknown): v is ApiErrorBody {
  return typeof v === 'object' && v !== null && 'error' in v && typeof (v as ApiErrorBody).error?.message === 'string';
}

async function readError(res: Response): Promise<ApiError> {
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    /* not JSON */
  }
  if (isErrorBody(body)) return new ApiError(res.status, body.error.code, body.error.message, body.error.param);
  return new ApiError(res.status, `http-${res.status}`, `${res.status} ${res.statusText || 'request failed'}`);
}

/**
 * A write refused for its rate (429, past RATE_LIMIT_WRITES a window) is sent again after the server's
 * Retry-After, so a folder of many files goes up at the pace the server allows instead of failing half-way;
 * at most this many tries, and never after a wait longer than a minute.
 */
const WRITE_TRIES = 4;
const MAX_RETRY_WAIT_SECONDS = 60;

/** Seconds to wait before sending a refused write again, or null when it is not to be sent again. */
export function retryWait(status: number, retryAfter: string | null, attempt: number): number | null {
  if (status !== 429 || attempt >= WRITE_TRIES || retryAfter === null || retryAfter.trim() === '') return null;
  const s = Number(retryAfter);
  return Number.isFinite(s) && s >= 0 && s <= MAX_RETRY_WAIT_SECONDS ? s : null;
}

function sleep(seconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, seconds * 1000);
    signal?.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** fetch for a write: sent again after a 429's Retry-After (see retryWait). */
async function fetchWrite(url: string, init: RequestInit): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const res = await fetch(url, init);
    const wait = retryWait(res.status, res.headers.get('retry-after'), attempt);
    if (wait === null || init.signal?.aborted) return res;
    await sleep(wait, init.signal ?? undefined);
  }
}

/** What one request of endpoint N carries: path parameters, query (defaults may be left out), body, token. */
export interface ApiRequest<N extends EndpointName> {
  params: Params<N>;
  query?: ClientQuery<N>;
  body?: Body<N>;
  /** The comparison's edit token, for endpoints that change it. */
  token?: string | null;
}

/** The URL of endpoint N: the contract's path with its parameters, and the query's defined values. */
export function apiUrl<N extends EndpointName>(name: N, req: Pick<ApiRequest<N>, 'params' | 'query'>): string {
  return endpointUrl(
    name,
    req.params as Record<string, string>,
    (req.query ?? {}) as Parameters<typeof endpointUrl>[2],
  );
}

/** GET a URL of the API as JSON. */
export async function getJson<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) throw await readError(res);
  return (await res.json()) as T;
}

/**
 * Calls endpoint N by name (`api('diff', {params: {id}, query: {base, target}})`) with the method the
 * contract gives it; resolves to its typed answer (null for 204), rejects with an ApiError.
 */
export async function api<N extends EndpointName>(
  name: N,
  req: ApiRequest<N>,
  signal?: AbortSignal,
): Promise<Reply<N>> {
  const { method } = ENDPOINT_ROUTES[name];
  const url = apiUrl(name, req);
  if (method === 'GET') return getJson<Reply<N>>(url, signal);
  const headers: Record<string, string> = { accept: 'application/json' };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  if (req.token) headers.authorization = `Bearer ${req.token}`;
  const res = await fetchWrite(url, {
    method,
    headers,
    body: req.body === undefined ? undefined : JSON.stringify(req.body),
    signal,
  });
  if (!res.ok) throw await readError(res);
  if (res.status === 204) return null as Reply<N>;
  const text = await res.text();
  return (text ? JSON.parse(text) : null) as Reply<N>;
}

/**
 * Stores a source archive (.tar.gz or .zip) as a stage's sources, replacing any it had: the raw file as
 * the body. A refused archive throws the server's error (naming the archive, the entry and the problem).
 */
export async function uploadSources(
  ids: Params<'putStageSources'>,
  file: File,
  token: string,
): Promise<Reply<'putStageSources'>> {
  const url = `${apiUrl('putStageSources', { params: ids })}?filename=${encodeURIComponent(file.name)}`;
  const res = await fetchWrite(url, {
    method: ENDPOINT_ROUTES.putStageSources.method,
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'content-type': 'application/octet-stream',
    },
    body: file,
  });
  if (!res.ok) throw await readError(res);
  return (await res.json()) as Reply<'putStageSources'>;
}

/**
 * Upload one file (multipart field `file`) with real progress events; resolves to that file's result
 * (the server's own result for it, `existing` included when the stage already holds its bytes). One
 * request per file so each file gets its own progress bar and its own verdict.
 */
export async function uploadFile(
  ids: Params<'uploadArtifacts'>,
  file: File,
  token: string,
  onProgress: (fraction: number) => void,
): Promise<FileResult> {
  for (let attempt = 1; ; attempt++) {
    const { result, wait } = await uploadOnce(ids, file, token, onProgress, attempt);
    if (wait === null) return result;
    onProgress(0);
    await sleep(wait);
  }
}

function uploadOnce(
  ids: Params<'uploadArtifacts'>,
  file: File,
  token: string,
  onProgress: (fraction: number) => void,
  attempt: number,
): Promise<{ result: FileResult; wait: number | null }> {
  return new Promise((done) => {
    const resolve = (result: FileResult) => done({ result, wait: null });
    const xhr = new XMLHttpRequest();
    xhr.open(ENDPOINT_ROUTES.uploadArtifacts.method, apiUrl('uploadArtifacts', { params: ids }));
    xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    const fail = (code: string, message: string): void =>
      resolve({ filename: file.name, ok: false, error: { code, message } });
    xhr.onerror = () => fail('network', 'network error while uploading');
    xhr.onabort = () => fail('aborted', 'upload aborted');
    xhr.onload = () => {
      const wait = retryWait(xhr.status, xhr.getResponseHeader('retry-after'), attempt);
      if (wait !== null)
        return done({
          result: { filename: file.name, ok: false, error: { code: 'rate-limited', message: 'too many writes' } },
          wait,
        });
      onProgress(1);
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* keep null */
      }
      // A refused upload (4xx) still lists each file's result, e.g. a duplicate naming the file already there.
      if (body && typeof body === 'object' && 'results' in body && Array.isArray(body.results)) {
        const results = body.results as FileResult[];
        const mine = results.find((r) => r.filename === file.name) ?? results[0];
        if (mine) return resolve(mine);
      }
      if (isErrorBody(body)) return fail(body.error.code, body.error.message);
      if (xhr.status >= 200 && xhr.status < 300)
        return fail('empty-response', 'the server returned no result for this file');
      fail(`http-${xhr.status}`, `upload failed with HTTP ${xhr.status}`);
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}
