/** Writes a .tar.gz (ustar, with a pax record for paths past 100 bytes) of files held in memory. */
import { gzipSync } from 'node:zlib';

function header(name: string, size: number, type: string): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100, 'latin1');
  h.write('0000000\0', 108, 'latin1');
  h.write('0000000\0', 116, 'latin1');
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124, 'latin1');
  h.write('00000000000\0', 136, 'latin1');
  h.write(type, 156, 'latin1');
  h.write('ustar\u000000', 257, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

function pad(n: number): Buffer {
  return Buffer.alloc((512 - (n % 512)) % 512);
}

export function tarGz(files: Iterable<[string, Buffer]>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, data] of files) {
    if (Buffer.byteLength(name) > 100) {
      // A pax record "LEN path=NAME\n", where LEN counts itself.
      const body = ` path=${name}\n`;
      const bodyLen = Buffer.byteLength(body);
      let len = bodyLen + 1;
      while (String(len).length + bodyLen !== len) len = String(len).length + bodyLen;
      const rec = Buffer.from(`${len}${body}`, 'utf8');
      parts.push(header('PaxHeader', rec.length, 'x'), rec, pad(rec.length));
    }
    parts.push(header(name, data.length, '0'), data, pad(data.length));
  }
  parts.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(parts));
}
