import { createReadStream } from 'node:fs';
import { IngestError } from './errors.ts';

/**
 * The bytes of one input file, as a stream of chunks, so that per-request logs of millions of rows
 * are parsed without holding the whole file. Small text formats read it whole with `readAllBytes`.
 */
export type ByteSource = AsyncIterable<Buffer | Uint8Array>;

export function fileSource(path: string): ByteSource {
  return createReadStream(path, { highWaterMark: 1 << 20 });
}

export async function* bufferSource(buf: Uint8Array): ByteSource {
  yield buf;
}

/** Reads a whole source, refusing beyond `limit` bytes. */
export async function readAllBytes(src: ByteSource, limit = 256 * 1024 * 1024): Promise<Buffer> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of src) {
    n += c.length;
    if (n > limit) throw new IngestError('too-large', `input is larger than ${limit} bytes`);
    parts.push(Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.length));
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, n);
}

/**
 * One batch of lines found in the raw bytes of a source, without decoding them: line i of the
 * batch is `buf[start[i], end[i])`, its terminator (LF or CRLF) excluded, and it is line number
 * `firstLine + i` of the input (1-based). A batch is reused for the next one: read it before
 * asking for the next batch, and copy what must outlive it.
 */
export interface LineBatch {
  buf: Buffer;
  start: Int32Array;
  end: Int32Array;
  count: number;
  firstLine: number;
}

const BOM0 = 0xef;
const BOM1 = 0xbb;
const BOM2 = 0xbf;

function asBuffer(c: Buffer | Uint8Array): Buffer {
  return Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.length);
}

/**
 * The lines of a source as byte spans, one batch per input chunk (plus a one-line batch for a line
 * that spans chunks). Line breaks are found on the raw bytes (a LF byte never occurs inside a
 * multi-byte UTF-8 character, so a character cut by a chunk boundary is simply carried with the
 * rest of its line). Nothing is decoded: a parser decodes only the bytes it needs, so a
 * million-row log costs no string per line and one async step per ~1 MiB chunk.
 *
 * The lines are exactly those of `lines()`: a CR before a LF is dropped, a last line without a
 * terminator is kept (and a trailing CR dropped), a UTF-8 byte-order mark at the very start is
 * skipped (as TextDecoder does), and a line longer than `maxLineBytes` bytes is refused with a
 * `too-large` error. Memory is one chunk plus the longest line, whatever the file size.
 */
export async function* lineSpans(src: ByteSource, maxLineBytes = 16 * 1024 * 1024): AsyncGenerator<LineBatch> {
  let cap = 1024;
  const batch: LineBatch = {
    buf: Buffer.alloc(0),
    start: new Int32Array(cap),
    end: new Int32Array(cap),
    count: 0,
    firstLine: 1,
  };
  let lineNo = 0; // lines handed out so far
  let carry: Buffer[] = []; // copies of the pieces of an unfinished line
  let carryLen = 0;
  const tooLong = (): IngestError =>
    new IngestError('too-large', `a line is longer than ${maxLineBytes} bytes`, lineNo + 1);
  const one = (buf: Buffer, s: number, e: number): LineBatch => {
    if (e > s && buf[e - 1] === 13) e--;
    if (lineNo === 0 && e - s >= 3 && buf[s] === BOM0 && buf[s + 1] === BOM1 && buf[s + 2] === BOM2) s += 3;
    if (e - s > maxLineBytes) throw tooLong();
    batch.buf = buf;
    batch.start[0] = s;
    batch.end[0] = e;
    batch.count = 1;
    batch.firstLine = ++lineNo;
    return batch;
  };
  for await (const c of src) {
    const chunk = asBuffer(c);
    const len = chunk.length;
    if (len === 0) continue;
    let pos = 0;
    if (carryLen > 0) {
      const nl = chunk.indexOf(10);
      if (nl < 0) {
        carryLen += len;
        if (carryLen > maxLineBytes + 1) throw tooLong(); // + 1: the CR of a CRLF may follow
        carry.push(Buffer.from(chunk));
        continue;
      }
      carry.push(chunk.subarray(0, nl));
      const joined = Buffer.concat(carry, carryLen + nl);
      carry = [];
      carryLen = 0;
      yield one(joined, 0, joined.length);
      pos = nl + 1;
    }
    let n = 0;
    const first = lineNo + 1;
    let start = batch.start;
    let end = batch.end;
    for (;;) {
      const nl = chunk.indexOf(10, pos);
      if (nl < 0) break;
      let s = pos;
      let e = nl;
      if (e > s && chunk[e - 1] === 13) e--;
      if (first === 1 && n === 0 && e - s >= 3 && chunk[s] === BOM0 && chunk[s + 1] === BOM1 && chunk[s + 2] === BOM2)
        s += 3;
      if (e - s > maxLineBytes) {
        lineNo = first - 1 + n;
        throw tooLong();
      }
      if (n === cap) {
        cap *= 2;
        const ns = new Int32Array(cap);
        ns.set(start);
        const ne = new Int32Array(cap);
        ne.set(end);
        batch.start = start = ns;
        batch.end = end = ne;
      }
      start[n] = s;
      end[n] = e;
      n++;
      pos = nl + 1;
    }
    if (n > 0) {
      batch.buf = chunk;
      batch.count = n;
      batch.firstLine = first;
      lineNo += n;
      yield batch;
    }
    if (pos < len) {
      carryLen = len - pos;
      if (carryLen > maxLineBytes + 1) throw tooLong();
      // a copy: the source may reuse its chunk buffer once we ask for the next one
      carry.push(Buffer.from(chunk.subarray(pos)));
    }
  }
  if (carryLen > 0) {
    const last = carry.length === 1 ? carry[0]! : Buffer.concat(carry, carryLen);
    // a file holding only a byte-order mark has no line (TextDecoder drops the mark, leaving nothing)
    const onlyBom = lineNo === 0 && last.length === 3 && last[0] === BOM0 && last[1] === BOM1 && last[2] === BOM2;
    if (!onlyBom) yield one(last, 0, last.length);
  }
}

/**
 * Yields the lines of a source (without the line terminator, CRLF or LF) as UTF-8 strings.
 * Memory is bounded by the longest line, not the file. Per-request log parsers should prefer
 * `lineSpans()`, which decodes nothing.
 */
export async function* lines(src: ByteSource, maxLineBytes = 16 * 1024 * 1024): AsyncGenerator<string> {
  for await (const batch of lineBatches(src, maxLineBytes)) yield* batch;
}

/**
 * The same lines as `lines()`, handed out as one array of strings per batch of `lineSpans()`:
 * one async step per chunk instead of one per line. Each batch is decoded with one UTF-8 decode of
 * its bytes and split with one native split (cheaper than a decode per line).
 */
export async function* lineBatches(src: ByteSource, maxLineBytes = 16 * 1024 * 1024): AsyncGenerator<string[]> {
  for await (const b of lineSpans(src, maxLineBytes)) {
    const n = b.count;
    if (n === 1) {
      yield [b.buf.toString('utf8', b.start[0], b.end[0])];
      continue;
    }
    // Between the first line's start and the last line's end lie the n lines and their
    // terminators only; split on LF, then drop the CR of each CRLF (the last line's is excluded).
    const parts = b.buf.toString('utf8', b.start[0], b.end[n - 1]).split('\n');
    for (let i = 0; i < n - 1; i++) {
      const p = parts[i]!;
      if (p.charCodeAt(p.length - 1) === 13 && b.end[i]! < b.start[i + 1]! - 1) parts[i] = p.slice(0, -1);
    }
    yield parts;
  }
}
