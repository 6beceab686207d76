import { gzipSync } from 'node:zlib';

/** A ustar header (what tar writes), for archives the tools would not make: metadata headers by the million, links. */
export function tarHeader(name: string, size: number, type = '0', linkname = ''): Buffer {
  const h = Buffer.alloc(512);
  h.write(name, 0, 100, 'utf8');
  h.write('0000644\0', 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write(type, 156);
  h.write(linkname, 157);
  h.write('ustar\u000000', 257, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return h;
}

/**
 * A .tar.gz of `members` × 2048 empty pax headers (names from a seeded generator) and then one Go file:
 * each gzip member holds 1 MiB of headers, and gunzip reads the members one after another, so 2.1 M
 * headers take about 6 MB.
 */
export function paxFlood(members: number, seed = 33): Buffer {
  let x = seed;
  const next = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return x;
  };
  const headers: Buffer[] = [];
  for (let i = 0; i < 2048; i++) headers.push(tarHeader(`PaxHeaders.${next() % 16}/f${next() % 4}.go`, 0, 'x'));
  const member = gzipSync(Buffer.concat(headers), { level: 9 });
  const code = Buffer.from('package main\n');
  const last = gzipSync(
    Buffer.concat([tarHeader('main.go', code.length, '0'), code, Buffer.alloc(512 - code.length), Buffer.alloc(1024)]),
  );
  return Buffer.concat([...Array.from({ length: members }, () => member), last]);
}
