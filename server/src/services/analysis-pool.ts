import { Worker } from 'node:worker_threads';
import type { ComparisonTree } from '../store/index.ts';
import { IngestError, type IngestErrorCode } from '../ingest/errors.ts';
import { StoreError, type StoreErrorCode } from '../store/index.ts';
import { ApiError } from '../routes/errors.ts';
import type { AnalysisService } from './analysis.ts';
import { type AnalysisOp, runOp } from './analysis-ops.ts';
import type { WorkerConfig, WorkerReply, WorkerRequest } from './analysis-worker.ts';

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  pending: Map<number, { resolve: (s: string) => void; reject: (e: Error) => void }>;
}

/**
 * Runs analysis operations on worker threads (or in process when size is 0). A comparison always
 * goes to the same worker, so its parsed profiles stay warm in that worker's cache. A worker that
 * dies fails its pending requests and is replaced.
 */
export class AnalysisPool {
  private readonly slots: (Slot | null)[];
  private seq = 0;
  private closed = false;

  constructor(
    private readonly config: WorkerConfig,
    size: number,
    private readonly inProcess: AnalysisService,
  ) {
    this.slots = Array.from({ length: size }, () => null);
  }

  get size(): number {
    return this.slots.length;
  }

  private spawn(i: number): Slot {
    const worker = new Worker(new URL('./analysis-worker-entry.mjs', import.meta.url), { workerData: this.config });
    const pending: Slot['pending'] = new Map();
    let markReady!: () => void;
    let failStart!: (e: Error) => void;
    const ready = new Promise<void>((res, rej) => {
      markReady = res;
      failStart = rej;
    });
    worker.on('message', (m: WorkerReply | { ready: true }) => {
      if ('ready' in m) return markReady();
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      if (m.ok) p.resolve(m.body);
      else p.reject(toError(m.error));
    });
    const fail = (e: Error) => {
      failStart(e);
      for (const p of pending.values()) p.reject(e);
      pending.clear();
      if (this.slots[i]?.worker === worker) this.slots[i] = null;
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`analysis worker exited (${code})`)));
    worker.unref();
    const slot = { worker, ready, pending };
    this.slots[i] = slot;
    return slot;
  }

  async run(tree: ComparisonTree, op: AnalysisOp): Promise<string> {
    if (this.slots.length === 0 || this.closed) return runOp(this.inProcess, tree, op);
    const i = hash(tree.comparison.id) % this.slots.length;
    const slot = this.slots[i] ?? this.spawn(i);
    await slot.ready;
    const id = ++this.seq;
    return new Promise<string>((resolve, reject) => {
      slot.pending.set(id, { resolve, reject });
      slot.worker.postMessage({ id, tree, op } satisfies WorkerRequest);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s?.worker.terminate()));
    this.slots.fill(null);
  }
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function toError(e: Extract<WorkerReply, { ok: false }>['error']): Error {
  switch (e.kind) {
    case 'api':
      return new ApiError(e.status ?? 400, e.code, e.message);
    case 'ingest':
      return new IngestError(e.code as IngestErrorCode, e.message);
    case 'store':
      return new StoreError(e.code as StoreErrorCode, e.message);
    default:
      return new Error(`analysis worker: ${e.message}`);
  }
}
