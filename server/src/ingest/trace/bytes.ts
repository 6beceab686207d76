import { IngestError } from '../errors.ts';
import type { ByteSource } from '../source.ts';

/**
 * Reads a byte stream in pieces a caller asks for by size (`fill`), then decodes them synchronously.
 * Only what has not been consumed is kept, so memory is the largest request plus one input chunk.
 */
export class ByteFeed {
  private buf: Uint8Array = new Uint8Array(0);
  private start = 0;
  private end = 0;
  private done = false;
  private readonly it: AsyncIterator<Buffer | Uint8Array>;
  /** Bytes consumed before `buf[start]`. */
  private base = 0;
  /** Position of the next byte to decode (absolute, counting from the stream's start). */
  pos = 0;

  constructor(
    src: ByteSource,
    private readonly maxBytes: number,
  ) {
    this.it = src[Symbol.asyncIterator]();
  }

  /** Bytes available to decode without waiting. */
  get available(): number {
    return this.base + this.end - this.pos;
  }

  /** True once the stream has ended and every byte was consumed. */
  get atEnd(): boolean {
    return this.done && this.available === 0;
  }

  /** Waits until `n` bytes are available or the stream ends; returns how many are available. */
  async fill(n: number): Promise<number> {
    while (this.available < n && !this.done) {
      const r = await this.it.next();
      if (r.done) {
        this.done = true;
        break;
      }
      const c = r.value;
      if (c.length === 0) continue;
      if (this.base + this.end + c.length > this.maxBytes) {
        throw new IngestError(
          'too-large',
          `the trace is larger than ${this.maxBytes} bytes (TRACE_MAX_BYTES); record a shorter one (/debug/pprof/trace?seconds=…)`,
        );
      }
      const keepFrom = this.pos - this.base;
      const kept = this.end - keepFrom;
      if (kept === 0) {
        this.base = this.pos;
        this.buf = c;
        this.start = 0;
        this.end = c.length;
      } else {
        const next = new Uint8Array(kept + c.length);
        next.set(this.buf.subarray(keepFrom, this.end), 0);
        next.set(c, kept);
        this.base = this.pos;
        this.buf = next;
        this.start = 0;
        this.end = next.length;
      }
    }
    return this.available;
  }

  /** Stops reading the source early. */
  async close(): Promise<void> {
    await this.it.return?.();
  }

  private at(): number {
    return this.pos - this.base + this.start;
  }

  /** The next byte; the caller has checked `available`. */
  byte(): number {
    const b = this.buf[this.at()]!;
    this.pos++;
    return b;
  }

  /** An unsigned varint from the available bytes, or throws `truncated` naming `what`. */
  uvarint(what: string): number {
    let i = this.at();
    const lim = this.end;
    let x = 0;
    let mul = 1;
    for (let k = 0; k < 10; k++) {
      if (i >= lim) throw new TruncatedError(`the trace ends inside the ${what}`);
      const c = this.buf[i++]!;
      if (c < 0x80) {
        if (k === 9 && c > 1) throw new IngestError('malformed', `broken trace: ${what} overflows 64 bits`);
        this.pos += k + 1;
        return x + c * mul;
      }
      x += (c & 0x7f) * mul;
      mul *= 128;
    }
    throw new IngestError('malformed', `broken trace: ${what} overflows 64 bits`);
  }

  /** A copy of the next `n` available bytes. */
  take(n: number): Uint8Array {
    const i = this.at();
    const out = this.buf.slice(i, i + n);
    this.pos += n;
    return out;
  }

  /** Skips `n` available bytes. */
  skip(n: number): void {
    this.pos += n;
  }
}

/** The input ended in the middle of a structure (a truncated trace). */
export class TruncatedError extends IngestError {
  constructor(message: string) {
    super('malformed', message);
  }
}

/**
 * A cursor over a batch's bytes. `uvarint` follows Go's binary.Uvarint: at most 10 bytes, the 10th
 * at most 1; a varint cut by the end of the data is an error naming `what`.
 */
export class BatchReader {
  pos = 0;
  constructor(readonly data: Uint8Array) {}

  get left(): number {
    return this.data.length - this.pos;
  }

  byte(): number {
    if (this.pos >= this.data.length) throw new IngestError('malformed', 'broken trace: a batch ends early');
    return this.data[this.pos++]!;
  }

  uvarint(what: string): number {
    const d = this.data;
    let i = this.pos;
    let x = 0;
    let mul = 1;
    for (let k = 0; k < 10; k++) {
      if (i >= d.length) throw new IngestError('malformed', `broken trace: invalid varint for ${what}`);
      const c = d[i++]!;
      if (c < 0x80) {
        if (k === 9 && c > 1) throw new IngestError('malformed', `broken trace: ${what} overflows 64 bits`);
        this.pos = i;
        return x + c * mul;
      }
      x += (c & 0x7f) * mul;
      mul *= 128;
    }
    throw new IngestError('malformed', `broken trace: ${what} overflows 64 bits`);
  }
}
