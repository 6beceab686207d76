import { IngestError } from '../errors.ts';

/**
 * A minimal protobuf wire reader over a byte range, exact for 64-bit integers.
 *
 * Signed integers come back as JS numbers, with `unsafe` set when one lies outside ±(2^53−1), so
 * the caller can check the exact value (lastI64Decimal) rather than show a rounded number. Ids (uint64) come back as a Map key
 * that is exact for any 64-bit value.
 */
export class Wire {
  pos: number;
  /** Set by `i64` when the value read did not fit a safe integer. */
  unsafe = false;
  private lo = 0;
  private hi = 0;

  constructor(
    public buf: Uint8Array,
    start: number,
    public end: number,
  ) {
    this.pos = start;
  }

  /** Points the reader at another range, so a hot loop reuses one reader instead of allocating. */
  reset(buf: Uint8Array, start: number, end: number): this {
    this.buf = buf;
    this.pos = start;
    this.end = end;
    return this;
  }

  get done(): boolean {
    return this.pos >= this.end;
  }

  fail(what: string): never {
    throw new IngestError('not-a-profile', `not a valid pprof protobuf: ${what} at byte ${this.pos}`);
  }

  /** Reads one varint (at most 10 bytes) into lo/hi, the low and high 32 bits. */
  private varint(): void {
    const b = this.buf;
    let p = this.pos;
    if (p >= this.end) this.fail('truncated varint');
    let c = b[p++]!;
    if (c < 0x80) {
      this.lo = c;
      this.hi = 0;
      this.pos = p;
      return;
    }
    let lo = c & 0x7f;
    let hi = 0;
    let shift = 7;
    for (;;) {
      if (p >= this.end) this.fail('truncated varint');
      c = b[p++]!;
      if (shift < 28) lo |= (c & 0x7f) << shift;
      else if (shift === 28) {
        lo |= (c & 0x0f) << 28;
        hi = (c & 0x7f) >>> 4;
      } else if (shift < 63) hi |= (c & 0x7f) << (shift - 32);
      else {
        if (c > 1) this.fail('overlong varint');
        hi |= c << 31;
      }
      if (c < 0x80) break;
      shift += 7;
      if (shift > 63) this.fail('overlong varint');
    }
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
    this.pos = p;
  }

  /** A varint that must fit 32 bits: a tag or a length. */
  u32(): number {
    this.varint();
    if (this.hi !== 0) this.fail('tag or length does not fit 32 bits');
    return this.lo;
  }

  /** A signed 64-bit varint (two's complement) as a number; sets `unsafe` beyond ±(2^53−1). */
  i64(): number {
    this.varint();
    const { lo, hi } = this;
    if (hi & 0x80000000) {
      const nlo = ((~lo >>> 0) + 1) % 4294967296;
      const nhi = (~hi >>> 0) + (nlo === 0 ? 1 : 0);
      this.unsafe = nhi >= 0x200000;
      return -(nhi * 4294967296 + nlo);
    }
    this.unsafe = hi >= 0x200000;
    return hi * 4294967296 + lo;
  }

  /** The last varint read, as an exact signed 64-bit integer in decimal (for values past 2^53). */
  lastI64Decimal(): string {
    return BigInt.asIntN(64, (BigInt(this.hi) << 32n) | BigInt(this.lo)).toString();
  }

  /** A uint64 id as an exact Map key: a number when safe, else a string. */
  id(): number | string {
    this.varint();
    return this.hi < 0x200000 ? this.hi * 4294967296 + this.lo : `${this.hi}:${this.lo}`;
  }

  /**
   * Reads a length prefix and returns the payload's end, leaving `pos` at its start: span() without
   * allocating a tuple, for loops that run once per sample.
   */
  enter(): number {
    const len = this.u32();
    const end = this.pos + len;
    if (end > this.end) this.fail(`length ${len} runs past the end of its message`);
    return end;
  }

  /** Reads a length prefix and returns [start, end) of the payload, checked against the buffer. */
  span(): [number, number] {
    const len = this.u32();
    const start = this.pos;
    const end = start + len;
    if (end > this.end) this.fail(`length ${len} runs past the end of its message`);
    this.pos = end;
    return [start, end];
  }

  string(): string {
    const [s, e] = this.span();
    return decodeUtf8(this.buf, s, e);
  }

  /** Skips a field of the given wire type. Groups (3/4) are refused: the format never uses them. */
  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.span();
        return;
      case 5:
        this.pos += 4;
        break;
      default:
        this.fail(`unsupported wire type ${wireType}`);
    }
    if (this.pos > this.end) this.fail('truncated fixed-width field');
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });
// Node's native one-byte decoder; on pure ASCII it equals UTF-8 decoding and needs no Buffer view.
const latin1Slice: ((this: Uint8Array, start: number, end: number) => string) | undefined = (
  Buffer.prototype as unknown as { latin1Slice?: (this: Uint8Array, start: number, end: number) => string }
).latin1Slice;

/** Decodes UTF-8 leniently: invalid bytes become U+FFFD, so names are always valid text. */
export function decodeUtf8(buf: Uint8Array, start: number, end: number): string {
  // Pure ASCII is the common case for symbol names: decode it without the TextDecoder round trip.
  let ascii = true;
  for (let i = start; i < end; i++) {
    if (buf[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii && latin1Slice) return latin1Slice.call(buf, start, end);
  return utf8.decode(buf.subarray(start, end));
}
