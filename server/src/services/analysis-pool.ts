import { type ChildProcess, fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type { ComparisonTree } from '../store/index.ts';
import { IngestError, type IngestErrorCode } from '../ingest/errors.ts';
import { StoreError, type StoreErrorCode } from '../store/index.ts';
import { ServiceError, type ServiceErrorCode } from './errors.ts';
import type { AnalysisService } from './analysis.ts';
import { type AnalysisOp, runOp } from './analysis-ops.ts';
import type {
  ArchiveJob,
  ArchiveResult,
  IngestJob,
  IngestResult,
  ModuleFileAsk,
  ModuleFileReply,
  WorkerConfig,
  WorkerJob,
  WorkerReply,
} from './analysis-worker.ts';
import type { ModuleFileAnswer, ModuleFiles } from './module-sources.ts';
import { ingestFile } from './ingest-job.ts';
import { readArchiveBundle } from './sources.ts';
import { type KeepSpec, type KeptView, keepView } from './view-cache.ts';
import type { Metrics } from './metrics.ts';

/** The bounds every analysis or parse job runs under (see README's configuration table). */
export interface PoolLimits {
  /** Wall-clock deadline of one job, ms; past it the worker is terminated and replaced. */
  timeoutMs: number;
  /** V8 old-generation limit of each worker, MiB; a job past it kills its worker, not the server. */
  maxHeapMb: number;
  /** Jobs waiting per worker (beyond the running one); more are refused with 503. */
  queueMax: number;
  /** How much lower than the server's the workers' CPU priority is (nice steps; 0: the same). */
  niceness?: number;
  /**
   * How long a view whose module files are still being fetched waits for them (SOURCE_GOPROXY_WAIT_MS),
   * outside its worker, before it is answered without them; 0: not at all.
   */
  moduleWaitMs?: number;
}

interface Job {
  /**
   * Whose job: a view's comparison, a parse's client (jobs waiting for a worker are taken in turn by
   * this).
   */
  key: string;
  msg: WorkerJob;
  resolve: (body: unknown) => void;
  reject: (e: Error) => void;
  /** Runs on a fresh worker after a memory kill on a worker that already held other models. */
  retried: boolean;
  /** Module fetches the job's view asked for and did not wait for (see run). */
  fetching?: Promise<unknown>[];
}

interface Slot {
  worker: ChildProcess;
  ready: boolean;
  busy: Job | null;
  timer: NodeJS.Timeout | null;
  /** Samples the worker's resident memory while a job runs. */
  watch: NodeJS.Timeout | null;
  /** Why the pool is stopping this worker, else null. */
  killing: 'timeout' | 'memory' | null;
  /** The end of the worker's stderr (V8 reports a heap exhaustion there before it aborts). */
  stderr: string;
  /** Jobs this worker finished: a worker that served others holds their cached models. */
  served: number;
}

/**
 * The jobs waiting for one worker, taken in turn by comparison: the oldest job of the comparison
 * whose turn it is, which then goes to the back of the line. A comparison with many jobs waiting
 * delays another comparison's next job by at most one job, whatever the order they came in.
 */
class FairQueue {
  /** Waiting jobs by comparison; the map's order is the order of turns. */
  private readonly byKey = new Map<string, Job[]>();
  private n = 0;

  get length(): number {
    return this.n;
  }

  push(job: Job): void {
    const q = this.byKey.get(job.key);
    if (q) q.push(job);
    else this.byKey.set(job.key, [job]);
    this.n++;
  }

  /** Puts a job back in front (a retry on a fresh worker): its comparison takes the next turn. */
  unshift(job: Job): void {
    const rest = [...this.byKey].filter(([k]) => k !== job.key);
    const own = this.byKey.get(job.key) ?? [];
    this.byKey.clear();
    this.byKey.set(job.key, [job, ...own]);
    for (const [k, q] of rest) this.byKey.set(k, q);
    this.n++;
  }

  shift(): Job | undefined {
    const next = this.byKey.entries().next();
    if (next.done) return undefined;
    const [k, q] = next.value;
    const job = q.shift()!;
    this.byKey.delete(k);
    if (q.length > 0) this.byKey.set(k, q);
    this.n--;
    return job;
  }

  /** Every waiting job, the queue left empty. */
  drain(): Job[] {
    const all = [...this.byKey.values()].flat();
    this.byKey.clear();
    this.n = 0;
    return all;
  }
}

/** Resident memory of an idle worker process, MiB, allowed on top of its memory budget. */
const WORKER_BASE_MB = 256;

/** Seconds a client is asked to wait after a 503 (Retry-After). */
const RETRY_AFTER_S = 5;

/**
 * Runs analysis and parse jobs in worker processes (or in process when size is 0). A comparison's
 * views always go to the same worker, so its parsed profiles stay warm in that worker's cache, and
 * a comparison holds at most that one worker at a time: the comparisons waiting for a worker take
 * turns (FairQueue), so a backlog of one never starves another.
 *
 * Workers are processes, not threads: V8 aborts the whole process when one allocation cannot be
 * met, and a worker thread's heap limit leaves only a little leeway, so one large allocation in a
 * thread could still end the server. A process dies alone. Each worker runs one job at a time under
 * a deadline, a V8 heap limit (--max-old-space-size) and a resident-memory limit (typed arrays live
 * outside the V8 heap); the jobs behind it wait in a bounded queue here. A job past its deadline has
 * its worker killed (a view: 503, try later; a parse: 422, its bytes would take as long again); a job
 * past either memory limit kills only its worker (422, too big for the configured memory). Either way the worker is replaced and the queue goes on, so one
 * request never takes the server or the other comparisons down with it.
 */
export class AnalysisPool {
  private readonly slots: (Slot | null)[];
  private readonly queues: FairQueue[];
  private seq = 0;
  private closed = false;
  /** Where each client's parses run or wait: its worker and how many (one worker per client at a time). */
  private readonly parsers = new Map<string, { worker: number; jobs: number }>();

  constructor(
    private readonly config: WorkerConfig,
    size: number,
    private readonly inProcess: AnalysisService,
    private readonly limits: PoolLimits,
    private readonly metrics: Metrics,
    /** The module proxy client workers ask for module files (SOURCE_GOPROXY); null when it is off. */
    private readonly modules: ModuleFiles | null = null,
  ) {
    this.slots = Array.from({ length: size }, () => null);
    this.queues = Array.from({ length: size }, () => new FairQueue());
    metrics.gauge(
      'stagediff_analysis_queue_length',
      'Analysis jobs waiting for a worker (all workers).',
      () => this.queued,
    );
    metrics.gauge('stagediff_analysis_jobs_running', 'Analysis jobs running on a worker now.', () => this.running);
  }

  get size(): number {
    return this.slots.length;
  }

  /** Jobs waiting behind a running one, over all workers. */
  get queued(): number {
    return this.queues.reduce((n, q) => n + q.length, 0);
  }

  get running(): number {
    return this.slots.filter((s) => s?.busy).length;
  }

  /**
   * One analysis view of a comparison, made ready to serve and kept in the shared cache as `keep` says
   * (compressed and written where it was computed: see keepView).
   */
  async run(tree: ComparisonTree, op: AnalysisOp, keep: KeepSpec): Promise<KeptView> {
    if (this.slots.length === 0 || this.closed)
      return keepView(this.inProcess.store, await runOp(this.inProcess, tree, op), keep);
    const id = tree.comparison.id;
    const msg: WorkerJob = { kind: 'op', id: 0, tree, op, keep };
    const worker = hash(id) % this.slots.length;
    // A source view never waits for the module proxy on its worker (a slow proxy would hold the worker
    // from everyone): a module file not yet fetched is answered "being fetched" there at once, the
    // fetch goes on in this process, and the view waits for it here, SOURCE_GOPROXY_WAIT_MS at most,
    // then is computed once more from the cache. The client's admission is held meanwhile.
    const fetching: Promise<unknown>[] = [];
    const first = (await this.submit(id, msg, worker, fetching)) as KeptView;
    if (fetching.length === 0 || !(await anyWithin(fetching, this.limits.moduleWaitMs ?? 0))) return first;
    // (The second time, a fetch still under way is not waited for again.)
    const second = (await this.submit(id, msg, worker, [])) as KeptView;
    const extraCost = (first.extraCost ?? 0) + (second.extraCost ?? 0);
    return extraCost > 0 ? { ...second, extraCost } : second;
  }

  /**
   * Detects and parses one file (spooled at `job.path`) under the same bounds as an analysis. Parses
   * of one client (`client`: its fair-share key) run one worker at a time, so one address uploading
   * many files never takes every worker; another client's parse goes to the least loaded worker.
   */
  async ingest(client: string, job: Omit<IngestJob, 'kind' | 'id'>): Promise<IngestResult> {
    if (this.slots.length === 0 || this.closed)
      return ingestFile(job, { models: this.inProcess.models, maxHeapBytes: this.limits.maxHeapMb * 1024 * 1024 });
    return (await this.submitParse(client, { kind: 'ingest', id: 0, ...job })) as IngestResult;
  }

  /** Reads a spooled source archive into a source bundle, as a parse of `client` (see ingest). */
  async readArchive(client: string, job: Omit<ArchiveJob, 'kind' | 'id'>): Promise<ArchiveResult> {
    if (this.slots.length === 0 || this.closed) return readArchiveBundle(job.filename, job.path, job.limits);
    return (await this.submitParse(client, { kind: 'archive', id: 0, ...job })) as ArchiveResult;
  }

  /** A parse job of `client`: on the worker its other parses hold, else the least loaded one. */
  private submitParse(client: string, msg: WorkerJob): Promise<unknown> {
    const held = this.parsers.get(client);
    const entry = held ?? { worker: this.leastLoaded(hash(client) % this.slots.length), jobs: 0 };
    const p = this.submit(client, msg, entry.worker);
    entry.jobs++;
    this.parsers.set(client, entry);
    return p.finally(() => {
      entry.jobs--;
      if (entry.jobs === 0 && this.parsers.get(client) === entry) this.parsers.delete(client);
    });
  }

  /** The worker with the least work: running plus waiting (ties: the comparison's own worker). */
  private leastLoaded(preferred: number): number {
    const load = (i: number) => this.queues[i]!.length + (this.slots[i]?.busy ? 1 : 0);
    let best = preferred;
    for (let i = 0; i < this.slots.length; i++) if (load(i) < load(best)) best = i;
    return best;
  }

  /**
   * Queues a job on worker i: a view on its comparison's worker (its models are warm there), a parse
   * on the worker its client's parses hold or the least loaded one (a parse needs no warm model).
   */
  private submit(key: string, msg: WorkerJob, i: number, fetching?: Promise<unknown>[]): Promise<unknown> {
    const queue = this.queues[i]!;
    // A worker that is idle or still starting takes one job beyond the waiting ones.
    const slot = this.slots[i];
    if (queue.length >= this.limits.queueMax + (slot?.busy ? 0 : 1)) {
      this.metrics.inc('stagediff_analysis_rejected_total', { reason: 'queue-full' });
      return Promise.reject(
        new ServiceError(
          'busy',
          `the analysis queue is full (${this.limits.queueMax} waiting, ANALYSIS_QUEUE_MAX); try again shortly`,
          { retryAfterSeconds: RETRY_AFTER_S },
        ),
      );
    }
    return new Promise<unknown>((resolve, reject) => {
      queue.push({
        key,
        msg: { ...msg, id: ++this.seq },
        resolve,
        reject,
        retried: false,
        ...(fetching ? { fetching } : {}),
      });
      this.pump(i);
    });
  }

  /** Starts the next queued job of worker i when it is idle (spawning it if needed). */
  private pump(i: number): void {
    if (this.closed) return;
    const slot = this.slots[i] ?? this.spawn(i);
    if (!slot.ready || slot.busy) return;
    const job = this.queues[i]!.shift();
    if (!job) return;
    slot.busy = job;
    slot.timer = setTimeout(() => this.kill(slot, 'timeout'), this.limits.timeoutMs);
    const pid = slot.worker.pid;
    if (pid !== undefined) {
      const cap = this.rssCapBytes;
      slot.watch = setInterval(() => {
        if (residentBytes(pid) > cap) this.kill(slot, 'memory');
      }, 100);
    }
    slot.worker.send(job.msg);
  }

  /**
   * A worker's resident memory may reach twice its heap limit (its V8 heap plus typed arrays kept
   * outside it) plus what an idle worker process already holds (node, its code, a store connection).
   */
  private get rssCapBytes(): number {
    return (2 * this.limits.maxHeapMb + WORKER_BASE_MB) * 1024 * 1024;
  }

  private kill(slot: Slot, why: 'timeout' | 'memory'): void {
    if (slot.killing) return;
    slot.killing = why;
    slot.worker.kill('SIGKILL');
  }

  private settle(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    if (slot.watch) clearInterval(slot.watch);
    slot.timer = null;
    slot.watch = null;
  }

  private spawn(i: number): Slot {
    const worker = fork(new URL('./analysis-worker-entry.mjs', import.meta.url), [], {
      execArgv: [`--max-old-space-size=${this.limits.maxHeapMb}`],
      env: {
        ...process.env,
        STAGEDIFF_WORKER: JSON.stringify({
          ...this.config,
          maxHeapBytes: this.limits.maxHeapMb * 1024 * 1024,
        } satisfies WorkerConfig),
      },
      // Typed arrays and Buffers cross as they are (structured clone), not as JSON.
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
      // A session of its own: where the kernel shares the CPU between sessions (Linux's autogroup),
      // what the analysis uses is not charged to the server's own share. (It still ends with the
      // server: it exits when the IPC channel closes.)
      detached: true,
    });
    // Analysis is batch work: with ANALYSIS_NICENESS set, when the CPU is short the event loop
    // (answers from the cache, health checks, uploads streaming in) goes first. Not by default: the
    // workers then yield to every other process of the host too, and ANALYSIS_TIMEOUT_MS is wall-clock
    // time, so on a busy shared host their jobs would run out of time.
    const niceness = this.limits.niceness ?? 0;
    if (worker.pid !== undefined && niceness > 0)
      try {
        setPriority(worker.pid, Math.min(19, getPriority() + niceness));
      } catch {
        // not permitted here: the worker runs at the server's priority
      }
    const slot: Slot = {
      worker,
      ready: false,
      busy: null,
      timer: null,
      watch: null,
      killing: null,
      stderr: '',
      served: 0,
    };
    this.slots[i] = slot;
    worker.stderr?.on('data', (d: Buffer) => {
      slot.stderr = (slot.stderr + d.toString('utf8')).slice(-4096);
    });
    worker.on('message', (m: WorkerReply | { ready: true } | { computed: number } | ModuleFileAsk) => {
      if ('moduleFile' in m) {
        void this.answerModuleFile(worker, m, slot.busy);
        return;
      }
      if ('ready' in m) {
        slot.ready = true;
        this.pump(i);
        return;
      }
      if ('computed' in m) {
        // The view is computed; storing it is not held to the analysis deadline (memory still is).
        if (slot.busy?.msg.id === m.computed && slot.timer) {
          clearTimeout(slot.timer);
          slot.timer = null;
        }
        return;
      }
      const job = slot.busy;
      if (!job || job.msg.id !== m.id) return;
      this.settle(slot);
      slot.busy = null;
      slot.served++;
      if (m.ok) job.resolve(m.body);
      else job.reject(toError(m.error));
      this.pump(i);
    });
    worker.on('error', () => {
      // A failed spawn or a closed channel: 'exit' follows and replaces the worker.
    });
    worker.on('exit', (code, signal) => this.onExit(i, slot, code ?? signal ?? 'unknown'));
    // An idle worker never keeps the server process alive.
    worker.unref();
    (worker as unknown as { channel?: { unref(): void } }).channel?.unref();
    return slot;
  }

  /** A worker's source view asks for a module file: the proxy client answers (its bounds apply to all workers). */
  private async answerModuleFile(worker: ChildProcess, m: ModuleFileAsk, job: Job | null): Promise<void> {
    let answer: ModuleFileAnswer;
    try {
      // A view's fetch is never waited for here: its worker would wait with it (see run).
      const outside = job?.fetching !== undefined;
      answer = this.modules
        ? await this.modules.file(m.moduleFile.req, outside ? 0 : undefined)
        : {
            ok: false,
            problem: 'the module proxy is off (SOURCE_GOPROXY)',
            reason: 'source unavailable: the module proxy is off',
            transient: false,
          };
    } catch (e) {
      answer = {
        ok: false,
        problem: `the module proxy client failed: ${(e as Error).message}`,
        reason: 'source unavailable: the module could not be fetched (asked again later)',
        transient: true,
      };
    }
    if (!answer.ok && answer.transient && job?.fetching) {
      const under = this.modules?.fetching?.(m.moduleFile.req);
      if (under) job.fetching.push(under);
    }
    if (worker.connected) worker.send({ moduleFileReply: m.moduleFile.rid, answer } satisfies ModuleFileReply);
  }

  private onExit(i: number, slot: Slot, code: number | string): void {
    this.settle(slot);
    if (this.slots[i] === slot) this.slots[i] = null;
    const job = slot.busy;
    slot.busy = null;
    if (this.closed) {
      job?.reject(new ServiceError('shutting-down', 'the server is shutting down', { retryAfterSeconds: 10 }));
      for (const q of this.queues[i]!.drain())
        q.reject(new ServiceError('shutting-down', 'the server is shutting down', { retryAfterSeconds: 10 }));
      return;
    }
    this.metrics.inc('stagediff_analysis_worker_restarts_total');
    const oom = slot.killing === 'memory' || /heap out of memory|Allocation failed/i.test(slot.stderr);
    if (job) {
      const m = job.msg;
      const what =
        m.kind === 'ingest'
          ? `parsing ${m.filename}`
          : m.kind === 'archive'
            ? `reading the source archive ${m.filename}`
            : `this ${m.op.op} view`;
      if (slot.killing === 'timeout' && m.kind !== 'op') {
        // A parse depends on its bytes alone: past the deadline once, it would be again. Say so (422),
        // rather than ask for a retry that would hold a worker as long again.
        this.metrics.inc('stagediff_analysis_timeouts_total');
        job.reject(
          new ServiceError(
            'too-large-to-analyse',
            `${what} takes longer than the ${this.limits.timeoutMs} ms allowed per job (ANALYSIS_TIMEOUT_MS); it was stopped: the file is too large or too complex to read under this server's bounds`,
          ),
        );
      } else if (slot.killing === 'timeout') {
        this.metrics.inc('stagediff_analysis_timeouts_total');
        job.reject(
          new ServiceError(
            'analysis-timeout',
            `${what} took longer than the ${this.limits.timeoutMs} ms allowed per job (ANALYSIS_TIMEOUT_MS); it was stopped`,
            { retryAfterSeconds: RETRY_AFTER_S },
          ),
        );
      } else if (oom && slot.served > 0 && !job.retried) {
        // The worker's heap also held other comparisons' models: give the job one fresh worker.
        job.retried = true;
        this.queues[i]!.unshift(job);
      } else if (oom) {
        this.metrics.inc('stagediff_analysis_memory_kills_total');
        job.reject(
          new ServiceError(
            'too-large-to-analyse',
            `${what} needs more memory than an analysis worker may use (ANALYSIS_MAX_HEAP_MB=${this.limits.maxHeapMb}: ${this.limits.maxHeapMb} MiB of heap, ${2 * this.limits.maxHeapMb + WORKER_BASE_MB} MiB resident); it was stopped`,
          ),
        );
      } else {
        job.reject(
          new ServiceError('analysis-failed', `the analysis worker stopped (exit code ${code}) during ${what}`),
        );
      }
    }
    // A worker that died while idle is replaced lazily; one with work waiting is replaced now.
    if (this.queues[i]!.length > 0) this.pump(i);
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      this.slots.map((s) => {
        if (!s || s.worker.exitCode !== null || s.worker.signalCode !== null) return undefined;
        const gone = new Promise((r) => s.worker.once('exit', r));
        s.worker.kill('SIGKILL');
        return gone;
      }),
    );
    this.slots.fill(null);
  }
}

/** Resident memory of a process from /proc (Linux); 0 where it cannot be read. */
function residentBytes(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function toError(e: Extract<WorkerReply, { ok: false }>['error']): Error {
  switch (e.kind) {
    case 'service':
      return new ServiceError(e.code as ServiceErrorCode, e.message, e.detail ?? {});
    case 'ingest':
      return new IngestError(e.code as IngestErrorCode, e.message, e.line);
    case 'store':
      return new StoreError(e.code as StoreErrorCode, e.message);
    default:
      return new Error(`analysis worker: ${e.message}`);
  }
}

/** Whether any of `promises` settles within `ms` (false at once for 0). */
async function anyWithin(promises: Promise<unknown>[], ms: number): Promise<boolean> {
  if (ms <= 0) return false;
  let timer: NodeJS.Timeout | undefined;
  const settled = Promise.race(
    promises.map((p) =>
      p.then(
        () => true,
        () => true,
      ),
    ),
  );
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  return Promise.race([settled, late]).finally(() => clearTimeout(timer));
}
