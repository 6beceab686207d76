import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { StoreError } from './errors.ts';
import { ARTIFACT_KINDS, type ArtifactKind, type CacheKey, type NewComparison } from './types.ts';
import { EXPLICIT_ID } from './secrets.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The numbered migrations of one dialect (`migrations/<dialect>/NNN-name.sql`), in order. */
export function loadMigrations(dialect: 'sqlite' | 'postgres'): Migration[] {
  const dir = fileURLToPath(new URL(`./migrations/${dialect}/`, import.meta.url));
  const out: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const m = /^(\d+)-([a-z0-9-]+)\.sql$/.exec(file);
    if (!m) continue;
    out.push({ version: Number(m[1]), name: m[2]!, sql: readFileSync(dir + file, 'utf8') });
  }
  out.sort((a, b) => a.version - b.version);
  out.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new Error(`store migrations (${dialect}): expected version ${i + 1}, found ${m.version}`);
  });
  return out;
}

export function iso(ms: number | string | bigint): string {
  return new Date(Number(ms)).toISOString();
}

export function checkNewComparison(input: NewComparison): void {
  if (typeof input.title !== 'string') throw new StoreError('invalid', 'title must be a string');
  if (input.id !== undefined && !EXPLICIT_ID.test(input.id)) {
    throw new StoreError('invalid', 'an explicit id must be 1-64 characters of A-Z a-z 0-9 _ -');
  }
}

export function checkKind(kind: string): asserts kind is ArtifactKind {
  if (!(ARTIFACT_KINDS as readonly string[]).includes(kind)) {
    throw new StoreError('invalid', `unknown artifact kind ${JSON.stringify(kind)}`);
  }
}

export function checkMaxBytes(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw new StoreError('invalid', 'maxBytes must be a non-negative integer');
}

export function checkReorder(current: readonly string[], wanted: readonly string[]): void {
  const have = new Set(current);
  const seen = new Set<string>();
  for (const id of wanted) {
    if (!have.has(id) || seen.has(id))
      throw new StoreError('invalid', 'reorder must list every stage of the comparison exactly once');
    seen.add(id);
  }
  if (seen.size !== have.size)
    throw new StoreError('invalid', 'reorder must list every stage of the comparison exactly once');
}

/** Flattens a cache scope to the text column that, with key and model version, forms the primary key. */
export function scopeColumns(k: CacheKey): {
  scope: string;
  comparisonId: string | null;
  sha256: string | null;
  revision: number;
} {
  const s = k.scope;
  if (s === 'global') return { scope: 'g', comparisonId: null, sha256: null, revision: 0 };
  if ('comparisonId' in s)
    return { scope: `c:${s.comparisonId}`, comparisonId: s.comparisonId, sha256: null, revision: s.revision };
  return { scope: `b:${s.sha256}`, comparisonId: null, sha256: s.sha256, revision: 0 };
}

export function toBuffer(c: Buffer | Uint8Array): Buffer {
  return Buffer.isBuffer(c) ? c : Buffer.from(c.buffer, c.byteOffset, c.byteLength);
}

export function jsonText(summary: unknown): string {
  const text = JSON.stringify(summary ?? null);
  if (text === undefined) throw new StoreError('invalid', 'summary must be JSON-serialisable');
  return text;
}

/** Most capture records one stage keeps (each `stagediff capture` run into it adds one). */
export const MAX_CAPTURES_PER_STAGE = 100;

/** Largest capture record a stage accepts, serialised (a capture of 100 runs is well under it). */
export const MAX_CAPTURE_BYTES = 256 * 1024;

export function captureText(record: unknown): string {
  if (!record || typeof record !== 'object' || Array.isArray(record))
    throw new StoreError('invalid', 'a capture record must be a JSON object');
  const text = jsonText(record);
  if (Buffer.byteLength(text) > MAX_CAPTURE_BYTES)
    throw new StoreError('invalid', `a capture record must be at most ${MAX_CAPTURE_BYTES} bytes of JSON`);
  return text;
}
