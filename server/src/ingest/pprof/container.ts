import { constants, createGunzip, gunzipSync } from 'node:zlib';
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
    throw new IngestError(
      'too-large',
      `file is ${bytes.length} bytes, over the ${limits.maxInputBytes}-byte upload limit`,
    );
  }
  if (!isGzip(bytes)) return bytes;
  const out = inflate(bytes, limits.maxDecompressedBytes);
  if (out.length === 0) throw new IngestError('empty', 'empty profile: the gzip stream holds no data');
  return out;
}

const tooLarge = (cap: number) => new IngestError('too-large', `decompressed data exceeds the ${cap}-byte limit`);

/** Deflate cannot expand more than about 1032:1; a gzip trailer claiming more is not to be trusted. */
const MAX_DEFLATE_RATIO = 1100;

/**
 * Inflates a gzip file (one or more members) under `cap` bytes of output.
 *
 * The gzip trailer's ISIZE (the last member's size mod 2^32) is only a hint, as a file may lie: when
 * it is plausible and under the cap, the output buffer is allocated once at that size, so a profile is
 * inflated with no growth and no final concatenation (node's gunzipSync holds the chunks and their
 * concatenation at once: twice the output). When the hint claims more than the cap, the stream is
 * first inflated into a small scratch buffer and only counted, so a bomb is refused without ever
 * holding the cap in memory; a lying hint just costs a second inflate.
 */
function inflate(input: Uint8Array, cap: number): Buffer {
  const n = input.length;
  const hint =
    n >= 18 ? (input[n - 4]! | (input[n - 3]! << 8) | (input[n - 2]! << 16) | (input[n - 1]! << 24)) >>> 0 : 0;
  const plausible = hint > 0 && hint <= n * MAX_DEFLATE_RATIO + 1024;
  if (plausible && hint > cap) {
    const size = inflateRaw(input, cap, 'count', 0);
    if (size === null) return gunzipFallback(input, cap);
    return inflateRaw(input, cap, 'keep', size + 1) ?? gunzipFallback(input, cap);
  }
  const initial = plausible ? hint + 1 : Math.min(cap + 1, Math.max(64 * 1024, n * 4));
  return inflateRaw(input, cap, 'keep', initial) ?? gunzipFallback(input, cap);
}

/** The synchronous zlib handle behind a Gunzip stream (what node's own gunzipSync drives). */
interface ZlibHandle {
  writeSync(
    flush: number,
    input: Uint8Array,
    inOff: number,
    inLen: number,
    out: Uint8Array,
    outOff: number,
    outLen: number,
  ): void;
  onerror: (message: string, errno: number, code?: string) => void;
  close(): void;
}

/**
 * Drives zlib's synchronous handle directly, writing into buffers we own. In 'count' mode the output
 * is discarded and its size returned; in 'keep' mode the output is returned, in a buffer that starts
 * at `initial` bytes and doubles (up to the cap) if the stream is longer. Returns null when this
 * node's zlib does not expose the handle, so the caller falls back to gunzipSync.
 */
function inflateRaw(input: Uint8Array, cap: number, mode: 'count', initial: number): number | null;
function inflateRaw(input: Uint8Array, cap: number, mode: 'keep', initial: number): Buffer | null;
function inflateRaw(input: Uint8Array, cap: number, mode: 'count' | 'keep', initial: number): Buffer | number | null {
  const engine = createGunzip() as unknown as { _handle?: ZlibHandle; _writeState?: Uint32Array; close(): void };
  const handle = engine._handle;
  const state = engine._writeState;
  if (!handle || typeof handle.writeSync !== 'function' || !(state instanceof Uint32Array)) {
    engine.close();
    return null;
  }
  let failure: { message: string; code?: string } | null = null;
  handle.onerror = (message, _errno, code) => {
    failure = { message, code };
  };
  try {
    let out = Buffer.allocUnsafe(mode === 'count' ? 1 << 20 : Math.min(initial, cap + 1));
    let outOff = 0;
    let counted = 0;
    let inOff = 0;
    let inLen = input.length;
    for (;;) {
      const room = out.length - outOff;
      handle.writeSync(constants.Z_FINISH, input, inOff, inLen, out, outOff, room);
      if (failure) throw corrupt(failure);
      const roomAfter = state[0]!;
      const inAfter = state[1]!;
      inOff += inLen - inAfter;
      inLen = inAfter;
      outOff += room - roomAfter;
      if (counted + outOff > cap) throw tooLarge(cap);
      // zlib stops early only when it ran out of output space; space left over means it is done.
      if (roomAfter !== 0) break;
      if (mode === 'count') {
        counted += outOff;
        outOff = 0;
      } else {
        const bigger = Buffer.allocUnsafe(Math.min(out.length * 2, cap + 1));
        out.copy(bigger, 0, 0, outOff);
        out = bigger;
      }
    }
    return mode === 'count' ? counted + outOff : out.subarray(0, outOff);
  } finally {
    engine.close();
  }
}

function corrupt(f: { message: string; code?: string }): IngestError {
  const why = f.code === 'Z_BUF_ERROR' ? 'unexpected end of file (truncated)' : f.message;
  return new IngestError('corrupt-gzip', `corrupt gzip data: ${why}`);
}

function gunzipFallback(input: Uint8Array, cap: number): Buffer {
  try {
    return gunzipSync(input, { maxOutputLength: cap });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) throw tooLarge(cap);
    throw corrupt({ message: (e as Error).message, code });
  }
}
