import type { Store } from '../store/index.ts';

/** How often one comparison's read from a cache is passed to the store, at most. */
export const VIEW_RECORD_INTERVAL_MS = 60_000;

/** Comparisons remembered at once; past it the oldest marks go (they are a throttle, not a record). */
const MAX_TRACKED = 10_000;

/**
 * Retention counts a comparison as used when it is read (store.recordView). A read served from a
 * cache (the result memo, the shared view cache, a 304) never loads the comparison's tree, so it is
 * recorded here: at most once a minute per comparison in this process, fire and forget, never delaying
 * or failing the answer. The store itself writes at most once per VIEW_TOUCH_MS.
 */
export class ViewRecorder {
  private readonly last = new Map<string, number>();

  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  /** Notes a read of comparison `id`; the write (when due) runs in the background. */
  seen(id: string): void {
    const t = this.now();
    const prev = this.last.get(id);
    if (prev !== undefined && t - prev < VIEW_RECORD_INTERVAL_MS) return;
    this.last.delete(id);
    this.last.set(id, t);
    if (this.last.size > MAX_TRACKED) this.last.delete(this.last.keys().next().value!);
    this.store.recordView(id).catch(() => undefined);
  }
}
