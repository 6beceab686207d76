/**
 * The largest and smallest of a list of numbers, by a loop. Spreading a list into Math.max's (or push's)
 * arguments passes every item on the stack, which overflows past about 120,000 items, so the server
 * never spreads a list into a call (server/test/no-spread.test.ts checks server/src for it).
 */

/** The largest item, or `empty` when there is none (Math.max of nothing is −Infinity). */
export function maxOf(xs: Iterable<number>, empty = Number.NEGATIVE_INFINITY): number {
  let out = Number.NEGATIVE_INFINITY;
  let any = false;
  for (const x of xs) {
    // NaN wins, as it does in Math.max.
    if (x > out || Number.isNaN(x)) out = x;
    any = true;
    if (Number.isNaN(out)) break;
  }
  return any ? out : empty;
}

/** The smallest item, or `empty` when there is none (Math.min of nothing is +Infinity). */
export function minOf(xs: Iterable<number>, empty = Number.POSITIVE_INFINITY): number {
  let out = Number.POSITIVE_INFINITY;
  let any = false;
  for (const x of xs) {
    if (x < out || Number.isNaN(x)) out = x;
    any = true;
    if (Number.isNaN(out)) break;
  }
  return any ? out : empty;
}

/** Appends every item of `items` to `out`, one by one (never as spread arguments). */
export function appendAll<T>(out: T[], items: Iterable<T>): T[] {
  for (const x of items) out.push(x);
  return out;
}
