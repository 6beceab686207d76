import { gzipSync } from 'node:zlib';

/**
 * Encodes a small pprof profile (gzipped protobuf) for tests of hostile or odd input: any sample
 * type names, any function names (NUL included), and the file's own drop_frames/keep_frames.
 * Stacks are written leaf first, as pprof stores them; one location and one function per name.
 */
export function pprofBytes(p: {
  sampleTypes: [string, string][];
  samples: { stack: string[]; values: number[] }[];
  dropFrames?: string;
  keepFrames?: string;
}): Buffer {
  const strings: string[] = [''];
  const index = new Map<string, number>([['', 0]]);
  const str = (s: string) => {
    let i = index.get(s);
    if (i === undefined) {
      i = strings.length;
      strings.push(s);
      index.set(s, i);
    }
    return i;
  };
  const fnIds = new Map<string, number>();
  const fnId = (name: string) => {
    let id = fnIds.get(name);
    if (id === undefined) {
      id = fnIds.size + 1;
      fnIds.set(name, id);
    }
    return id;
  };
  const out: Buffer[] = [];
  for (const [type, unit] of p.sampleTypes) out.push(ld(1, Buffer.concat([u(1, str(type)), u(2, str(unit))])));
  for (const s of p.samples) {
    const locs = Buffer.concat(s.stack.map((n) => varint(fnId(n))));
    const vals = Buffer.concat(s.values.map((v) => varint(v)));
    out.push(ld(2, Buffer.concat([ld(1, locs), ld(2, vals)])));
  }
  for (const [name, id] of fnIds) {
    out.push(ld(4, Buffer.concat([u(1, id), ld(4, Buffer.concat([u(1, id), u(2, 1)]))])));
    out.push(ld(5, Buffer.concat([u(1, id), u(2, str(name)), u(4, str('main.go'))])));
  }
  const drop = p.dropFrames ? str(p.dropFrames) : 0;
  const keep = p.keepFrames ? str(p.keepFrames) : 0;
  for (const s of strings) out.push(ld(6, Buffer.from(s, 'utf8')));
  if (drop) out.push(u(7, drop));
  if (keep) out.push(u(8, keep));
  return gzipSync(Buffer.concat(out));
}

function varint(v: number): Buffer {
  const b: number[] = [];
  while (v >= 0x80) {
    b.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  b.push(v);
  return Buffer.from(b);
}

function u(field: number, v: number): Buffer {
  return Buffer.concat([varint(field * 8), varint(v)]);
}

function ld(field: number, b: Buffer): Buffer {
  return Buffer.concat([varint(field * 8 + 2), varint(b.length), b]);
}
