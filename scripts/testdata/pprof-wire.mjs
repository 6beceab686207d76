// What the seeded profile generators share: a seeded PRNG and a writer of protocol-buffer wire
// format (the pprof profile's encoding), small and dependency-free.
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { createGzip } from 'node:zlib';

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

/**
 * A gzipped CPU profile written as it is made: `write` appends encoded bytes (waiting when the gzip
 * stream is full), `str` interns a string-table entry, and `finish` writes the string table and moves
 * the file into place. The two sample types (samples/count, cpu/nanoseconds) are written first.
 */
export async function openCpuProfile(out) {
  mkdirSync(dirname(out), { recursive: true });
  const tmp = `${out}.${process.pid}.part`;
  const gz = createGzip({ level: 6 });
  const file = createWriteStream(tmp);
  gz.pipe(file);
  const done = new Promise((res, rej) => {
    file.on('finish', res);
    file.on('error', rej);
    gz.on('error', rej);
  });
  let inflated = 0;
  const write = async (b) => {
    inflated += b.length;
    if (!gz.write(b)) await new Promise((r) => gz.once('drain', r));
  };
  const strings = [''];
  const strIndex = new Map([['', 0]]);
  const str = (s) => {
    let i = strIndex.get(s);
    if (i === undefined) {
      i = strings.length;
      strings.push(s);
      strIndex.set(s, i);
    }
    return i;
  };
  const w = new Writer();
  for (const [type, unit] of [
    ['samples', 'count'],
    ['cpu', 'nanoseconds'],
  ]) {
    const vt = new Writer(64);
    vt.uint(1, str(type));
    vt.uint(2, str(unit));
    w.bytes(1, vt.take());
  }
  await write(w.take());
  return { write, str, strings, done, gz, tmp, inflated: () => inflated };
}
