/**
 * Reads a source archive (.tar.gz or .zip) into a source set, refusing anything unsafe before it is
 * kept: entries whose path is absolute or climbs out with `..`, symbolic and hard links, devices, an
 * entry declaring or inflating past the per-file bound, more entries or kept files than allowed, and
 * archives inflating past the total bound. A .tar.gz is read as a stream (each header is checked before
 * its data is inflated); a .zip's central directory is checked whole before any entry is inflated.
 * Every bound applies to every entry, kept or not, so no entry can make the reader inflate more than
 * the per-file bound.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { promisify } from 'node:util';
import { crc32, createGunzip, inflateRaw } from 'node:zlib';

const inflateRawAsync = promisify(inflateRaw);
import { checkSourcePath, isSourceFile, rootAtModule, type SourceLimits } from './source-set.ts';

export class SourceArchiveError extends Error {
  constructor(
    readonly archive: string,
    readonly entry: string | null,
    readonly problem: string,
    /** The refusal is about a bound (413) rather than a malformed or unsafe archive (400). */
    readonly tooLarge = false,
  ) {
    super(`source archive ${archive}${entry === null ? '' : `, entry ${JSON.stringify(entry)}`}: ${problem}`);
  }
}

export interface ReadArchive {
  modulePath: string;
  /** From the archive's `stagediff-source.json` (what `stagediff capture` writes), when it has one. */
  revision: string;
  dirty: boolean | null;
  files: Map<string, Buffer>;
  /** Entries read, kept or not. */
  entries: number;
}

const MiB = 1024 * 1024;
function bytes(n: number): string {
  return n >= MiB ? `${(n / MiB).toFixed(n % MiB === 0 ? 0 : 1)} MiB` : `${n} bytes`;
}

/** Which reader an archive needs, by its first bytes; null when it is neither. */
export function archiveFormat(head: Buffer): 'tar.gz' | 'zip' | null {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'tar.gz';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x04034b50) return 'zip';
  if (head.length >= 4 && head.readUInt32LE(0) === 0x06054b50) return 'zip'; // empty zip
  return null;
}

/** Reads the archive at `file` (`name` is how errors call it). Throws `SourceArchiveError`. */
export async function readSourceArchive(name: string, file: string, limits: SourceLimits): Promise<ReadArchive> {
  const fh = await open(file, 'r');
  let format: ReturnType<typeof archiveFormat>;
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await fh.read(head, 0, 4, 0);
    format = archiveFormat(head.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
  if (format === null) throw new SourceArchiveError(name, null, 'is neither a .tar.gz nor a .zip archive');
  const read = format === 'zip' ? await readZip(name, file, limits) : await readTarGz(name, file, limits);
  const rooted = rootAtModule(read.files);
  let meta: { module?: unknown; revision?: unknown; dirty?: unknown } = {};
  if (read.meta) {
    try {
      meta = JSON.parse(read.meta.toString('utf8')) as typeof meta;
    } catch {
      throw new SourceArchiveError(name, SOURCE_META, 'is not JSON');
    }
  }
  return {
    modulePath: rooted.modulePath || (typeof meta.module === 'string' ? meta.module : ''),
    revision: typeof meta.revision === 'string' ? meta.revision.slice(0, 200) : '',
    dirty: typeof meta.dirty === 'boolean' ? meta.dirty : null,
    files: rooted.files,
    entries: read.entries,
  };
}

/** The archive's description of its sources: module path, commit, dirty (`stagediff capture` writes it). */
export const SOURCE_META = 'stagediff-source.json';

interface RawRead {
  files: Map<string, Buffer>;
  meta: Buffer | null;
  entries: number;
}

/** Counts entries and kept bytes against the bounds, naming the entry that passes one. */
class Tally {
  entries = 0;
  total = 0;
  kept = 0;
  readonly files = new Map<string, Buffer>();
  meta: Buffer | null = null;
  constructor(
    private readonly name: string,
    private readonly limits: SourceLimits,
  ) {}

  /** One more entry: a file, a directory, a link, or a tar metadata header (pax, GNU long name). */
  entry(raw: string): void {
    this.entries++;
    if (this.entries > this.limits.maxSourceArchiveEntries)
      throw new SourceArchiveError(
        this.name,
        raw,
        `has more than ${this.limits.maxSourceArchiveEntries} entries, metadata headers counted (MAX_SOURCE_ARCHIVE_ENTRIES)`,
        true,
      );
  }

  /**
   * Bytes of the inflated tar stream read so far (headers and padding included): at most the source
   * bound plus 1 KiB (a header and its padding) for each entry the archive may have.
   */
  inflated(n: number): void {
    this.stream += n;
    const max = this.limits.maxSourceBytes + this.limits.maxSourceArchiveEntries * 1024;
    if (this.stream > max)
      throw new SourceArchiveError(
        this.name,
        null,
        `inflates past ${bytes(max)}, headers included (MAX_SOURCE_BYTES plus 1 KiB for each of MAX_SOURCE_ARCHIVE_ENTRIES)`,
        true,
      );
  }
  private stream = 0;

  /** An entry's declared (or inflated) size, before its data is inflated. */
  size(raw: string, n: number): void {
    if (n > this.limits.maxSourceFileBytes)
      throw new SourceArchiveError(
        this.name,
        raw,
        `is ${bytes(n)}, over the ${bytes(this.limits.maxSourceFileBytes)} one file may have (MAX_SOURCE_FILE_BYTES)`,
        true,
      );
    this.total += n;
    if (this.total > this.limits.maxSourceBytes)
      throw new SourceArchiveError(
        this.name,
        raw,
        `brings the archive past the ${bytes(this.limits.maxSourceBytes)} a source set may hold (MAX_SOURCE_BYTES)`,
        true,
      );
  }

  path(raw: string): string {
    const checked = checkSourcePath(raw);
    if ('problem' in checked) throw new SourceArchiveError(this.name, raw, checked.problem);
    return checked.path;
  }

  /** A file's path: a file cannot be the archive's root. */
  file(raw: string, path: string): void {
    if (path === '') throw new SourceArchiveError(this.name, raw, 'is a file with an empty path');
  }

  wanted(path: string): boolean {
    return path === SOURCE_META || isSourceFile(path);
  }

  keep(raw: string, path: string, data: Buffer): void {
    if (path === SOURCE_META) {
      this.meta = data;
      return;
    }
    if (!isSourceFile(path)) return;
    if (this.files.has(path)) throw new SourceArchiveError(this.name, raw, 'appears twice in the archive');
    this.kept++;
    if (this.kept > this.limits.maxSourceFiles)
      throw new SourceArchiveError(
        this.name,
        raw,
        `is source file number ${this.kept}, over the ${this.limits.maxSourceFiles} a source set may hold (MAX_SOURCE_FILES)`,
        true,
      );
    this.files.set(path, data);
  }
}

// ---- .tar.gz ----

/** Pulls exact byte counts from a stream of chunks. */
class Pull {
  private chunks: Buffer[] = [];
  private have = 0;
  private done = false;
  constructor(private readonly it: AsyncIterator<Buffer>) {}

  /** Exactly `n` bytes, or fewer at the end of the stream. */
  async take(n: number): Promise<Buffer> {
    while (this.have < n && !this.done) {
      const r = await this.it.next();
      if (r.done) this.done = true;
      else {
        this.chunks.push(r.value);
        this.have += r.value.length;
      }
    }
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const out = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(out.length);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.have = rest.length;
    return out;
  }
}

function cString(b: Buffer): string {
  const end = b.indexOf(0);
  return b.subarray(0, end < 0 ? b.length : end).toString('utf8');
}

function tarNumber(b: Buffer): number {
  if ((b[0]! & 0x80) !== 0) {
    // base-256 (GNU): a big-endian number after the marker bit
    let n = b[0]! & 0x7f;
    for (let i = 1; i < b.length; i++) n = n * 256 + b[i]!;
    return n;
  }
  const s = cString(b).trim();
  return s === '' ? 0 : Number.parseInt(s, 8);
}

function parsePax(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let off = 0;
  while (off < data.length) {
    const sp = data.indexOf(0x20, off);
    if (sp < 0) break;
    const len = Number.parseInt(data.subarray(off, sp).toString('ascii'), 10);
    if (!Number.isSafeInteger(len) || len <= sp - off || off + len > data.length) break;
    const rec = data.subarray(sp + 1, off + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq > 0) out.set(rec.slice(0, eq), rec.slice(eq + 1));
    off += len;
  }
  return out;
}

async function readTarGz(name: string, file: string, limits: SourceLimits): Promise<RawRead> {
  return readTarGzStream(name, createReadStream(file), limits);
}

/** Reads a .tar.gz from a stream of its bytes; stops reading the moment an entry is refused. */
export async function readTarGzStream(
  name: string,
  src: AsyncIterable<Buffer> & NodeJS.ReadableStream,
  limits: SourceLimits,
): Promise<RawRead> {
  const gunzip = src.pipe(createGunzip());
  const pull = new Pull(gunzip[Symbol.asyncIterator]());
  const tally = new Tally(name, limits);
  let longName: string | null = null;
  let pax = new Map<string, string>();
  try {
    for (;;) {
      const header = await pull.take(512);
      if (header.length === 0) break; // no end blocks: tolerated, as tar does
      tally.inflated(header.length);
      if (header.length < 512) throw new SourceArchiveError(name, null, 'ends inside an entry header (truncated?)');
      if (header.every((b) => b === 0)) break;
      let sum = 0;
      for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
      if (tarNumber(header.subarray(148, 156)) !== sum)
        throw new SourceArchiveError(name, null, 'has an entry header with a wrong checksum (not a tar archive?)');
      const type = String.fromCharCode(header[156]!);
      const prefix = header.subarray(257, 263).toString('latin1').startsWith('ustar')
        ? cString(header.subarray(345, 500))
        : '';
      const plain = cString(header.subarray(0, 100));
      const raw = pax.get('path') ?? longName ?? (prefix ? `${prefix}/${plain}` : plain);
      const paxSize = pax.get('size');
      const size = paxSize !== undefined ? Number(paxSize) : tarNumber(header.subarray(124, 136));
      if (!Number.isSafeInteger(size) || size < 0) throw new SourceArchiveError(name, raw, 'declares an invalid size');
      const padded = Math.ceil(size / 512) * 512;
      if (type === 'x' || type === 'g' || type === 'L' || type === 'K') {
        // Metadata of the next entry (or of all: 'g', ignored); counted as an entry, bounded like a file.
        tally.entry(raw);
        tally.size(raw, size);
        tally.inflated(padded);
        const data = await pull.take(padded);
        if (data.length < padded) throw new SourceArchiveError(name, raw, 'is truncated');
        if (type === 'x') pax = parsePax(data.subarray(0, size));
        if (type === 'L') longName = cString(data.subarray(0, size));
        continue;
      }
      longName = null;
      pax = new Map();
      tally.entry(raw);
      const path = tally.path(raw);
      if (type === '1') throw new SourceArchiveError(name, raw, 'is a hard link (links are refused)');
      if (type === '2') throw new SourceArchiveError(name, raw, 'is a symbolic link (links are refused)');
      if (type === '5') continue;
      if (type !== '0' && type !== '\0' && type !== '7')
        throw new SourceArchiveError(name, raw, `is not a regular file (tar type ${JSON.stringify(type)})`);
      tally.file(raw, path);
      tally.size(raw, size);
      tally.inflated(padded);
      const data = await pull.take(padded);
      if (data.length < padded) throw new SourceArchiveError(name, raw, 'is truncated');
      tally.keep(raw, path, Buffer.from(data.subarray(0, size)));
    }
  } catch (e) {
    if (e instanceof SourceArchiveError) throw e;
    throw new SourceArchiveError(name, null, `cannot be read as .tar.gz: ${(e as Error).message}`);
  } finally {
    // Stopped early or not, both streams end now (pipe() leaves the source open when its target goes).
    gunzip.destroy();
    (src as { destroy?: () => void }).destroy?.();
  }
  return { files: tally.files, meta: tally.meta, entries: tally.entries };
}

// ---- .zip ----

const EOCD = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ZIP64_EOCD = 0x06064b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;

/**
 * Reads a module zip as the module proxy protocol serves it: every entry under `prefix`
 * (`module@version/`), refused otherwise, with the same checks as a source archive. Only the files
 * `only` selects (by their path inside the module) are bounded by size, inflated and kept, so the
 * toolchain's binaries or a module's test data never count against the source bounds; every entry is
 * still counted and its path and type checked. Paths come back without the prefix.
 */
export async function readModuleZip(
  name: string,
  file: string,
  limits: SourceLimits,
  prefix: string,
  only: (path: string) => boolean,
): Promise<{ files: Map<string, Buffer>; entries: number }> {
  const inside = (path: string) => (path.startsWith(prefix) ? path.slice(prefix.length) : null);
  const read = await readZip(name, file, limits, (path, raw) => {
    const rel = inside(path);
    if (rel === null && !prefix.startsWith(`${path}/`))
      throw new SourceArchiveError(name, raw, `is not under ${prefix} (every entry of a module zip is)`);
    return rel !== null && only(rel);
  });
  const files = new Map<string, Buffer>();
  for (const [p, b] of read.files) files.set(p.slice(prefix.length), b);
  return { files, entries: read.entries };
}

async function readZip(
  name: string,
  file: string,
  limits: SourceLimits,
  /** Which files to size, inflate and keep (default: all); may throw to refuse the archive. */
  only?: (path: string, raw: string) => boolean,
): Promise<RawRead> {
  const fh = await open(file, 'r');
  try {
    const { size: fileSize } = await fh.stat();
    const at = async (pos: number, n: number): Promise<Buffer> => {
      const b = Buffer.alloc(n);
      const { bytesRead } = await fh.read(b, 0, n, pos);
      if (bytesRead < n) throw new SourceArchiveError(name, null, 'is truncated (a record lies past its end)');
      return b;
    };
    const tailLen = Math.min(fileSize, 22 + 0xffff);
    const tail = await at(fileSize - tailLen, tailLen);
    let e = -1;
    for (let i = tail.length - 22; i >= 0; i--)
      if (tail.readUInt32LE(i) === EOCD) {
        e = i;
        break;
      }
    if (e < 0) throw new SourceArchiveError(name, null, 'has no end of central directory (not a zip, or truncated)');
    let count = tail.readUInt16LE(e + 10);
    let cdSize = tail.readUInt32LE(e + 12);
    let cdOffset = tail.readUInt32LE(e + 16);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      const locPos = fileSize - tailLen + e - 20;
      const loc = locPos >= 0 ? await at(locPos, 20) : null;
      if (!loc || loc.readUInt32LE(0) !== ZIP64_LOCATOR)
        throw new SourceArchiveError(name, null, 'has a zip64 end record that cannot be found');
      const z = await at(Number(loc.readBigUInt64LE(8)), 56);
      if (z.readUInt32LE(0) !== ZIP64_EOCD) throw new SourceArchiveError(name, null, 'has a damaged zip64 end record');
      count = Number(z.readBigUInt64LE(32));
      cdSize = Number(z.readBigUInt64LE(40));
      cdOffset = Number(z.readBigUInt64LE(48));
    }
    // The whole directory is judged before anything is inflated: the count first, so a 100,000-entry
    // archive is refused without reading its directory.
    if (count > limits.maxSourceArchiveEntries)
      throw new SourceArchiveError(
        name,
        null,
        `has ${count} entries, over the ${limits.maxSourceArchiveEntries} an archive may have (MAX_SOURCE_ARCHIVE_ENTRIES)`,
        true,
      );
    if (cdOffset + cdSize > fileSize) throw new SourceArchiveError(name, null, 'has a central directory past its end');
    const cd = await at(cdOffset, cdSize);
    const tally = new Tally(name, limits);
    const todo: {
      raw: string;
      path: string;
      method: number;
      crc: number;
      csize: number;
      usize: number;
      offset: number;
    }[] = [];
    let off = 0;
    for (let i = 0; i < count; i++) {
      // A directory of 10,000s of entries (a Go toolchain's) takes a while to judge: other work goes between.
      if (i % 512 === 511) await yieldToLoop();
      if (off + 46 > cd.length || cd.readUInt32LE(off) !== CENTRAL)
        throw new SourceArchiveError(name, null, `has a damaged central directory (record ${i + 1})`);
      const madeBy = cd.readUInt16LE(off + 4);
      const flags = cd.readUInt16LE(off + 8);
      const method = cd.readUInt16LE(off + 10);
      const crc = cd.readUInt32LE(off + 16);
      let csize = cd.readUInt32LE(off + 20);
      let usize = cd.readUInt32LE(off + 24);
      const nameLen = cd.readUInt16LE(off + 28);
      const extraLen = cd.readUInt16LE(off + 30);
      const commentLen = cd.readUInt16LE(off + 32);
      const external = cd.readUInt32LE(off + 38);
      let offset = cd.readUInt32LE(off + 42);
      const raw = cd.subarray(off + 46, off + 46 + nameLen).toString((flags & 0x800) !== 0 ? 'utf8' : 'latin1');
      const extra = cd.subarray(off + 46 + nameLen, off + 46 + nameLen + extraLen);
      off += 46 + nameLen + extraLen + commentLen;
      for (let x = 0; x + 4 <= extra.length; ) {
        const id = extra.readUInt16LE(x);
        const len = extra.readUInt16LE(x + 2);
        if (id === 0x0001) {
          let p = x + 4;
          const next = (): number => {
            if (p + 8 > x + 4 + len) throw new SourceArchiveError(name, raw, 'has a damaged zip64 field');
            const v = Number(extra.readBigUInt64LE(p));
            p += 8;
            return v;
          };
          if (usize === 0xffffffff) usize = next();
          if (csize === 0xffffffff) csize = next();
          if (offset === 0xffffffff) offset = next();
        }
        x += 4 + len;
      }
      tally.entry(raw);
      const path = tally.path(raw);
      const unixType = madeBy >> 8 === 3 ? (external >>> 16) & 0xf000 : 0;
      if (unixType === 0xa000) throw new SourceArchiveError(name, raw, 'is a symbolic link (links are refused)');
      if (raw.endsWith('/') || unixType === 0x4000) {
        only?.(path, raw);
        continue;
      }
      if (unixType !== 0 && unixType !== 0x8000) throw new SourceArchiveError(name, raw, 'is not a regular file');
      tally.file(raw, path);
      if ((flags & 1) !== 0) throw new SourceArchiveError(name, raw, 'is encrypted');
      if (only && !only(path, raw)) continue;
      tally.size(raw, usize);
      if (!tally.wanted(path)) continue;
      if (method !== 0 && method !== 8)
        throw new SourceArchiveError(name, raw, `uses compression method ${method} (only stored and deflate are read)`);
      // Deflate never grows data by more than a few bytes per 16 KiB block.
      if (csize > usize + 1024 + Math.ceil(usize / 100))
        throw new SourceArchiveError(name, raw, `declares ${csize} compressed bytes for ${usize} bytes of data`);
      todo.push({ raw, path, method, crc, csize, usize, offset });
    }
    for (const t of todo) {
      const local = await at(t.offset, 30);
      if (local.readUInt32LE(0) !== LOCAL)
        throw new SourceArchiveError(name, t.raw, 'has no local header where the directory says');
      const start = t.offset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      const packed = await at(start, t.csize);
      let data: Buffer;
      if (t.method === 0) data = packed;
      else {
        try {
          // Never more than the declared size: an entry that would inflate further is refused here.
          data = await inflateRawAsync(packed, { maxOutputLength: Math.max(1, t.usize) });
        } catch (err) {
          const tooBig = (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
          throw new SourceArchiveError(
            name,
            t.raw,
            tooBig ? `inflates past its declared ${bytes(t.usize)}` : `cannot be inflated: ${(err as Error).message}`,
            tooBig,
          );
        }
      }
      if (data.length !== t.usize)
        throw new SourceArchiveError(name, t.raw, `inflates to ${data.length} bytes, not the ${t.usize} it declares`);
      if (crc32(data) !== t.crc) throw new SourceArchiveError(name, t.raw, 'fails its CRC-32 check (damaged)');
      tally.keep(t.raw, t.path, data);
    }
    return { files: tally.files, meta: tally.meta, entries: tally.entries };
  } finally {
    await fh.close();
  }
}
