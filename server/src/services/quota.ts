import { formatBytes } from '../api/format.ts';
import type { Config } from '../config.ts';
import type { ComparisonTree, Store } from '../store/index.ts';
import { ServiceError } from './errors.ts';

/** Bytes of uploaded files a comparison holds (each file counted, as its page lists them, and each stage's stored sources). */
export function comparisonBytes(tree: ComparisonTree): number {
  let n = 0;
  for (const s of tree.stages) {
    for (const a of s.artifacts) n += a.size;
    n += s.sources?.size ?? 0;
  }
  return n;
}

/** A file's claim on the storage bounds while it is being stored; release it once it is stored or refused. */
export interface Reservation {
  release(): void;
}

/**
 * The storage bounds of uploads: MAX_COMPARISON_BYTES per comparison, MAX_STORAGE_BYTES for the
 * instance (bytes of distinct stored files: identical bytes are kept once). A file is checked once its
 * size is known (spooled) and before it is parsed or stored; files being stored by this process count
 * as used until they land, so concurrent uploads cannot pass the bound together. (Replicas each see
 * the others' files once stored.)
 */
export class Quota {
  private readonly pending = new Map<string, number>();
  private pendingTotal = 0;
  private uploads = 0;

  constructor(
    private readonly store: Store,
    private readonly config: Pick<Config, 'maxStorageBytes' | 'maxComparisonBytes'>,
  ) {}

  /** Files being stored by this process now. */
  get inProgress(): number {
    return this.uploads;
  }

  /**
   * Claims `size` bytes for a file of `comparisonId`, or refuses it naming the bound it would pass. The
   * claim is taken before the store is read, so uploads checked at the same time each see the others.
   */
  async reserve(comparisonId: string, filename: string, size: number, sha256: string): Promise<Reservation> {
    const { maxComparisonBytes, maxStorageBytes } = this.config;
    this.add(comparisonId, size);
    let released = false;
    const reservation: Reservation = {
      release: () => {
        if (released) return;
        released = true;
        this.add(comparisonId, -size);
      },
    };
    try {
      if (maxComparisonBytes > 0) {
        // This file and the others of the comparison being stored now, on top of what it holds. A file
        // stored while the store is read may be missing from both: the larger count of those in
        // progress, before or after the read, is taken (at worst a file is counted twice meanwhile).
        const before = this.pending.get(comparisonId) ?? 0;
        const tree = await this.store.getComparisonTree(comparisonId);
        const after = (tree ? comparisonBytes(tree) : 0) + Math.max(before, this.pending.get(comparisonId) ?? 0);
        if (after > maxComparisonBytes)
          throw new ServiceError(
            'comparison-quota',
            `${filename} (${formatBytes(size)}) would bring this comparison to ${formatBytes(after)}, over the ${formatBytes(maxComparisonBytes)} one comparison may hold (MAX_COMPARISON_BYTES); remove files or start another comparison`,
            { param: 'file' },
          );
      }
      if (maxStorageBytes > 0 && !(await this.store.hasBlob(sha256))) {
        const before = this.pendingTotal;
        const after = (await this.store.storedBytes()) + Math.max(before, this.pendingTotal);
        if (after > maxStorageBytes)
          throw new ServiceError(
            'storage-quota',
            `${filename} (${formatBytes(size)}) does not fit: this server keeps at most ${formatBytes(maxStorageBytes)} of uploaded files (MAX_STORAGE_BYTES) and holds ${formatBytes(after - size)}`,
            { retryAfterSeconds: 3600 },
          );
      }
    } catch (e) {
      reservation.release();
      throw e;
    }
    return reservation;
  }

  private add(comparisonId: string, size: number): void {
    const n = (this.pending.get(comparisonId) ?? 0) + size;
    if (n <= 0) this.pending.delete(comparisonId);
    else this.pending.set(comparisonId, n);
    this.pendingTotal += size;
    this.uploads += Math.sign(size);
  }
}
