import { isIPv6 } from 'node:net';
import { ServiceError } from './errors.ts';
import type { Metrics } from './metrics.ts';

/** The bounds of what one client and one comparison may take of the analysis workers (0: no bound). */
export interface FairShareLimits {
  /** Jobs one client may have queued or running at once. */
  clientJobs: number;
  /** Cost one client may start per minute (a token bucket holding at most this much). */
  clientJobsPerMinute: number;
  /** Jobs of one comparison (all clients together) queued or running at once. */
  comparisonJobs: number;
}

/** Why a job was refused; each is counted on /metrics (`stagediff_analysis_rejected_total{reason}`). */
export type RefusalReason = 'client-jobs' | 'client-rate' | 'comparison-jobs';

/** An admitted job: release it when the job ends, however it ends (idempotent). */
export interface Admission {
  release(): void;
  /**
   * Charges `cost` more to the client's per-minute budget, for work known only once done (the source
   * view's, by the size of the files it read). The budget may go into debt, a minute's worth at most:
   * the client's next views wait until it is paid back.
   */
  charge(cost: number): void;
}

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Admits the work that misses the cache, per client and per comparison, so no visitor can take the
 * analysis workers from everyone else: a client gets a bounded number of jobs in flight and a budget
 * of job cost per minute (refilled continuously), a comparison a bounded number of jobs in flight.
 * Over a bound the job is refused with `rate-limited` and the seconds after which it would be taken.
 * Answers from the cache never come here. State is per process (each replica counts its own).
 */
export class FairShare {
  private readonly clientJobs = new Map<string, number>();
  private readonly comparisonJobs = new Map<string, number>();
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    private readonly limits: FairShareLimits,
    private readonly metrics: Metrics,
    private readonly now: () => number = Date.now,
  ) {}

  /** Throws the refusal `admit` would throw now, without taking anything (to refuse before other work). */
  check(client: string, comparison: string, cost: number): void {
    this.refusal(clientKey(client), comparison, cost);
  }

  /**
   * Runs a parse (an upload's file, a source archive) for `client` as one admitted job: it takes one of
   * the client's jobs in flight (ANALYSIS_CLIENT_JOBS), shared with its views. Not the comparison's (a
   * team uploading together is many clients), nor the per-minute budget of views: uploads are writes,
   * bounded per client by RATE_LIMIT_WRITES already. A refusal is sent after the pause every refusal
   * takes (pauseBeforeRefusal).
   */
  async parse<T>(client: string, job: () => Promise<T>): Promise<T> {
    let admitted: Admission;
    try {
      admitted = this.admit(client, null, 0);
    } catch (e) {
      await pauseBeforeRefusal(e);
      throw e;
    }
    try {
      return await job();
    } finally {
      admitted.release();
    }
  }

  /**
   * Takes a job of `cost` for `client` on `comparison`, or throws `rate-limited` naming the bound and
   * when to retry. The cost is charged to the client's per-minute budget at once.
   */
  admit(client: string, comparison: string | null, cost: number): Admission {
    const who = clientKey(client);
    this.refusal(who, comparison, cost);
    const rate = this.limits.clientJobsPerMinute;
    if (rate > 0 && cost > 0) this.bucket(who).tokens -= Math.min(cost, rate);
    inc(this.clientJobs, who, 1);
    if (comparison !== null) inc(this.comparisonJobs, comparison, 1);
    let released = false;
    return {
      charge: (more: number) => {
        if (rate <= 0 || !(more > 0)) return;
        const b = this.bucket(who);
        b.tokens = Math.max(-rate, b.tokens - more);
      },
      release: () => {
        if (released) return;
        released = true;
        inc(this.clientJobs, who, -1);
        if (comparison !== null) inc(this.comparisonJobs, comparison, -1);
      },
    };
  }

  private refusal(who: string, comparison: string | null, cost: number): void {
    const { clientJobs, clientJobsPerMinute, comparisonJobs } = this.limits;
    if (clientJobs > 0 && (this.clientJobs.get(who) ?? 0) >= clientJobs)
      throw this.refuse(
        'client-jobs',
        `this address already has ${clientJobs} analyses or parses running or waiting (ANALYSIS_CLIENT_JOBS); answers already computed are served at once, new ones after these finish`,
        2,
      );
    if (comparisonJobs > 0 && comparison !== null && (this.comparisonJobs.get(comparison) ?? 0) >= comparisonJobs)
      throw this.refuse(
        'comparison-jobs',
        `this comparison already has ${comparisonJobs} analyses running or waiting (ANALYSIS_COMPARISON_JOBS); try again shortly`,
        2,
      );
    if (clientJobsPerMinute > 0 && cost > 0) {
      const b = this.bucket(who);
      const need = Math.min(cost, clientJobsPerMinute);
      if (b.tokens < need)
        throw this.refuse(
          'client-rate',
          `this address has used its analysis budget (ANALYSIS_CLIENT_JOBS_PER_MINUTE=${clientJobsPerMinute}; this view costs ${cost}); answers already computed are served at once`,
          Math.max(1, Math.ceil(((need - b.tokens) * 60) / clientJobsPerMinute)),
        );
    }
  }

  /** Jobs admitted and not yet released, over all clients. */
  get inFlight(): number {
    let n = 0;
    for (const v of this.clientJobs.values()) n += v;
    return n;
  }

  private bucket(who: string): Bucket {
    const rate = this.limits.clientJobsPerMinute;
    const t = this.now();
    let b = this.buckets.get(who);
    if (!b) {
      b = { tokens: rate, at: t };
      this.buckets.set(who, b);
      // Full buckets carry no information: forget them now and then, so the map stays small.
      if (this.buckets.size > 10_000) this.forgetFull(t);
    } else {
      b.tokens = Math.min(rate, b.tokens + ((t - b.at) / 60_000) * rate);
      b.at = t;
    }
    return b;
  }

  private forgetFull(t: number): void {
    const rate = this.limits.clientJobsPerMinute;
    for (const [k, b] of this.buckets)
      if (b.tokens + ((t - b.at) / 60_000) * rate >= rate && !this.clientJobs.has(k)) this.buckets.delete(k);
  }

  private refuse(reason: RefusalReason, message: string, retryAfterSeconds: number): ServiceError {
    this.metrics.inc('stagediff_analysis_rejected_total', { reason });
    // An expected answer, not a fault: no stack trace to capture (a flood makes thousands).
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new ServiceError('rate-limited', message, { retryAfterSeconds });
    } finally {
      Error.stackTraceLimit = depth;
    }
  }
}

/**
 * How long a refusal waits before it is sent (at most its Retry-After). A client past its share should
 * wait before asking again anyway; one that does not, with many connections, gets at most one refusal
 * per connection per pause, so a flood cannot keep the event loop busy answering 429s either.
 */
export const REFUSAL_PAUSE_MS = 1000;

/** Waits REFUSAL_PAUSE_MS (at most the Retry-After) when `e` is a fair-share refusal; returns at once otherwise. */
export async function pauseBeforeRefusal(e: unknown): Promise<void> {
  if (!(e instanceof ServiceError) || e.code !== 'rate-limited') return;
  const ms = Math.min(REFUSAL_PAUSE_MS, (e.detail.retryAfterSeconds ?? 1) * 1000);
  await new Promise((r) => setTimeout(r, ms));
}

function inc(m: Map<string, number>, k: string, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n <= 0) m.delete(k);
  else m.set(k, n);
}

/**
 * The unit a client is counted by: an IPv4 address as is (also when written IPv4-mapped in IPv6), an
 * IPv6 address by its /64 — one subscriber's network hands out a whole /64, so counting single
 * addresses would let one client take as many budgets as it likes.
 */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!isIPv6(address)) return address;
  const [head, tail = ''] = address.split('::') as [string, string?];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
  return `${groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}
