import { gunzipSync } from 'node:zlib';
import { IngestError } from '../errors.ts';

export interface ContainerLimits {
  /** Largest file accepted as uploaded (MAX_UPLOAD_BYTES). */
  maxInputBytes: number;
  /** Largest protobuf accepted once inflated (MAX_DECOMPRESSED_BYTES). */
  maxDecompressedBytes: number;
}

export const defaultContainerLimits: ContainerLimits = {
  maxInputBytes: 64 * 1024 * 1024,
  maxDecompressedBytes: 512 * 1024 * 1024,
};

export function isGzip(head: Uint8Array): boolean {
  return head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;
}

/**
 * Returns the raw protobuf inside a pprof file: gzip is recognised by its magic bytes (never by
 * file name) and inflated under a hard output cap, so a gzip bomb stops at the cap with bounded
 * memory instead of inflating gigabytes.
 */
export function unwrap(bytes: Uint8Array, limits: ContainerLimits = defaultContainerLimits): Uint8Array {
  if (bytes.length === 0) throw new IngestError('empty', 'empty file');
  if (bytes.length > limits.maxInputBytes) {
    throw new IngestError('too-large', `file is ${bytes.length} bytes, over the ${limits.maxInputBytes}-byte upload limit`);
  }
  if (!isGzip(bytes)) return bytes;
  let out: Buffer;
  try {
    out = gunzipSync(bytes, { maxOutputLength: limits.maxDecompressedBytes });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new IngestError('too-large', `decompressed data exceeds the ${limits.maxDecompressedBytes}-byte limit`);
    }
    const why = code === 'Z_BUF_ERROR' ? 'unexpected end of file (truncated)' : (e as Error).message;
    throw new IngestError('corrupt-gzip', `corrupt gzip data: ${why}`);
  }
  if (out.length === 0) throw new IngestError('empty', 'empty profile: the gzip stream holds no data');
  return out;
}
