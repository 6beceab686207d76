/**
 * Per-request storage for the importers that read one row per request (hey -o csv, ab -g, vegeta
 * results, k6 points, JMeter JTL, ghz details): numbers live in typed arrays that double when full
 * (amortised O(1) push, no boxing), never in row objects, so memory grows with the row count and
 * not with the file's bytes.
 */

/** A Float64Array that doubles when full. `view()` shares memory with the array. */
export class GrowableF64 {
  private buf: Float64Array;
  length = 0;
  constructor(initial = 4096) {
    this.buf = new Float64Array(initial);
  }
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  /** The filled part (shares memory with the array). */
  view(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Same as GrowableF64 for 32-bit integers (a row's second on the run's clock). */
export class GrowableI32 {
  private buf: Int32Array;
  length = 0;
  constructor(initial = 4096) {
    this.buf = new Int32Array(initial);
  }
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Int32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Int32Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Same as GrowableF64 for small codes (a request's outcome class, an error flag). */
export class GrowableU8 {
  private buf: Uint8Array;
  length = 0;
  constructor(initial = 4096) {
    this.buf = new Uint8Array(initial);
  }
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint8Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Outcome class kept per request: anything but OK counts as an error in a timeline bucket. */
export const OK = 0;
export const TRANSPORT = 1;
export const NON2XX = 2;
