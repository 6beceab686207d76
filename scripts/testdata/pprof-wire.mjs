// What the seeded profile generators share: a seeded PRNG and a writer of protocol-buffer wire
// format (the pprof profile's encoding), small and dependency-free.

/** mulberry32: a small seeded PRNG returning floats in [0, 1). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Protocol-buffer wire writer into a growable buffer. */
export class Writer {
  constructor(size = 1 << 22) {
    this.buf = Buffer.allocUnsafe(size);
    this.pos = 0;
  }
  ensure(n) {
    if (this.pos + n <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(b, 0, 0, this.pos);
    this.buf = b;
  }
  varint(v) {
    this.ensure(10);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }
  tag(field, wire) {
    this.varint(field * 8 + wire);
  }
  bytes(field, b) {
    this.tag(field, 2);
    this.varint(b.length);
    this.ensure(b.length);
    b.copy(this.buf, this.pos);
    this.pos += b.length;
  }
  string(field, s) {
    this.bytes(field, Buffer.from(s, 'utf8'));
  }
  uint(field, v) {
    this.tag(field, 0);
    this.varint(v);
  }
  take() {
    const out = Buffer.from(this.buf.subarray(0, this.pos));
    this.pos = 0;
    return out;
  }
}

export function varintLength(v) {
  let n = 1;
  while (v >= 0x80) {
    v = Math.floor(v / 0x80);
    n++;
  }
  return n;
}
