/**
 * Seeded-free, deterministic decompression bombs for the hostile-input tests: each is a real gzip
 * stream that inflates far past any sane limit, built from one byte-aligned deflate segment
 * repeated, so it is made in seconds without deflating gigabytes.
 */
import { crc32, deflateRawSync, constants as z } from 'node:zlib';

const SEGMENT = 1 << 20;

/**
 * gzip whose payload is `segments` copies of `unit` (SEGMENT bytes each). A full flush ends each
 * deflate segment byte-aligned with no back-reference past it, so segments concatenate.
 */
function repeatedGzip(unit: Buffer, segments: number): Buffer {
  const seg = deflateRawSync(unit, { level: 9, finishFlush: z.Z_FULL_FLUSH });
  const last = deflateRawSync(Buffer.alloc(0), { level: 9 }); // one final, empty block
  let crc = 0;
  for (let i = 0; i < segments; i++) crc = crc32(unit, crc);
  const header = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 2, 255]);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc >>> 0, 0);
  trailer.writeUInt32LE((unit.length * segments) % 2 ** 32, 4);
  return Buffer.concat([header, ...Array.from({ length: segments }, () => seg), last, trailer]);
}

/** About 10 GB of zero bytes (the first byte is already an invalid protobuf tag). */
export function gzipBombZeros(): Buffer {
  return repeatedGzip(Buffer.alloc(SEGMENT), 9536);
}

/**
 * 1 GiB of a syntactically valid profile: 536,870,912 empty string_table entries (field 6,
 * length 0: bytes 0x32 0x00). A reader without a size cap would build a huge string table.
 */
export function gzipBombValidProto(): Buffer {
  const unit = Buffer.alloc(SEGMENT);
  for (let i = 0; i < SEGMENT; i += 2) unit[i] = 0x32;
  return repeatedGzip(unit, 1024);
}
