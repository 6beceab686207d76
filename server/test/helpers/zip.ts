/**
 * Zip archives written byte by byte, for archives the tools would not make: links and devices by their
 * mode, `../` names, sizes that lie, ten thousands of entries (zip64 end records past 65,534).
 */
import { crc32 } from 'node:zlib';

export interface ZipEntry {
  name: string;
  data?: Buffer;
  /** The size the directory declares (default: the data's). */
  declared?: number;
  /** The entry's bytes deflated (method 8); else it is stored. */
  deflated?: Buffer;
  /** Unix mode (type and permissions; default a regular file 0644). */
  mode?: number;
}

export function zipBytes(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const data = e.data ?? Buffer.alloc(0);
    const packed = e.deflated ?? data;
    const name = Buffer.from(e.name, 'utf8');
    const usize = e.declared ?? data.length;
    const crc = crc32(data);
    const l = Buffer.alloc(30);
    l.writeUInt32LE(0x04034b50, 0);
    l.writeUInt16LE(20, 4);
    l.writeUInt16LE(0x800, 6);
    l.writeUInt16LE(e.deflated ? 8 : 0, 8);
    l.writeUInt32LE(crc, 14);
    l.writeUInt32LE(packed.length, 18);
    l.writeUInt32LE(usize, 22);
    l.writeUInt16LE(name.length, 26);
    locals.push(l, name, packed);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE((3 << 8) | 20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x800, 8);
    c.writeUInt16LE(e.deflated ? 8 : 0, 10);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(packed.length, 20);
    c.writeUInt32LE(usize, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(((e.mode ?? 0o100644) << 16) >>> 0, 38);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length + packed.length;
  }
  const cd = Buffer.concat(central);
  const tail: Buffer[] = [];
  const many = entries.length > 0xfffe;
  if (many) {
    const z = Buffer.alloc(56);
    z.writeUInt32LE(0x06064b50, 0);
    z.writeBigUInt64LE(44n, 4);
    z.writeUInt16LE(45, 12);
    z.writeUInt16LE(45, 14);
    z.writeBigUInt64LE(BigInt(entries.length), 24);
    z.writeBigUInt64LE(BigInt(entries.length), 32);
    z.writeBigUInt64LE(BigInt(cd.length), 40);
    z.writeBigUInt64LE(BigInt(offset), 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(offset + cd.length), 8);
    loc.writeUInt32LE(1, 16);
    tail.push(z, loc);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(many ? 0xffff : entries.length, 8);
  end.writeUInt16LE(many ? 0xffff : entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, ...tail, end]);
}
