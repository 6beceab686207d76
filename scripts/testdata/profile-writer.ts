/**
 * A small writer for pprof's profile.proto (proto/profile.proto), for generated test inputs only:
 * the reader under test never shares code with it. Field numbers are those of the format.
 */

/** Growable protobuf output buffer: varints, length-delimited fields and packed repeated varints. */
export class ProtoWriter {
  private buf: Buffer;
  private len = 0;

  constructor(initialBytes = 64) {
    this.buf = Buffer.allocUnsafe(initialBytes);
  }

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  /** An unsigned varint; negative numbers are written as 64-bit two's complement, as protobuf does. */
  varint(v: number | bigint): this {
    let x = BigInt.asUintN(64, BigInt(v));
    if (typeof v === 'number' && v >= 0 && v < 2 ** 31) {
      let n = v;
      this.ensure(5);
      while (n >= 0x80) {
        this.buf[this.len++] = (n & 0x7f) | 0x80;
        n >>>= 7;
      }
      this.buf[this.len++] = n;
      return this;
    }
    this.ensure(10);
    while (x >= 0x80n) {
      this.buf[this.len++] = Number(x & 0x7fn) | 0x80;
      x >>= 7n;
    }
    this.buf[this.len++] = Number(x);
    return this;
  }

  /** A varint field (wire type 0). */
  uint(field: number, v: number | bigint): this {
    return this.varint(field << 3).varint(v);
  }

  /** A length-delimited field (wire type 2). */
  bytes(field: number, b: Uint8Array): this {
    this.varint((field << 3) | 2).varint(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
    return this;
  }

  /** A packed repeated varint field. */
  packed(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.varint(v);
    return this.bytes(field, inner.finish());
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

export interface WriterLine {
  functionId: number;
  line: number;
}
export interface WriterLocation {
  id: number;
  mappingId?: number;
  address?: number;
  /** Innermost first, as pprof stores inlined frames. */
  lines: WriterLine[];
}
export interface WriterFunction {
  id: number;
  name: string;
  filename: string;
}
export interface WriterMapping {
  id: number;
  file: string;
}
export interface WriterSample {
  /** Leaf first. */
  locationIds: readonly number[];
  values: readonly number[];
  labels?: { key: string; str?: string; num?: number; unit?: string }[];
}
export interface WriterProfile {
  sampleTypes: { type: string; unit: string }[];
  samples: Iterable<WriterSample>;
  mappings?: WriterMapping[];
  locations: WriterLocation[];
  functions: WriterFunction[];
  dropFrames?: string;
  keepFrames?: string;
  timeNanos?: number;
  durationNanos?: number;
  periodType?: { type: string; unit: string };
  period?: number;
  comments?: string[];
  defaultSampleType?: string;
}

/** Encodes a profile as an uncompressed profile.proto message. */
export function encodeProfile(p: WriterProfile): Buffer {
  const strings = new Map<string, number>([['', 0]]);
  const s = (x: string): number => {
    let i = strings.get(x);
    if (i === undefined) {
      i = strings.size;
      strings.set(x, i);
    }
    return i;
  };
  const w = new ProtoWriter(1 << 20);
  const valueType = (t: { type: string; unit: string }) =>
    new ProtoWriter().uint(1, s(t.type)).uint(2, s(t.unit)).finish();
  for (const t of p.sampleTypes) w.bytes(1, valueType(t));
  for (const smp of p.samples) {
    const m = new ProtoWriter().packed(1, smp.locationIds).packed(2, smp.values);
    for (const l of smp.labels ?? []) {
      const lw = new ProtoWriter().uint(1, s(l.key));
      if (l.str !== undefined) lw.uint(2, s(l.str));
      if (l.num !== undefined) lw.uint(3, l.num);
      if (l.unit !== undefined) lw.uint(4, s(l.unit));
      m.bytes(3, lw.finish());
    }
    w.bytes(2, m.finish());
  }
  for (const mp of p.mappings ?? []) {
    w.bytes(3, new ProtoWriter().uint(1, mp.id).uint(2, 0x400000).uint(3, 0x800000).uint(5, s(mp.file)).finish());
  }
  for (const loc of p.locations) {
    const lw = new ProtoWriter().uint(1, loc.id);
    if (loc.mappingId) lw.uint(2, loc.mappingId);
    if (loc.address) lw.uint(3, loc.address);
    for (const ln of loc.lines) lw.bytes(4, new ProtoWriter().uint(1, ln.functionId).uint(2, ln.line).finish());
    w.bytes(4, lw.finish());
  }
  for (const f of p.functions) {
    w.bytes(5, new ProtoWriter().uint(1, f.id).uint(2, s(f.name)).uint(3, s(f.name)).uint(4, s(f.filename)).finish());
  }
  // Every string the remaining fields need, before the table is written.
  const tail = new ProtoWriter();
  if (p.dropFrames !== undefined) tail.uint(7, s(p.dropFrames));
  if (p.keepFrames !== undefined) tail.uint(8, s(p.keepFrames));
  if (p.timeNanos !== undefined) tail.uint(9, p.timeNanos);
  if (p.durationNanos !== undefined) tail.uint(10, p.durationNanos);
  if (p.periodType) tail.bytes(11, valueType(p.periodType));
  if (p.period !== undefined) tail.uint(12, p.period);
  for (const c of p.comments ?? []) tail.uint(13, s(c));
  if (p.defaultSampleType !== undefined) tail.uint(14, s(p.defaultSampleType));
  for (const str of strings.keys()) w.bytes(6, Buffer.from(str, 'utf8'));
  const head = w.finish();
  const rest = tail.finish();
  return Buffer.concat([head, rest]);
}
