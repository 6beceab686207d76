import { openSync, readSync, closeSync, readFileSync, statSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { IngestError } from './errors.ts';
import { gunzipHead, gunzipText, looksLikeText, utf16Order, utf16ToUtf8 } from './encoding.ts';
import { type ByteSource, bufferSource, fileSource, readAllBytes } from './source.ts';
import { HEAD_BYTES } from './loadtest/types.ts';
import type { Parsed } from './parsed.ts';
import { loadTestImporters, wholeFileImporters } from './importers.ts';
import { readRuns } from './loadtest/runs.ts';
import * as pprof from './pprof/index.ts';
import * as otlp from './otlp/index.ts';
import { markTraceDerived } from './pprof/trace-derived.ts';
import type { PprofLimits } from './pprof/index.ts';
import * as trace from './trace/index.ts';

export type { Parsed, WholeFileImporter } from './parsed.ts';

/**
 * An input file: its name (a hint only) and one of: its bytes, a path, or a function that opens it
 * as a stream (e.g. a stored blob), so detection reads only the head and streaming importers never
 * hold the whole file.
 */
export interface InputFile {
  name: string;
  bytes?: Buffer;
  path?: string;
  open?: () => ByteSource;
}

export interface IngestLimits extends PprofLimits {
  /** Bounds of a Go execution trace (defaults: `trace.defaultTraceLimits()`, from TRACE_* settings). */
  trace?: Partial<trace.TraceLimits>;
}

interface Candidate {
  confidence: number;
  parse: () => Promise<Parsed>;
}

/** Largest text/JSON file a whole-file importer is handed (they have their own finer limits). */
const MAX_WHOLE_FILE_BYTES = 256 * 1024 * 1024;

async function readHead(f: InputFile): Promise<Buffer> {
  if (f.bytes) return f.bytes.subarray(0, HEAD_BYTES);
  if (f.open) {
    const parts: Buffer[] = [];
    let n = 0;
    const it = f.open()[Symbol.asyncIterator]();
    try {
      while (n < HEAD_BYTES) {
        const r = await it.next();
        if (r.done) break;
        const c = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
        parts.push(c);
        n += c.length;
      }
    } finally {
      await it.return?.();
    }
    return Buffer.concat(parts, n).subarray(0, HEAD_BYTES);
  }
  return readFileHead(f.path!);
}

/** The first HEAD_BYTES of a file on disk: what a detector sees. */
export function readFileHead(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

function source(f: InputFile): ByteSource {
  return f.bytes ? bufferSource(f.bytes) : f.open ? f.open() : fileSource(f.path!);
}

async function allBytes(f: InputFile, limit: number): Promise<Buffer> {
  if (f.bytes) return f.bytes;
  if (f.open) return readAllBytes(f.open(), limit);
  return readFileSync(f.path!);
}

/**
 * Detects a file's format by content (the name is only a hint) and parses it. Throws IngestError
 * for anything it cannot read, with a message that makes sense after "FILE: ".
 */
export async function ingest(f: InputFile, limits: Partial<IngestLimits> = {}): Promise<Parsed> {
  const head = await readHead(f);
  if (head.length === 0) throw new IngestError('empty', 'empty file');
  // UTF-16 text (PowerShell's `>`) and gzip'd text reports: undone once, then detected as usual
  const order = utf16Order(head);
  if (order) {
    const text = utf16ToUtf8(await allBytes(f, MAX_WHOLE_FILE_BYTES), order);
    return ingest({ name: f.name, bytes: text }, limits);
  }
  const inner = gunzipHead(head);
  // A Go execution trace, plain or gzip'd: streamed, never held whole.
  if (trace.detect(head) > 0 || (inner && trace.detect(inner) > 0)) return ingestTrace(f, !trace.detect(head), limits);
  if (inner && inner.length > 0 && (looksLikeText(inner) || utf16Order(inner))) {
    const maxIn = limits.maxInputBytes ?? pprof.defaultPprofLimits.maxInputBytes;
    const maxOut = limits.maxDecompressedBytes ?? pprof.defaultPprofLimits.maxDecompressedBytes;
    const text = gunzipText(await allBytes(f, maxIn), maxIn, maxOut);
    return ingest({ name: f.name.replace(/\.gz$/i, ''), bytes: text }, limits);
  }
  const candidates: Candidate[] = [];
  const offer = (confidence: number, parse: () => Promise<Parsed>) => {
    if (confidence > 0) candidates.push({ confidence, parse });
  };
  // An OTLP profiles payload, plain or gzip'd: told from pprof (also protobuf) by its first fields.
  offer(otlp.detect(inner ?? head), async () => {
    const maxIn = limits.maxInputBytes ?? pprof.defaultPprofLimits.maxInputBytes;
    const profile = otlp.parseOtlp(await allBytes(f, maxIn), limits);
    return { kind: 'profile', format: profile.format, profile };
  });
  offer(pprof.detect(head, f.name), async () => {
    const maxIn = limits.maxInputBytes ?? pprof.defaultPprofLimits.maxInputBytes;
    const profile = markTraceDerived(pprof.parsePprof(await allBytes(f, maxIn), limits), f.name);
    return { kind: 'profile', format: profile.format, profile };
  });
  for (const imp of loadTestImporters)
    offer(imp.detect(head, f.name), async () => {
      const runs = await readRuns(imp, () => source(f), f.name);
      return { kind: 'loadtest', format: runs[0]!.format, runs };
    });
  for (const imp of wholeFileImporters)
    offer(imp.detect(head, f.name), async () => imp.parse(await allBytes(f, MAX_WHOLE_FILE_BYTES), f.name));
  if (candidates.length === 0) {
    throw new IngestError(
      'unsupported',
      'unrecognized format: not a pprof profile, an execution trace or a known load-test, benchmark or trace output',
    );
  }
  candidates.sort((a, b) => b.confidence - a.confidence);
  try {
    return await candidates[0]!.parse();
  } catch (e) {
    if (e instanceof IngestError) throw e;
    throw new IngestError('malformed', `could not be parsed: ${(e as Error).message}`);
  }
}

/** The size of an input when known without reading it (bytes given, or a file on disk). */
function knownSize(f: InputFile): number | null {
  if (f.bytes) return f.bytes.length;
  if (f.path) return statSync(f.path).size;
  return null;
}

async function ingestTrace(f: InputFile, gzipped: boolean, limits: Partial<IngestLimits>): Promise<Parsed> {
  const l = { ...trace.defaultTraceLimits(), ...limits.trace };
  const size = knownSize(f);
  // A file that cannot fit is refused before a byte of it is read (a plain file's size is its data's).
  if (!gzipped && size !== null && size > l.maxBytes) {
    throw new IngestError(
      'too-large',
      `the trace is ${size} bytes, over the ${l.maxBytes}-byte limit (TRACE_MAX_BYTES); record a shorter one (/debug/pprof/trace?seconds=…)`,
    );
  }
  let src: ByteSource = source(f);
  if (gzipped) src = gunzipStream(src, limits.maxInputBytes ?? pprof.defaultPprofLimits.maxInputBytes);
  try {
    return { kind: 'trace', format: 'go-trace', trace: await trace.parseTrace(src, l) };
  } catch (e) {
    if (e instanceof IngestError) throw e;
    const code = (e as { code?: string }).code;
    if (gzipped && typeof code === 'string' && code.startsWith('Z_'))
      throw new IngestError('corrupt-gzip', `the gzip stream is damaged: ${(e as Error).message}`);
    throw new IngestError('malformed', `could not be parsed: ${(e as Error).message}`);
  }
}

/**
 * Inflates a gzip'd source as it is read, refusing more than `maxIn` compressed bytes. A reader that
 * stops early (a refused format, a bound) ends it at once: the inflater is destroyed, the pump feeding
 * it stops waiting for room (a destroyed stream never drains) and closes the source.
 */
async function* gunzipStream(src: ByteSource, maxIn: number): ByteSource {
  const z = createGunzip();
  let fed = 0;
  /** Resolves when the inflater has room again or is gone (whichever comes first). */
  const room = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        z.off('drain', done);
        z.off('close', done);
        resolve();
      };
      z.on('drain', done);
      z.on('close', done);
    });
  const pump = (async () => {
    try {
      for await (const c of src) {
        if (z.destroyed) return;
        fed += c.length;
        if (fed > maxIn) {
          z.destroy(new IngestError('too-large', `the compressed trace is larger than ${maxIn} bytes`));
          return;
        }
        if (!z.write(c)) await room();
        if (z.destroyed) return;
      }
      z.end();
    } catch (e) {
      z.destroy(e as Error);
    }
  })();
  try {
    for await (const c of z) yield c as Buffer;
  } finally {
    z.destroy();
    await pump;
  }
}
