/**
 * An analysis worker thread: parses stored files and computes views (trees, diffs, tables) off the
 * server's event loop, so one large profile never stalls other requests. It reads blobs through
 * its own store connection and keeps its own parsed-model cache (parsing is a pure function of the
 * bytes, so that cache can never be stale).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openStore } from '../store/index.ts';
import { IngestError } from '../ingest/errors.ts';
import { StoreError } from '../store/index.ts';
import { ApiError } from '../routes/errors.ts';
import { AnalysisService } from './analysis.ts';
import { ModelCache } from './models.ts';
import { Metrics } from './metrics.ts';
import { type AnalysisOp, runOp } from './analysis-ops.ts';
import type { ComparisonTree } from '../store/index.ts';

export interface WorkerConfig {
  dataDir: string;
  databaseUrl?: string;
  maxDecompressedBytes: number;
}

export interface WorkerRequest {
  id: number;
  tree: ComparisonTree;
  op: AnalysisOp;
}

export type WorkerReply =
  | { id: number; ok: true; body: string }
  | {
      id: number;
      ok: false;
      error: { kind: 'api' | 'ingest' | 'store' | 'internal'; status?: number; code: string; message: string };
    };

const cfg = workerData as WorkerConfig;
const store = await openStore({
  dataDir: cfg.dataDir,
  ...(cfg.databaseUrl ? { databaseUrl: cfg.databaseUrl } : {}),
  sweepOnOpen: false,
  maxConnections: 4,
});
const svc = new AnalysisService(store, new ModelCache(store, new Metrics(), cfg.maxDecompressedBytes));

parentPort!.on('message', async (req: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    reply = { id: req.id, ok: true, body: await runOp(svc, req.tree, req.op) };
  } catch (e) {
    if (e instanceof ApiError)
      reply = { id: req.id, ok: false, error: { kind: 'api', status: e.status, code: e.code, message: e.message } };
    else if (e instanceof IngestError)
      reply = { id: req.id, ok: false, error: { kind: 'ingest', code: e.code, message: e.message } };
    else if (e instanceof StoreError)
      reply = { id: req.id, ok: false, error: { kind: 'store', code: e.code, message: e.message } };
    else
      reply = {
        id: req.id,
        ok: false,
        error: { kind: 'internal', code: 'internal', message: (e as Error)?.stack ?? String(e) },
      };
  }
  parentPort!.postMessage(reply);
});
parentPort!.postMessage({ ready: true });
