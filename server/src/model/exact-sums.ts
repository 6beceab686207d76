/**
 * When a column of sample values adds up exactly in doubles, in any order and over any subset.
 *
 * A double holds every integer up to 2^53, and every multiple of 2^k up to 2^(53+k). So when all
 * values are integers sharing the factor 2^k, and their absolute values add up to at most
 * (2^53 − 1)·2^k, every partial sum is such a multiple within range: each one exact. Small
 * profiles pass on the first test (k = 0); a fleet-merged CPU profile, whose nanosecond values are
 * multiples of the 10 ms period (2^7 · 78125), may reach 2^60 ns before it fails.
 */
export function exactSums(v: Float64Array): boolean {
  let abs = 0;
  for (let i = 0; i < v.length; i++) {
    const x = v[i]!;
    if (!Number.isInteger(x)) return false;
    abs += Math.abs(x);
  }
  if (abs <= Number.MAX_SAFE_INTEGER) return true;
  const unit = commonPowerOfTwo(v);
  // Each |x| / unit is an exact integer; their sum stays exact while it is at most 2^53 − 1.
  let units = 0;
  for (let i = 0; i < v.length; i++) {
    units += Math.abs(v[i]!) / unit;
    if (units > Number.MAX_SAFE_INTEGER) return false;
  }
  return true;
}

/** The largest power of two dividing every non-zero value (1 when none is even; 1 for all zeros). */
export function commonPowerOfTwo(v: Float64Array): number {
  // int64 values are at most 2^63 in size, so no value has a larger factor.
  let unit = 2 ** 63;
  let seen = false;
  for (let i = 0; i < v.length && unit > 1; i++) {
    const x = Math.abs(v[i]!);
    if (x === 0) continue;
    seen = true;
    while (unit > 1 && x % unit !== 0) unit /= 2;
  }
  return seen ? unit : 1;
}
