import { IngestError } from './errors.ts';
import type { Parsed } from './parsed.ts';

/**
 * Recognises the profile layouts that came before pprof's protobuf, so an upload of one is told
 * what it is and how to convert it instead of "unrecognized format":
 * - the binary CPU profile of gperftools and of Go before 1.9 (a header of 64- or 32-bit words
 *   0, 3, 0, period, 0), and of Java's profilez (the same header with a third word of 1);
 * - the text profiles: `heap profile: …` (Go `?debug=1` heap and allocs, gperftools' heap, growth and
 *   fragmentation profiles), `--- heapz 1 ---` (Java), `--- mutex:` / `--- contention:` (Go mutex,
 *   block), `--- contentionz 1 ---` (C++ and Java), `goroutine profile: total N`,
 *   `threadcreate profile: total N`, `--- threadz 1 ---` (thread stacks);
 * - a goroutine stack dump (`?debug=2`), which is no profile at all.
 * `go tool pprof -proto` reads all but the last (the layouts of pprof's own legacy parsers) and writes
 * the protobuf stagediff reads.
 */

export type LegacyKind =
  | 'cpu-binary'
  | 'java-cpu-binary'
  | 'heap-text'
  | 'contention-text'
  | 'count-text'
  | 'thread-text'
  | 'goroutine-dump';

function word(b: Uint8Array, i: number, size: 4 | 8): bigint | null {
  if (b.length < (i + 1) * size) return null;
  let v = 0n;
  for (let k = size - 1; k >= 0; k--) v = (v << 8n) | BigInt(b[i * size + k]!);
  return v;
}

/** Which legacy layout `head` starts with, or null. */
export function legacyKind(head: Uint8Array): LegacyKind | null {
  for (const size of [8, 4] as const) {
    // little-endian words 0, 3, 0 (C++, Go) or 1 (Java), period (> 0), 0: the legacy CPU profile header
    const lang = word(head, 2, size);
    if (
      word(head, 0, size) === 0n &&
      word(head, 1, size) === 3n &&
      (lang === 0n || lang === 1n) &&
      (word(head, 3, size) ?? 0n) > 0n &&
      word(head, 4, size) === 0n
    )
      return lang === 0n ? 'cpu-binary' : 'java-cpu-binary';
  }
  const t = Buffer.from(head.buffer, head.byteOffset, Math.min(head.length, 4096)).toString('utf8');
  if (/^heap profile: *\d+: *\d+ *\[ *\d+: *\d+ *\] *@/.test(t)) return 'heap-text';
  if (/^--- heapz 1 ---\s*\n/.test(t)) return 'heap-text';
  if (/^--- (mutex|contention):\s*\n/.test(t) || /^--- contentionz \d+ ---\s*\n/.test(t)) return 'contention-text';
  if (/^--- threadz \d+ ---\s*\n/.test(t)) return 'thread-text';
  if (/^(goroutine|threadcreate) profile: total \d+\s*\n/.test(t)) return 'count-text';
  if (/^goroutine \d+ \[[^\]]+\]:\s*\n/.test(t)) return 'goroutine-dump';
  return null;
}

export function detect(head: Buffer, _fileName?: string): number {
  return legacyKind(head) === null ? 0 : 0.8;
}

const HOW: Record<LegacyKind, string> = {
  'cpu-binary':
    'a legacy binary CPU profile (gperftools, or Go before 1.9): convert it with `go tool pprof -proto BINARY FILE > FILE.pb.gz` (BINARY: the profiled program, for symbols) and upload the .pb.gz',
  'java-cpu-binary':
    'a legacy binary Java CPU profile (profilez): convert it with `go tool pprof -proto FILE > FILE.pb.gz` and upload the .pb.gz',
  'heap-text':
    'a legacy text heap profile (Go ?debug=1, gperftools, or Java heapz): convert it with `go tool pprof -proto FILE > FILE.pb.gz`, or fetch /debug/pprof/heap without ?debug=1',
  'contention-text':
    'a legacy text contention profile (a Go ?debug=1 mutex/block profile, or C++/Java contentionz): convert it with `go tool pprof -proto FILE > FILE.pb.gz`, or fetch the profile without ?debug=1',
  'count-text':
    'a legacy text goroutine/threadcreate profile (Go ?debug=1): convert it with `go tool pprof -proto FILE > FILE.pb.gz`, or fetch the profile without ?debug=1',
  'thread-text':
    'a legacy text thread profile (threadz): convert it with `go tool pprof -proto FILE > FILE.pb.gz` (add the program binary before FILE for symbols) and upload the .pb.gz',
  'goroutine-dump':
    'a goroutine stack dump (Go ?debug=2), not a profile: fetch /debug/pprof/goroutine without ?debug to get a profile',
};

/** Always throws: the file is a known legacy layout, named with how to convert it. */
export function refuse(bytes: Buffer, _fileName?: string): Parsed {
  const kind = legacyKind(bytes);
  throw new IngestError('unsupported', kind ? HOW[kind] : 'unrecognized legacy profile');
}
