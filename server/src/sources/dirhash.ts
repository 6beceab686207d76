/**
 * The "h1:" hash go.sum records for a module version: the go command's dirhash of the module's zip.
 * Each file of the zip (by its name in the zip, `module@version/path`) gives one line, the SHA-256 of
 * its bytes in lower-case hex, two spaces, the name and a newline; the lines are sorted by name (byte
 * order) and hashed with SHA-256 again; the hash is that digest in standard base64 after `h1:`.
 *
 * The zip was already read and checked by the module-zip reader (paths, entry count, types); this pass
 * inflates every entry once more, bounded: by each entry's declared size and by `maxBytes` in all.
 */
import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { promisify } from 'node:util';
import { inflateRaw } from 'node:zlib';

const inflateRawAsync = promisify(inflateRaw);

export class DirHashError extends Error {}

/** The h1 hash of files given by name and bytes. */
export function hash1(files: Iterable<{ name: string; data: Uint8Array }>): string {
  const lines: HashLine[] = [];
  for (const f of files) lines.push(hashLine(f.name, f.data));
  return hashLines(lines);
}

interface HashLine {
  name: Buffer;
  line: string;
}

/** One file's line of the hash: its bytes' SHA-256 (the bytes need not be kept after). */
function hashLine(name: string, data: Uint8Array): HashLine {
  if (name.includes('\n')) throw new DirHashError(`a file name holds a newline: ${JSON.stringify(name)}`);
  return { name: Buffer.from(name, 'utf8'), line: `${createHash('sha256').update(data).digest('hex')}  ${name}\n` };
}

function hashLines(lines: HashLine[]): string {
  lines.sort((a, b) => Buffer.compare(a.name, b.name));
  const h = createHash('sha256');
  for (const l of lines) h.update(l.line, 'utf8');
  return `h1:${h.digest('base64')}`;
}

/** The h1 hash of a module zip on disk; throws DirHashError on a zip it cannot hash within `maxBytes`. */
export async function zipHash1(file: string, maxBytes: number): Promise<string> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const at = async (pos: number, n: number): Promise<Buffer> => {
      const b = Buffer.alloc(n);
      const { bytesRead } = await fh.read(b, 0, n, pos);
      if (bytesRead < n) throw new DirHashError('the zip is truncated');
      return b;
    };
    const tailLen = Math.min(size, 22 + 0xffff);
    const tail = await at(size - tailLen, tailLen);
    let e = -1;
    for (let i = tail.length - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === 0x06054b50) {
        e = i;
        break;
      }
    if (e < 0) throw new DirHashError('the zip has no end of central directory');
    const count = tail.readUInt16LE(e + 10);
    const cdSize = tail.readUInt32LE(e + 12);
    const cdOffset = tail.readUInt32LE(e + 16);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff)
      throw new DirHashError('the zip is a zip64 archive, which is not hashed');
    if (cdOffset + cdSize > size) throw new DirHashError('the zip has a central directory past its end');
    const cd = await at(cdOffset, cdSize);
    const lines: HashLine[] = [];
    let total = 0;
    let off = 0;
    for (let i = 0; i < count; i++) {
      if (i % 256 === 255) await yieldToLoop();
      if (off + 46 > cd.length || cd.readUInt32LE(off) !== 0x02014b50)
        throw new DirHashError('damaged central directory');
      const flags = cd.readUInt16LE(off + 8);
      const method = cd.readUInt16LE(off + 10);
      const csize = cd.readUInt32LE(off + 20);
      const usize = cd.readUInt32LE(off + 24);
      const nameLen = cd.readUInt16LE(off + 28);
      const extraLen = cd.readUInt16LE(off + 30);
      const commentLen = cd.readUInt16LE(off + 32);
      const offset = cd.readUInt32LE(off + 42);
      const name = cd.subarray(off + 46, off + 46 + nameLen).toString((flags & 0x800) !== 0 ? 'utf8' : 'latin1');
      off += 46 + nameLen + extraLen + commentLen;
      total += usize;
      if (total > maxBytes) throw new DirHashError(`the zip inflates past ${maxBytes} bytes`);
      const local = await at(offset, 30);
      if (local.readUInt32LE(0) !== 0x04034b50) throw new DirHashError(`no local header for ${name}`);
      const packed = await at(offset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28), csize);
      let data: Buffer;
      if (method === 0) data = packed;
      else if (method === 8) {
        try {
          data = await inflateRawAsync(packed, { maxOutputLength: Math.max(1, usize) });
        } catch (err) {
          throw new DirHashError(`${name} cannot be inflated: ${(err as Error).message}`);
        }
      } else throw new DirHashError(`${name} uses compression method ${method}`);
      if (data.length !== usize) throw new DirHashError(`${name} does not inflate to its declared size`);
      // Hashed at once: one file's bytes are held at a time, however large the module.
      lines.push(hashLine(name, data));
    }
    return hashLines(lines);
  } finally {
    await fh.close();
  }
}
