import type { ApiErrorBody, UploadResult } from './api-types.ts';

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

/** Build "/api/…?k=v" leaving out empty parameters. */
export function apiUrl(path: string, params: Record<string, string | number | null | undefined> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

/** GET /api/comparisons/:id/gc — every stage's GC traces (the GC tab and the stage table's GC columns). */
export function gcUrl(comparisonId: string): string {
  return `/api/comparisons/${encodeURIComponent(comparisonId)}/gc`;
}

export async function apiGet<T>(url: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(url, { signal, headers: { accept: 'application/json' } });
  if (!res.ok) throw await readError(res);
  return (await res.json()) as T;
}

export async function apiSend<T>(
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  body: unknown,
  token?: string | null,
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok) throw await readError(res);
  if (res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * Upload one file (multipart field `file`) with real progress events; resolves to that file's result.
 * One request per file so each file gets its own progress bar and its own verdict.
 */
export function uploadFile(
  url: string,
  file: File,
  token: string,
  onProgress: (fraction: number) => void,
): Promise<UploadResult> {
  return new Promise((resolve) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url);
    xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable && e.total > 0) onProgress(e.loaded / e.total);
    };
    const fail = (code: string, message: string) =>
      resolve({ filename: file.name, ok: false, error: { code, message } });
    xhr.onerror = () => fail('network', 'network error while uploading');
    xhr.onabort = () => fail('aborted', 'upload aborted');
    xhr.onload = () => {
      onProgress(1);
      let body: unknown = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        /* keep null */
      }
      if (xhr.status >= 200 && xhr.status < 300 && body && typeof body === 'object' && 'results' in body) {
        const results = (body as { results: UploadResult[] }).results;
        const mine = results.find((r) => r.filename === file.name) ?? results[0];
        if (mine) return resolve(mine);
        return fail('empty-response', 'the server returned no result for this file');
      }
      if (isErrorBody(body)) return fail(body.error.code, body.error.message);
      fail(`http-${xhr.status}`, `upload failed with HTTP ${xhr.status}`);
    };
    const form = new FormData();
    form.append('file', file, file.name);
    xhr.send(form);
  });
}
