/**
 * Byte-level wrappers users' files arrive in, undone before detection so every importer sees plain
 * UTF-8: UTF-16 text (what Windows PowerShell's `>` writes: a BOM and two bytes per character) and
 * gzip'd text reports (`wrk … | gzip`, CI artifacts). A gzip'd pprof profile stays with the pprof
 * importer, which inflates it itself under its own limits.
 */
import { constants, gunzipSync } from 'node:zlib';
import { IngestError } from './errors.ts';
import { isGzip, unwrap } from './pprof/container.ts';

export type TextEncoding = 'utf-16le' | 'utf-16be';

/**
 * The UTF-16 byte order of a head, from its byte-order mark, or — without one — from the zero
 * bytes of ASCII text (every other byte 0 over the first characters). Null for anything else.
 */
export function utf16Order(head: Uint8Array): TextEncoding | null {
  if (head.length >= 2 && head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head.length >= 2 && head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  const n = Math.min(head.length, 512) & ~1;
  if (n < 16) return null;
  // ASCII characters are one zero byte and one printable byte; other characters (█, ✓, ‾ in k6's
  // output) are two non-zero bytes, so a few pairs of those are allowed
  let le = 0;
  let be = 0;
  for (let i = 0; i < n; i += 2) {
    const a = head[i]!;
    const b = head[i + 1]!;
    const printable = (c: number) => (c >= 0x20 && c < 0x7f) || c === 9 || c === 10 || c === 13;
    if (b === 0 && printable(a)) le++;
    else if (a === 0 && printable(b)) be++;
  }
  const pairs = n / 2;
  if (le >= pairs * 0.8 && be <= pairs * 0.02) return 'utf-16le';
  if (be >= pairs * 0.8 && le <= pairs * 0.02) return 'utf-16be';
  return null;
}

/** UTF-16 bytes as UTF-8 (the BOM dropped). A lone byte at the end (a cut file) is dropped. */
export function utf16ToUtf8(bytes: Uint8Array, order: TextEncoding): Buffer {
  const even = bytes.length & ~1;
  let view = Buffer.from(bytes.buffer, bytes.byteOffset, even);
  if (order === 'utf-16be') {
    view = Buffer.from(view); // a copy: swap16 works in place
    view.swap16();
  }
  let text = view.toString('utf16le');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return Buffer.from(text, 'utf8');
}

/** True when bytes look like text (UTF-8 or ASCII), not a binary format such as protobuf. */
export function looksLikeText(head: Uint8Array): boolean {
  const n = Math.min(head.length, 4096);
  if (n === 0) return false;
  let bad = 0;
  for (let i = 0; i < n; i++) {
    const c = head[i]!;
    if (c === 0) return false;
    if (c < 0x20 && c !== 9 && c !== 10 && c !== 13 && c !== 0x1b) bad++;
  }
  return bad <= n * 0.01;
}

/**
 * The first bytes inside a gzip file, inflated from its head only (a partial stream is fine:
 * zlib's sync flush hands out what it could decode). Null when the head does not inflate.
 */
export function gunzipHead(head: Uint8Array): Buffer | null {
  if (!isGzip(head)) return null;
  try {
    // 2 KiB of deflate inflates to 2.2 MB at most (deflate's ~1032:1 bound): memory stays small
    return gunzipSync(head.subarray(0, 2048), { finishFlush: constants.Z_SYNC_FLUSH });
  } catch {
    return null;
  }
}

/** A whole gzip'd text file inflated under the same cap as a profile (gzip bombs stop there). */
export function gunzipText(bytes: Uint8Array, maxInputBytes: number, maxDecompressedBytes: number): Buffer {
  const out = unwrap(bytes, { maxInputBytes, maxDecompressedBytes });
  if (out.length === 0) throw new IngestError('empty', 'the gzip stream holds no data');
  return Buffer.from(out.buffer, out.byteOffset, out.length);
}
