/**
 * How a source set's bytes are stored: one gzip-compressed blob holding a first line naming the
 * format, a JSON line listing the files (path and size, sorted by path) and then their bytes one after
 * the other, exactly as read. Metadata (module path, commit, dirty) lives in the store's row.
 */
import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';

// On libuv's thread pool: a 32 MiB set never holds the event loop.
const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);
import type { SourceFileEntry } from '../store/types.ts';

const MAGIC = 'stagediff-sources 1\n';

export async function encodeBundle(files: Map<string, Buffer>): Promise<{ bytes: Buffer; entries: SourceFileEntry[] }> {
  const paths = [...files.keys()].sort();
  const entries = paths.map((path) => ({ path, size: files.get(path)!.length }));
  const head = Buffer.from(`${MAGIC}${JSON.stringify(entries)}\n`, 'utf8');
  return { bytes: await gzipAsync(Buffer.concat([head, ...paths.map((p) => files.get(p)!)]), { level: 6 }), entries };
}

/** Decodes a bundle; `maxBytes` bounds what it may inflate to. Throws on a damaged bundle. */
export async function decodeBundle(blob: Buffer, maxBytes: number): Promise<Map<string, Buffer>> {
  const raw = await gunzipAsync(blob, { maxOutputLength: maxBytes });
  if (!raw.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC))) throw new Error('not a source bundle');
  const nl = raw.indexOf(0x0a, MAGIC.length);
  const entries = JSON.parse(raw.subarray(MAGIC.length, nl).toString('utf8')) as SourceFileEntry[];
  const files = new Map<string, Buffer>();
  let off = nl + 1;
  for (const e of entries) {
    if (off + e.size > raw.length) throw new Error('source bundle is truncated');
    files.set(e.path, raw.subarray(off, off + e.size));
    off += e.size;
  }
  return files;
}
