/**
 * An analysis worker process: parses uploads and stored files and computes views (trees, diffs,
 * tables) off the server's event loop, so one large profile never stalls other requests, and in its
 * own process, so one that exhausts memory ends only this worker. It reads blobs through its own
 * store connection and keeps its own parsed-model cache (parsing is a pure function of the bytes,
 * so that cache can never be stale). The pool runs one job at a time here, under a deadline and
 * this process's memory limits; its configuration comes in STAGEDIFF_WORKER (JSON).
 */
import { openStore, type StoreConfig } from '../store/index.ts';
import type { SourceViewLimits } from '../config.ts';
import { IngestError } from '../ingest/errors.ts';
import { StoreError } from '../store/index.ts';
import { ServiceError } from './errors.ts';
import { storageFailure } from '../store/index.ts';
import { AnalysisService } from './analysis.ts';
import { ModelCache } from './models.ts';
import { Metrics } from './metrics.ts';
import { type AnalysisOp, runOp } from './analysis-ops.ts';
import { type IngestFile, ingestFile } from './ingest-job.ts';
import { type KeepSpec, keepView } from './view-cache.ts';
import { cachedModuleFile, type ModuleFileAnswer, type ModuleFiles } from './module-sources.ts';
import type { ModuleFile } from '../sources/module-path.ts';
import type { SourceLimits } from '../sources/source-set.ts';
import { type ArchiveBundle, readArchiveBundle } from './sources.ts';
import type { ComparisonTree } from '../store/index.ts';

export type { IngestResult } from './ingest-job.ts';

export interface WorkerConfig extends StoreConfig {
  maxDecompressedBytes: number;
  /** This worker's heap limit in bytes (uploads too big to analyse under it are refused). */
  maxHeapBytes?: number;
  /** The module proxy is on (SOURCE_GOPROXY): module files not in the cache are asked of the server. */
  goproxy?: { goVersion: string | undefined; platform: string };
  /** The source view's bounds (SOURCE_VIEW_*). */
  sourceView?: SourceViewLimits;
}

/** A worker asks the server for a module file (the server's proxy client fetches it under its bounds). */
export interface ModuleFileAsk {
  moduleFile: { rid: number; req: ModuleFile };
}
export interface ModuleFileReply {
  moduleFileReply: number;
  answer: ModuleFileAnswer;
}

export type IngestJob = { kind: 'ingest'; id: number } & IngestFile;
/** A spooled source archive to read and check (under MAX_SOURCE_*) into a source bundle. */
export type ArchiveJob = { kind: 'archive'; id: number; filename: string; path: string; limits: SourceLimits };
export type ArchiveResult = ArchiveBundle;
export type WorkerJob =
  | { kind: 'op'; id: number; tree: ComparisonTree; op: AnalysisOp; keep: KeepSpec }
  | IngestJob
  | ArchiveJob;

export type WorkerReply =
  | { id: number; ok: true; body: unknown }
  | {
      id: number;
      ok: false;
      error: {
        kind: 'service' | 'ingest' | 'store' | 'internal';
        code: string;
        message: string;
        line?: number;
        /** A service error's detail: the parameter at fault, when to retry, the artifact already there. */
        detail?: ServiceError['detail'];
      };
    };

const cfg = JSON.parse(process.env.STAGEDIFF_WORKER ?? '{}') as WorkerConfig;
const send = (m: unknown) => process.send!(m);
const store = await openStore({ ...cfg, sweepOnOpen: false, maxConnections: 4 });
const maxHeapBytes = cfg.maxHeapBytes ?? Number.MAX_SAFE_INTEGER;
const models = new ModelCache(store, new Metrics(), cfg.maxDecompressedBytes, { maxBytes: maxHeapBytes / 4 });
const svc = new AnalysisService(store, models);
if (cfg.sourceView) svc.sourceView = cfg.sourceView;

/** Module files for the source view: from the store's cache here, else asked of the server. */
class ServerModules implements ModuleFiles {
  private seq = 0;
  private readonly waiting = new Map<number, (a: ModuleFileAnswer) => void>();

  async file(req: ModuleFile): Promise<ModuleFileAnswer> {
    const hit = await cachedModuleFile(store, req).catch(() => null);
    if (hit) return hit;
    const rid = ++this.seq;
    return new Promise((resolve) => {
      this.waiting.set(rid, resolve);
      send({ moduleFile: { rid, req } } satisfies ModuleFileAsk);
    });
  }

  answer(m: ModuleFileReply): void {
    const resolve = this.waiting.get(m.moduleFileReply);
    this.waiting.delete(m.moduleFileReply);
    resolve?.(m.answer);
  }
}
const modules = cfg.goproxy ? new ServerModules() : null;
if (modules && cfg.goproxy) svc.modules = { files: modules, ...cfg.goproxy };

async function run(job: WorkerJob): Promise<unknown> {
  if (job.kind === 'ingest') return ingestFile(job, { models, maxHeapBytes });
  if (job.kind === 'archive') return readArchiveBundle(job.filename, job.path, job.limits);
  const body = await runOp(svc, job.tree, job.op);
  // The analysis is done: its deadline (ANALYSIS_TIMEOUT_MS) no longer runs while the answer is
  // compressed and written to the shared cache.
  send({ computed: job.id });
  return keepView(store, body, job.keep);
}

process.on('message', async (job: WorkerJob | ModuleFileReply) => {
  if ('moduleFileReply' in job) {
    modules?.answer(job);
    return;
  }
  let reply: WorkerReply;
  try {
    reply = { id: job.id, ok: true, body: await run(job) };
  } catch (e) {
    if (e instanceof ServiceError)
      reply = { id: job.id, ok: false, error: { kind: 'service', code: e.code, message: e.message, detail: e.detail } };
    else if (e instanceof IngestError)
      reply = {
        id: job.id,
        ok: false,
        error: { kind: 'ingest', code: e.code, message: e.message, ...(e.line !== undefined ? { line: e.line } : {}) },
      };
    else if (e instanceof StoreError)
      reply = { id: job.id, ok: false, error: { kind: 'store', code: e.code, message: e.message } };
    else if (storageFailure(e)) {
      // The database or the blob store out of reach: the same 503 (or 507) the server gives.
      const f = storageFailure(e)!;
      reply = {
        id: job.id,
        ok: false,
        error: { kind: 'service', code: f.code, message: f.message, detail: { retryAfterSeconds: 30 } },
      };
    } else
      reply = {
        id: job.id,
        ok: false,
        error: { kind: 'internal', code: 'internal', message: (e as Error)?.stack ?? String(e) },
      };
  }
  send(reply);
});
// The server went away: nothing left to work for.
process.on('disconnect', () => process.exit(0));
send({ ready: true });
