import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { IngestError, describeIngestError } from '../ingest/errors.ts';
import { type CaptureRecord, uploadedFiles } from '../model/capture.ts';
import { type ClientQuery, type EndpointName, type Params, type Reply, endpointUrl } from '../api/endpoints.ts';

/**
 * Where `report` and `check` read a comparison: the same HTTP API either way. A server is asked over
 * HTTP; a folder written by `stagediff capture --out` is loaded into a throwaway in-process server
 * (temporary SQLite, analysis on the calling thread), so local figures are the server's figures.
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

/** The part of a `capture.json` record (written by `stagediff capture --out`) that a report reads. */
type CaptureFolderRecord = Pick<CaptureRecord, 'stage' | 'note' | 'startedAt' | 'runs'>;

/** One stage found in capture folders: its name, note and files, first-captured time for ordering. */
interface LocalStage {
  name: string;
  note: string;
  startedAt: string;
  files: { path: string; name: string }[];
}

function readRecord(file: string): CaptureFolderRecord {
  let r: CaptureFolderRecord;
  try {
    r = JSON.parse(readFileSync(file, 'utf8')) as CaptureFolderRecord;
  } catch (e) {
    throw new Error(`${file}: not a capture record (${(e as Error).message})`);
  }
  if (typeof r?.stage !== 'string' || !Array.isArray(r.runs))
    throw new Error(`${file}: not a capture record (no "stage" and "runs")`);
  return r;
}

/** capture.json files in DIR, or in its sub-folders (two levels), in path order. */
function findRecords(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    const here = join(d, 'capture.json');
    if (existsSync(here)) out.push(here);
    if (depth === 0) return;
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)))
      if (e.isDirectory()) walk(join(d, e.name), depth - 1);
  };
  walk(dir, 2);
  return out;
}

/**
 * Stages from `--out` folders: each folder is one capture (its capture.json) or holds several in
 * sub-folders. Records naming the same stage form one stage (e.g. a wrk capture and a fixed-rate
 * capture of it). Order: the folders' order on the command line, then first capture time within one.
 */
export function stagesFromFolders(dirs: string[]): LocalStage[] {
  const byName = new Map<string, LocalStage>();
  for (const dir of dirs) {
    const abs = resolve(dir);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new Error(`--out ${dir}: no such folder`);
    const records = findRecords(abs).map((f) => ({ file: f, r: readRecord(f) }));
    if (records.length === 0)
      throw new Error(
        `--out ${dir}: no capture.json in it or its sub-folders (write one with stagediff capture --out)`,
      );
    records.sort((a, b) => (a.r.startedAt ?? '').localeCompare(b.r.startedAt ?? ''));
    for (const { file, r } of records) {
      let st = byName.get(r.stage);
      if (!st) {
        st = { name: r.stage, note: r.note ?? '', startedAt: r.startedAt ?? '', files: [] };
        byName.set(r.stage, st);
      }
      for (const f of uploadedFiles(r)) {
        const p = join(dirname(file), f.path);
        if (!existsSync(p)) throw new Error(`${file}: lists ${f.path}, which is not there`);
        // Named by the path inside the folder given (run-1-wrk.txt), so the runs of a stage stay apart.
        st.files.push({ path: p, name: relative(abs, p).replaceAll(sep, '-') });
      }
    }
  }
  return [...byName.values()];
}

/** Capture folders loaded into a throwaway in-process server: the app, the comparison, and how to drop both. */
export interface LoadedFolders {
  app: Awaited<ReturnType<typeof import('../app.ts').buildApp>>;
  comparisonId: string;
  close(): Promise<void>;
}

/** Loads capture folders into a throwaway in-process server and reads it through app.inject. */
export async function folderSource(dirs: string[], title: string): Promise<ComparisonSource> {
  const loaded = await loadFolders(dirs, title);
  return { ...injectSource(loaded.app, loaded.comparisonId, null), close: loaded.close };
}

/** Loads capture folders into a throwaway in-process server (temporary SQLite, analysis on this thread). */
export async function loadFolders(dirs: string[], title: string): Promise<LoadedFolders> {
  const stages = stagesFromFolders(dirs);
  const [{ buildApp }, { loadConfig }, { ingest }, { artifactSummary }] = await Promise.all([
    import('../app.ts'),
    import('../config.ts'),
    import('../ingest/detect.ts'),
    import('../services/analysis.ts'),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-report-'));
  const app = await buildApp(
    loadConfig({
      DATA_DIR: dataDir,
      STAGEDIFF_SEED_DEMO: '0',
      WEB_DIST: join(dataDir, 'no-web'),
      ANALYSIS_WORKERS: '0',
    }),
    { logger: false },
  );
  const close = async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const store = app.ctx.store;
    const { comparison } = await store.createComparison({ title, description: '' });
    for (const st of stages) {
      const stage = await store.createStage(comparison.id, { name: st.name, note: st.note });
      for (const { path, name } of st.files) {
        let parsed: Awaited<ReturnType<typeof ingest>>;
        try {
          parsed = await ingest({ name, path });
        } catch (e) {
          throw new Error(e instanceof IngestError ? describeIngestError(e, path) : `${path}: ${(e as Error).message}`);
        }
        const blob = await store.putBlob(createReadStream(path), app.ctx.config.maxUploadBytes);
        await store.addArtifact({
          comparisonId: comparison.id,
          stageId: stage.id,
          kind: parsed.kind,
          format: parsed.format,
          filename: name,
          summary: artifactSummary(parsed),
          blob,
        });
      }
    }
    return { app, comparisonId: comparison.id, close };
  } catch (e) {
    await close();
    throw e;
  }
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
