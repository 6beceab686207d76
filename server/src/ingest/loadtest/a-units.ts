/**
 * Unit helpers shared by the group-A load-test importers (wrk, wrk2, hey, ab, bombardier, autocannon).
 * Text reports print figures with a unit suffix chosen per value ("2.89ms", "1.21s", "2.87k",
 * "89.67MB"); these functions turn such tokens back into plain numbers in our units
 * (milliseconds, counts, bytes). They return null when a token is not a finite number, so callers
 * decide whether that is an error (it is, for a figure the report must have) or a placeholder
 * (wrk2 prints "-nan" for a rate it could not compute).
 */
import { emptyLatency, type LatencyMs, type LoadTestMeta, type LoadTestSummary } from '../../model/loadtest.ts';
import type { ByteSource } from '../source.ts';
import { readAllBytes } from '../source.ts';
import { IngestError } from '../errors.ts';

const TIME_TO_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  'µs': 1e-3,
  'μs': 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** A plain decimal number token ("123", "4.5", "1.2e+06"); null for "-nan", "inf", "" or words. */
export function parseNumber(token: string): number | null {
  const t = token.trim().replace(/,/g, '');
  if (!NUMBER.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/** "676.00us", "2.89ms", "1.21s", "2.00m" (wrk, wrk2, bombardier) → milliseconds. */
export function parseDurationMs(token: string): number | null {
  const m = /^([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*(ns|us|µs|μs|ms|s|m|h)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]);
  const scale = TIME_TO_MS[m[2]!];
  return Number.isFinite(v) && scale !== undefined ? v * scale : null;
}

/** wrk's metric counts: "2.87k", "14.63k", "1.30M", "784.70" → plain number (k = 1000). */
export function parseMetricCount(token: string): number | null {
  const m = /^([-+]?[\d.]+(?:[eE][-+]?\d+)?)([kMGTP]?)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]);
  const scale = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 }[m[2]!]!;
  return Number.isFinite(v) ? v * scale : null;
}

/** wrk/bombardier binary byte sizes: "89.67MB", "17.74MB", "512.00B", "1.2KB" → bytes (1 KB = 1024 B). */
export function parseBinaryBytes(token: string): number | null {
  const m = /^([\d.]+)\s*(B|KB|MB|GB|TB|PB)$/.exec(token.trim());
  if (!m) return null;
  const pow = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'].indexOf(m[2]!);
  const v = Number(m[1]);
  return Number.isFinite(v) ? v * 1024 ** pow : null;
}

/** autocannon (pretty-bytes, SI) sizes: "11.2 MB", "0 B", "980 kB" → bytes (1 kB = 1000 B). */
export function parseSiBytes(token: string): number | null {
  const m = /^([\d.,]+)\s*(B|kB|KB|MB|GB|TB|PB)$/.exec(token.trim());
  if (!m) return null;
  const unit = m[2] === 'KB' ? 'kB' : m[2]!;
  const pow = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'].indexOf(unit);
  const v = Number(m[1]!.replace(/,/g, ''));
  return Number.isFinite(v) ? v * 1000 ** pow : null;
}

/** autocannon abbreviates counts of 1000 and more: "17k" → 17000, "1.2M"? not printed, but accepted. */
export function parseAbbrevCount(token: string): number | null {
  const m = /^([\d.,]+)([kKmM]?)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]!.replace(/,/g, ''));
  const scale = m[2] === '' ? 1 : m[2]!.toLowerCase() === 'k' ? 1e3 : 1e6;
  return Number.isFinite(v) ? v * scale : null;
}

/** The errors contract: transportErrors + non2xx, null only when neither part is known. */
export function sumErrors(transportErrors: number | null, non2xx: number | null): number | null {
  if (transportErrors === null && non2xx === null) return null;
  return (transportErrors ?? 0) + (non2xx ?? 0);
}

/** A summary with every figure null, to be filled in by an importer. */
export function blankSummary(meta: LoadTestMeta): LoadTestSummary {
  return {
    requests: null,
    durationSeconds: null,
    rps: null,
    errors: null,
    transportErrors: null,
    non2xx: null,
    latencyMs: emptyLatency(),
    bytesPerSecond: null,
    meta,
  };
}

export type { LatencyMs };

/** Max bytes a text report importer reads whole (reports are a few KiB; this only guards misuse). */
export const TEXT_REPORT_LIMIT = 64 * 1024 * 1024;

/** Reads a whole small text report (wrk, hey summary, ab, bombardier, autocannon) as UTF-8. */
export async function readText(src: ByteSource, what: string): Promise<string> {
  const buf = await readAllBytes(src, TEXT_REPORT_LIMIT);
  if (buf.length === 0) throw new IngestError('empty', `${what}: the file is empty`);
  let text = buf.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  return text;
}

/** Head bytes as text for detectors (a multi-byte character cut at the end does not matter). */
export function headText(head: Buffer): string {
  const text = head.toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** True when the name hint mentions the tool (used only to break ties, never alone). */
export function nameHints(fileName: string | undefined, re: RegExp): boolean {
  if (!fileName) return false;
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  return re.test(base) || re.test(fileName);
}

/**
 * Looks at the first chunk of a source without consuming it: returns its start as text (up to
 * `bytes`) and a source that replays that chunk and then the rest, so a CSV can still be streamed
 * after an importer chose between its tool's outputs.
 */
export async function peekSource(src: ByteSource, what: string, bytes = 4096): Promise<{ head: string; src: ByteSource }> {
  const it = src[Symbol.asyncIterator]();
  let first = await it.next();
  while (!first.done && first.value.length === 0) first = await it.next();
  if (first.done) throw new IngestError('empty', `${what}: the file is empty`);
  const chunk = first.value;
  const replay: ByteSource = {
    async *[Symbol.asyncIterator]() {
      yield chunk;
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    },
  };
  let head = Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.length, bytes)).toString('utf8');
  if (head.charCodeAt(0) === 0xfeff) head = head.slice(1);
  return { head, src: replay };
}
