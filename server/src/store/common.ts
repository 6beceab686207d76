import type { Hash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { StageCapturesTooLargeError, StoreError, TooLargeError } from './errors.ts';
import {
  ARTIFACT_KINDS,
  type ArtifactKind,
  type ByteSource,
  type CacheKey,
  type NewComparison,
  type NewStageSources,
} from './types.ts';
import { EXPLICIT_ID } from './secrets.ts';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

type Dialect = 'sqlite' | 'postgres';

/**
 * What `{{name}}` stands for in a shared migration (`migrations/shared/`), per dialect: SQLite's STRICT
 * column types and PostgreSQL's native ones.
 */
const DIALECT_WORDS: Record<Dialect, Record<string, string>> = {
  sqlite: {
    text: 'TEXT',
    int: 'INTEGER',
    bigint: 'INTEGER',
    bool: 'INTEGER',
    false: '0',
    bytes: 'BLOB',
    json: 'TEXT',
    strict: ' STRICT',
  },
  postgres: {
    text: 'text',
    int: 'integer',
    bigint: 'bigint',
    bool: 'boolean',
    false: 'false',
    bytes: 'bytea',
    json: 'jsonb',
    strict: '',
  },
};

/**
 * One dialect's text of a shared migration: `{{name}}` replaced by the dialect's word, a line starting
 * with `@sqlite ` or `@postgres ` kept (without the mark) for that dialect only.
 */
export function renderMigration(sql: string, dialect: Dialect, file = 'migration'): string {
  const out: string[] = [];
  for (const line of sql.split('\n')) {
    const only = /^@(\w+) (.*)$/.exec(line);
    if (only && !(only[1]! in DIALECT_WORDS))
      throw new Error(`store migrations (${file}): unknown dialect @${only[1]}`);
    if (only && only[1] !== dialect) continue;
    out.push(
      (only ? only[2]! : line).replace(/\{\{(\w+)\}\}/g, (_, name: string) => {
        const word = DIALECT_WORDS[dialect][name];
        if (word === undefined) throw new Error(`store migrations (${file}): unknown word {{${name}}}`);
        return word;
      }),
    );
  }
  return out.join('\n');
}

function readMigrations(dir: string, render: (sql: string, file: string) => string): Migration[] {
  const out: Migration[] = [];
  for (const file of readdirSync(dir)) {
    const m = /^(\d+)-([a-z0-9-]+)\.sql$/.exec(file);
    if (!m) continue;
    out.push({ version: Number(m[1]), name: m[2]!, sql: render(readFileSync(dir + file, 'utf8'), file) });
  }
  return out;
}

/**
 * The numbered migrations of one dialect, in order: the shared ones (`migrations/shared/NNN-name.sql`,
 * rendered for the dialect) and the dialect's own (`migrations/<dialect>/NNN-name.sql`). A version is
 * in one of the two places, never both; the versions already applied to existing databases keep their
 * numbers and names.
 */
export function loadMigrations(dialect: Dialect): Migration[] {
  const base = new URL('./migrations/', import.meta.url);
  const out = [
    ...readMigrations(fileURLToPath(new URL('./shared/', base)), (sql, file) => renderMigration(sql, dialect, file)),
    ...readMigrations(fileURLToPath(new URL(`./${dialect}/`, base)), (sql) => sql),
  ];
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

/**
 * Refuses text a store cannot hold the same way in both dialects: PostgreSQL's text type has no NUL
 * character, so neither store accepts one in a title, description, name or note.
 */
export function checkText(fields: Record<string, string | undefined>): void {
  for (const [name, v] of Object.entries(fields))
    if (v?.includes('\u0000')) throw new StoreError('invalid', `${name} must not contain a NUL character`);
}

export function checkNewComparison(input: NewComparison): void {
  if (typeof input.title !== 'string') throw new StoreError('invalid', 'title must be a string');
  checkText({ title: input.title, description: input.description });
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

/**
 * Reads `src` in pieces of exactly `pieceBytes`, feeding `hash` as it reads and throwing TooLargeError
 * past `maxBytes` (before any of the offending bytes is yielded). Every full piece comes as it fills;
 * the rest comes last with `last: true` (empty when the size is a multiple of `pieceBytes`).
 */
export async function* pieces(
  src: ByteSource,
  maxBytes: number,
  pieceBytes: number,
  hash: Hash,
): AsyncGenerator<{ piece: Buffer; last: boolean }> {
  let size = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  for await (const chunk of src) {
    const buf = toBuffer(chunk);
    size += buf.length;
    if (size > maxBytes) throw new TooLargeError(maxBytes);
    hash.update(buf);
    pending.push(buf);
    pendingBytes += buf.length;
    if (pendingBytes < pieceBytes) continue;
    const all = Buffer.concat(pending, pendingBytes);
    let off = 0;
    for (; all.length - off >= pieceBytes; off += pieceBytes)
      yield { piece: all.subarray(off, off + pieceBytes), last: false };
    pending = off < all.length ? [all.subarray(off)] : [];
    pendingBytes = all.length - off;
  }
  yield { piece: Buffer.concat(pending, pendingBytes), last: true };
}

/**
 * A summary as JSON text. A NUL inside a string (a file may carry one in a name) becomes U+FFFD:
 * PostgreSQL's jsonb cannot hold it, and both stores must keep the same summary.
 */
export function jsonText(summary: unknown): string {
  const text = JSON.stringify(summary ?? null);
  if (text === undefined) throw new StoreError('invalid', 'summary must be JSON-serialisable');
  // An escape preceded by an even number of backslashes (an odd count means the text "\\u0000" itself).
  return text.replace(/(?<!\\)((?:\\\\)*)\\u0000/g, '$1\\ufffd');
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

/** Bytes a stage's capture records take, each measured as compact JSON (as `captureText` writes it). */
export function captureBytes(captures: readonly unknown[]): number {
  let n = 0;
  for (const c of captures) n += Buffer.byteLength(jsonText(c));
  return n;
}

/**
 * Refuses one more capture record (`text`, from `captureText`) on a stage already holding `captures`:
 * past the count, or past `maxStageBytes` of records together. Called inside the write transaction
 * that appends it, with the stage's row read under that transaction's lock, so concurrent records
 * cannot pass the bound together.
 */
export function checkStageCapture(captures: readonly unknown[], text: string, maxStageBytes?: number): void {
  if (captures.length >= MAX_CAPTURES_PER_STAGE)
    throw new StoreError('invalid', `a stage keeps at most ${MAX_CAPTURES_PER_STAGE} capture records`);
  if (maxStageBytes === undefined) return;
  const total = captureBytes(captures) + Buffer.byteLength(text);
  if (total > maxStageBytes) throw new StageCapturesTooLargeError(total, maxStageBytes);
}

/** A cache hit refreshes an entry's last use at most this often (a read should rarely write). */
export const CACHE_TOUCH_MS = 60_000;

/**
 * Deletes least recently used cache entries until the total is within `maxBytes` (same SQL in both
 * dialects: a running sum over the entries, oldest use first, picks exactly what must go).
 */
export const CACHE_EVICT_SQL = `WITH ranked AS (
  SELECT scope, key, model_version, SUM(size) OVER (ORDER BY used_at, scope, key, model_version) - size AS before
  FROM cache)
DELETE FROM cache WHERE (scope, key, model_version) IN (
  SELECT scope, key, model_version FROM ranked WHERE before < $1)`;

/** Checks a new source set's fields before it is stored (paths relative, `/`-separated, no NUL). */
export function checkSourceSet(input: NewStageSources): void {
  checkText({ modulePath: input.modulePath, revision: input.revision, origin: input.origin });
  let prev = '';
  for (const e of input.entries) {
    if (typeof e.path !== 'string' || e.path === '' || e.path.includes('\u0000') || e.path.startsWith('/'))
      throw new StoreError('invalid', `source path ${JSON.stringify(e.path)} must be relative and non-empty`);
    if (!Number.isSafeInteger(e.size) || e.size < 0)
      throw new StoreError('invalid', `source file ${e.path} has an invalid size`);
    if (e.path <= prev) throw new StoreError('invalid', 'source paths must be sorted and distinct');
    prev = e.path;
  }
}

/** Whether a process of this host is running (EPERM: it is, under another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
