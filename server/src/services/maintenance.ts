import type { Store } from '../store/index.ts';
import type { Metrics } from './metrics.ts';

const DAY_MS = 24 * 3600 * 1000;

export interface MaintenanceOptions {
  /** Comparisons neither changed nor viewed for this many days are removed; 0 keeps everything. */
  retentionDays: number;
  /** Time between two rounds, ms (default one hour). */
  intervalMs?: number;
  /** Time from start to the first round, ms (default one minute: opening the store just swept). */
  firstDelayMs?: number;
  /** The clock retention reads (tests pass a later time). */
  now?: () => number;
  /** Where a failed round is reported. */
  onError?: (e: unknown) => void;
}

export interface MaintenanceReport {
  /** Ids of the comparisons retention removed. */
  expired: string[];
}

/**
 * The store's housekeeping, a minute after start and then every hour: retention (RETENTION_DAYS) removes
 * comparisons nobody changed or viewed for that long, blobs included (never the read-only demo, never
 * one marked "keep"); then a sweep clears what interrupted uploads left (expired pins, temp files,
 * objects of dead uploads in the bucket). Each replica runs it; the store makes concurrent rounds
 * safe.
 */
export class Maintenance {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<MaintenanceReport> | null = null;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly metrics: Metrics,
    private readonly options: MaintenanceOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  /** One round; a round already under way is joined, not doubled. */
  run(): Promise<MaintenanceReport> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async round(): Promise<MaintenanceReport> {
    let expired: string[] = [];
    if (this.options.retentionDays > 0) {
      expired = await this.store.expireComparisons(this.now() - this.options.retentionDays * DAY_MS);
      this.metrics.inc('stagediff_retention_removed_total', {}, expired.length);
    }
    await this.store.sweep();
    return { expired };
  }

  start(): void {
    if (this.timer) return;
    const tick = () => {
      this.run().catch((e: unknown) => this.options.onError?.(e));
    };
    // Unreferenced: housekeeping never keeps a process alive.
    this.timer = setTimeout(() => {
      tick();
      this.timer = setInterval(tick, this.options.intervalMs ?? 3600_000);
      this.timer.unref();
    }, this.options.firstDelayMs ?? 60_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      clearInterval(this.timer);
    }
    this.timer = null;
    await this.running?.catch(() => undefined);
  }
}
