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
 * Yields the lines of a source (without the line terminator, CRLF or LF), decoding UTF-8 chunk by
 * chunk. Memory is bounded by the longest line, not the file.
 */
export async function* lines(src: ByteSource, maxLineBytes = 16 * 1024 * 1024): AsyncGenerator<string> {
  for await (const batch of lineBatches(src, maxLineBytes)) yield* batch;
}

/**
 * The same lines as `lines()`, handed out as one array per input chunk. For per-request logs of
 * millions of rows: one async step per chunk instead of one per line (an async generator step costs
 * about a microsecond, which alone would cap a parser below a million rows per second).
 */
export async function* lineBatches(src: ByteSource, maxLineBytes = 16 * 1024 * 1024): AsyncGenerator<string[]> {
  const decoder = new TextDecoder('utf-8');
  let carry = '';
  for await (const chunk of src) {
    const text = carry + decoder.decode(chunk, { stream: true });
    const batch: string[] = [];
    let start = 0;
    for (;;) {
      const nl = text.indexOf('\n', start);
      if (nl < 0) break;
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      batch.push(text.slice(start, end));
      start = nl + 1;
    }
    carry = text.slice(start);
    if (batch.length > 0) yield batch;
    if (carry.length > maxLineBytes) throw new IngestError('too-large', `a line is longer than ${maxLineBytes} bytes`);
  }
  carry += decoder.decode();
  if (carry.length > 0) yield [carry.endsWith('\r') ? carry.slice(0, -1) : carry];
}
