/** Deterministic pseudo-random bytes (xorshift32): one seed, one content — in any process. */
export function bytesOf(seed: number, length: number): Buffer {
  const out = Buffer.allocUnsafe(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}
