import pg from 'pg';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  checkKind,
  checkMaxBytes,
  CACHE_EVICT_SQL,
  CACHE_TOUCH_MS,
  checkNewComparison,
  MAX_CAPTURES_PER_STAGE,
  captureText,
  checkText,
  checkReorder,
  iso,
  jsonText,
  loadMigrations,
  scopeColumns,
  toBuffer,
} from './common.ts';
import { StoreError, TooLargeError } from './errors.ts';
import { editTokenMatches, hashEditToken, newEditToken, newId, SHA256_HEX } from './secrets.ts';
import {
  PIN_TTL_MS,
  type Artifact,
  type BlobRef,
  type ByteSource,
  type CacheKey,
  type Comparison,
  type ComparisonTree,
  type CreatedComparison,
  type NewArtifact,
  type NewComparison,
  type Stage,
  type Store,
  type StoreStats,
  type SweepOptions,
  type SweepReport,
} from './types.ts';

/*
 * Everything, blobs included, lives in the database, so replicas on different hosts share it.
 *
 * A blob upload is one transaction on one connection: chunks are inserted as they arrive, the
 * sha256 is known at the end, then the blob row and a pin are added and the transaction commits.
 * A crash or a refusal (too large) rolls it back, so no partial blob is ever visible.
 *
 * Concurrency rules:
 * - every change to a comparison's content starts by bumping its revision, which row-locks the
 *   comparison: changes to one comparison are serialised, and positions stay dense;
 * - creating and garbage-collecting one blob both take a transaction advisory lock derived from its
 *   sha256, so "deduplicate onto an existing blob" and "delete that blob" cannot interleave;
 * - a blob is referenced first by a pin and then by an artifact, and addArtifact swaps one for the
 *   other in one transaction, so garbage collection never sees it unreferenced in between.
 */

const CHUNK_BYTES = 1 << 20;
const LOCK_NS_MIGRATIONS = 0x5d1f_0001;
const LOCK_NS_BLOBS = 0x5d1f_0002;

interface ComparisonRow {
  id: string;
  title: string;
  description: string;
  created_at: string;
  updated_at: string;
  edit_token_hash: string | null;
  read_only: boolean;
  revision: string;
}
interface StageRow {
  id: string;
  comparison_id: string;
  position: number;
  name: string;
  note: string;
  created_at: string;
  captures: unknown[];
}
interface ArtifactRow {
  id: string;
  stage_id: string;
  comparison_id: string;
  kind: string;
  format: string;
  filename: string;
  size: string;
  sha256: string;
  summary: unknown;
  created_at: string;
}

const ARTIFACT_COLUMNS = `a.id, a.stage_id, s.comparison_id, a.kind, a.format, a.filename, a.size, a.sha256, a.summary, a.created_at`;

function toComparison(r: ComparisonRow): Comparison {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    readOnly: r.read_only,
    revision: Number(r.revision),
  };
}
function toStage(r: StageRow): Stage {
  return {
    id: r.id,
    comparisonId: r.comparison_id,
    position: r.position,
    name: r.name,
    note: r.note,
    createdAt: iso(r.created_at),
    captures: r.captures,
  };
}
function toArtifact(r: ArtifactRow): Artifact {
  checkKind(r.kind);
  return {
    id: r.id,
    comparisonId: r.comparison_id,
    stageId: r.stage_id,
    kind: r.kind,
    format: r.format,
    filename: r.filename,
    size: Number(r.size),
    sha256: r.sha256,
    summary: r.summary,
    createdAt: iso(r.created_at),
  };
}

/** A 32-bit advisory-lock key for a blob; collisions only serialise unrelated blobs a little. */
function blobLockKey(sha256: string): number {
  return parseInt(sha256.slice(0, 8), 16) | 0;
}

type Db = pg.PoolClient;

export interface PostgresStoreOptions {
  databaseUrl: string;
  /** Pool size. Each blob write holds one connection while it streams (from the local spool). */
  maxConnections?: number;
  /** Bound of the derived-result cache, bytes. */
  maxCacheBytes?: number;
}

export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  private readonly pool: pg.Pool;

  private constructor(
    pool: pg.Pool,
    private readonly maxCacheBytes: number,
  ) {
    this.pool = pool;
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.maxConnections ?? 20 });
    // An idle client losing its server must not crash the process; the next query reports the problem.
    pool.on('error', () => {});
    const store = new PostgresStore(pool, options.maxCacheBytes ?? Number.MAX_SAFE_INTEGER);
    try {
      await store.migrate();
    } catch (e) {
      await pool.end();
      throw e;
    }
    return store;
  }

  private async migrate(): Promise<void> {
    const migrations = loadMigrations('postgres');
    await this.tx(async (db) => {
      // Replicas starting together queue here; the first applies, the others find nothing to do.
      await db.query('SELECT pg_advisory_xact_lock($1, 0)', [LOCK_NS_MIGRATIONS]);
      await db.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)`);
      const done = new Set(
        (await db.query<{ version: number }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version),
      );
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await db.query(m.sql);
        await db.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
          m.version,
          m.name,
          Date.now(),
        ]);
      }
    });
  }

  private async tx<T>(fn: (db: Db) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    const db = await this.pool.connect();
    let broken: Error | undefined;
    // A checked-out client has no pool listener: a backend lost mid-transaction would otherwise be an
    // uncaught 'error' event that ends the process. The failing query reports it instead.
    const lost = (e: Error) => {
      broken = e;
    };
    db.on('error', lost);
    try {
      await db.query(begin);
      const out = await fn(db);
      await db.query('COMMIT');
      return out;
    } catch (e) {
      await db.query('ROLLBACK').catch((re: Error) => {
        broken = re;
      });
      throw e;
    } finally {
      db.removeListener('error', lost);
      db.release(broken);
    }
  }

  /** Bumps the revision, row-locking the comparison for the rest of the transaction; throws not-found. */
  private async bump(db: Db, comparisonId: string, now: number): Promise<void> {
    const r = await db.query('UPDATE comparisons SET revision = revision + 1, updated_at = $1 WHERE id = $2', [
      now,
      comparisonId,
    ]);
    if (r.rowCount === 0) throw new StoreError('not-found', `no comparison ${comparisonId}`);
  }

  private async requireStage(db: Db | pg.Pool, comparisonId: string, stageId: string): Promise<StageRow> {
    const r = await db.query<StageRow>('SELECT * FROM stages WHERE id = $1 AND comparison_id = $2', [
      stageId,
      comparisonId,
    ]);
    if (!r.rows[0]) throw new StoreError('not-found', `no stage ${stageId} in comparison ${comparisonId}`);
    return r.rows[0];
  }

  private async stageRows(db: Db | pg.Pool, comparisonId: string): Promise<StageRow[]> {
    return (await db.query<StageRow>('SELECT * FROM stages WHERE comparison_id = $1 ORDER BY position', [comparisonId]))
      .rows;
  }

  /** Positions 0..n-1 in the given order, in two steps so UNIQUE(comparison, position) holds throughout. */
  private async renumber(db: Db, comparisonId: string, ids: readonly string[]): Promise<void> {
    await db.query('UPDATE stages SET position = -1 - position WHERE comparison_id = $1', [comparisonId]);
    await db.query(
      `UPDATE stages SET position = o.pos - 1
      FROM unnest($1::text[]) WITH ORDINALITY AS o(id, pos) WHERE stages.id = o.id`,
      [ids],
    );
  }

  /** Deletes each blob that no artifact and no live pin references (cascading its chunks and cache entries). */
  private async collect(db: Db, shas: Iterable<string>, now: number): Promise<number> {
    let n = 0;
    for (const sha of [...new Set(shas)].sort()) {
      // sorted: two collectors never wait on each other in a cycle
      await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NS_BLOBS, blobLockKey(sha)]);
      const r = await db.query(
        `DELETE FROM blobs b WHERE b.sha256 = $1
        AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
        AND NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256 AND p.expires_at > $2)`,
        [sha, now],
      );
      n += r.rowCount ?? 0;
    }
    return n;
  }

  // ---- comparisons ----

  async createComparison(input: NewComparison): Promise<CreatedComparison> {
    checkNewComparison(input);
    const id = input.id ?? newId();
    const readOnly = input.readOnly === true;
    const token = readOnly ? null : newEditToken();
    const now = Date.now();
    try {
      const r = await this.pool.query<ComparisonRow>(
        `INSERT INTO comparisons
        (id, title, description, created_at, updated_at, edit_token_hash, read_only)
        VALUES ($1, $2, $3, $4, $4, $5, $6) RETURNING *`,
        [id, input.title, input.description ?? '', now, token === null ? null : hashEditToken(token), readOnly],
      );
      return { comparison: toComparison(r.rows[0]!), editToken: token };
    } catch (e) {
      if ((e as { code?: string }).code === '23505')
        throw new StoreError('conflict', `comparison ${id} already exists`);
      throw e;
    }
  }

  async getComparison(id: string): Promise<Comparison | null> {
    const r = await this.pool.query<ComparisonRow>('SELECT * FROM comparisons WHERE id = $1', [id]);
    return r.rows[0] ? toComparison(r.rows[0]) : null;
  }

  async getComparisonTree(id: string): Promise<ComparisonTree | null> {
    return this.tx(async (db) => {
      const c = (await db.query<ComparisonRow>('SELECT * FROM comparisons WHERE id = $1', [id])).rows[0];
      if (!c) return null;
      const stages = await this.stageRows(db, id);
      const arts = (
        await db.query<ArtifactRow>(
          `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
        WHERE s.comparison_id = $1 ORDER BY a.seq`,
          [id],
        )
      ).rows;
      const byStage = new Map<string, Artifact[]>();
      for (const a of arts) {
        const list = byStage.get(a.stage_id) ?? [];
        list.push(toArtifact(a));
        byStage.set(a.stage_id, list);
      }
      return {
        comparison: toComparison(c),
        stages: stages.map((s) => ({ ...toStage(s), artifacts: byStage.get(s.id) ?? [] })),
      };
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  }

  async updateComparison(id: string, patch: { title?: string; description?: string }): Promise<Comparison> {
    checkText(patch);
    const now = Date.now();
    return this.tx(async (db) => {
      await this.bump(db, id, now);
      const r = await db.query<ComparisonRow>(
        `UPDATE comparisons SET title = COALESCE($2, title),
        description = COALESCE($3, description) WHERE id = $1 RETURNING *`,
        [id, patch.title ?? null, patch.description ?? null],
      );
      return toComparison(r.rows[0]!);
    });
  }

  async deleteComparison(id: string): Promise<boolean> {
    const now = Date.now();
    return this.tx(async (db) => {
      const locked = await db.query('SELECT 1 FROM comparisons WHERE id = $1 FOR UPDATE', [id]);
      if (locked.rowCount === 0) return false;
      const shas = (
        await db.query<{ sha256: string }>(
          `SELECT DISTINCT a.sha256 FROM artifacts a JOIN stages s ON s.id = a.stage_id
        WHERE s.comparison_id = $1`,
          [id],
        )
      ).rows.map((r) => r.sha256);
      await db.query('DELETE FROM comparisons WHERE id = $1', [id]);
      await this.collect(db, shas, now);
      return true;
    });
  }

  async verifyEditToken(id: string, token: string): Promise<boolean> {
    const r = await this.pool.query<{ edit_token_hash: string | null; read_only: boolean }>(
      'SELECT edit_token_hash, read_only FROM comparisons WHERE id = $1',
      [id],
    );
    const row = r.rows[0];
    if (!row || row.read_only) return false;
    return editTokenMatches(row.edit_token_hash, token);
  }

  // ---- stages ----

  async createStage(comparisonId: string, input: { name: string; note?: string }): Promise<Stage> {
    checkText(input);
    const now = Date.now();
    return this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      const r = await db.query<StageRow>(
        `INSERT INTO stages (id, comparison_id, position, name, note, created_at)
        SELECT $1::text, $2::text, COALESCE(MAX(position) + 1, 0), $3::text, $4::text, $5::bigint
        FROM stages WHERE comparison_id = $2 RETURNING *`,
        [newId(), comparisonId, input.name, input.note ?? '', now],
      );
      return toStage(r.rows[0]!);
    });
  }

  async getStage(comparisonId: string, stageId: string): Promise<Stage | null> {
    const r = await this.pool.query<StageRow>('SELECT * FROM stages WHERE id = $1 AND comparison_id = $2', [
      stageId,
      comparisonId,
    ]);
    return r.rows[0] ? toStage(r.rows[0]) : null;
  }

  async listStages(comparisonId: string): Promise<Stage[]> {
    return (await this.stageRows(this.pool, comparisonId)).map(toStage);
  }

  async updateStage(comparisonId: string, stageId: string, patch: { name?: string; note?: string }): Promise<Stage> {
    checkText(patch);
    const now = Date.now();
    return this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      await this.requireStage(db, comparisonId, stageId);
      const r = await db.query<StageRow>(
        'UPDATE stages SET name = COALESCE($2, name), note = COALESCE($3, note) WHERE id = $1 RETURNING *',
        [stageId, patch.name ?? null, patch.note ?? null],
      );
      return toStage(r.rows[0]!);
    });
  }

  async addStageCapture(comparisonId: string, stageId: string, record: unknown): Promise<Stage> {
    const text = captureText(record);
    const now = Date.now();
    return this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      const st = await this.requireStage(db, comparisonId, stageId);
      if (st.captures.length >= MAX_CAPTURES_PER_STAGE)
        throw new StoreError('invalid', `a stage keeps at most ${MAX_CAPTURES_PER_STAGE} capture records`);
      const r = await db.query<StageRow>(
        'UPDATE stages SET captures = captures || jsonb_build_array($2::jsonb) WHERE id = $1 RETURNING *',
        [stageId, text],
      );
      return toStage(r.rows[0]!);
    });
  }

  async deleteStage(comparisonId: string, stageId: string): Promise<void> {
    const now = Date.now();
    await this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      await this.requireStage(db, comparisonId, stageId);
      const shas = (
        await db.query<{ sha256: string }>('SELECT DISTINCT sha256 FROM artifacts WHERE stage_id = $1', [stageId])
      ).rows.map((r) => r.sha256);
      await db.query('DELETE FROM stages WHERE id = $1', [stageId]);
      await this.renumber(
        db,
        comparisonId,
        (await this.stageRows(db, comparisonId)).map((s) => s.id),
      );
      await this.collect(db, shas, now);
    });
  }

  async reorderStages(comparisonId: string, stageIds: string[]): Promise<Stage[]> {
    const now = Date.now();
    return this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      checkReorder(
        (await this.stageRows(db, comparisonId)).map((s) => s.id),
        stageIds,
      );
      await this.renumber(db, comparisonId, stageIds);
      return (await this.stageRows(db, comparisonId)).map(toStage);
    });
  }

  // ---- blobs and artifacts ----

  async putBlob(src: ByteSource, maxBytes: number): Promise<BlobRef> {
    checkMaxBytes(maxBytes);
    return this.tx(async (db) => {
      const dataId = newId();
      const hash = createHash('sha256');
      let size = 0;
      let seq = 0;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const write = async (piece: Buffer): Promise<void> => {
        await db.query('INSERT INTO blob_data (data_id, seq, data) VALUES ($1, $2, $3)', [dataId, seq++, piece]);
      };
      for await (const chunk of src) {
        const buf = toBuffer(chunk);
        size += buf.length;
        if (size > maxBytes) throw new TooLargeError(maxBytes);
        hash.update(buf);
        pending.push(buf);
        pendingBytes += buf.length;
        if (pendingBytes >= CHUNK_BYTES) {
          const all = Buffer.concat(pending, pendingBytes);
          let off = 0;
          for (; all.length - off >= CHUNK_BYTES; off += CHUNK_BYTES) await write(all.subarray(off, off + CHUNK_BYTES));
          pending = off < all.length ? [all.subarray(off)] : [];
          pendingBytes = all.length - off;
        }
      }
      if (pendingBytes > 0) await write(Buffer.concat(pending, pendingBytes));
      const sha256 = hash.digest('hex');
      const now = Date.now();
      await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NS_BLOBS, blobLockKey(sha256)]);
      const inserted = await db.query(
        `INSERT INTO blobs (sha256, size, data_id, created_at) VALUES ($1, $2, $3, $4)
        ON CONFLICT (sha256) DO NOTHING`,
        [sha256, size, dataId, now],
      );
      if (inserted.rowCount === 0) await db.query('DELETE FROM blob_data WHERE data_id = $1', [dataId]); // same bytes already stored
      const pinId = newId();
      await db.query('INSERT INTO blob_pins (id, sha256, expires_at) VALUES ($1, $2, $3)', [
        pinId,
        sha256,
        now + PIN_TTL_MS,
      ]);
      return { sha256, size, pinId };
    });
  }

  async releaseBlob(ref: BlobRef): Promise<void> {
    const now = Date.now();
    await this.tx(async (db) => {
      await db.query('DELETE FROM blob_pins WHERE id = $1', [ref.pinId]);
      await this.collect(db, [ref.sha256], now);
    });
  }

  async addArtifact(input: NewArtifact): Promise<Artifact> {
    checkKind(input.kind);
    const summary = jsonText(input.summary);
    checkText({ filename: input.filename, format: input.format });
    let ref: BlobRef;
    if ('src' in input) {
      await this.requireStage(this.pool, input.comparisonId, input.stageId); // fail before streaming
      ref = await this.putBlob(input.src, input.maxBytes);
    } else {
      ref = input.blob;
      if (!SHA256_HEX.test(ref.sha256)) throw new StoreError('invalid', 'blob sha256 must be 64 lowercase hex digits');
    }
    const now = Date.now();
    try {
      return await this.tx(async (db) => {
        await this.bump(db, input.comparisonId, now);
        await this.requireStage(db, input.comparisonId, input.stageId);
        // FOR KEY SHARE: the blob cannot be deleted between this check and the insert that references it.
        const blob = (
          await db.query<{ size: string }>('SELECT size FROM blobs WHERE sha256 = $1 FOR KEY SHARE', [ref.sha256])
        ).rows[0];
        if (!blob) throw new StoreError('blob-missing', `blob ${ref.sha256} is not stored (its pin expired?)`);
        const id = newId();
        await db.query(
          `INSERT INTO artifacts (id, stage_id, kind, format, filename, size, sha256, summary, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)`,
          [id, input.stageId, input.kind, input.format, input.filename, blob.size, ref.sha256, summary, now],
        );
        await db.query('DELETE FROM blob_pins WHERE id = $1', [ref.pinId]);
        const row = (
          await db.query<ArtifactRow>(
            `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
          WHERE a.id = $1`,
            [id],
          )
        ).rows[0]!;
        return toArtifact(row);
      });
    } catch (e) {
      if ('src' in input) await this.releaseBlob(ref).catch(() => {});
      throw e;
    }
  }

  async getArtifact(id: string): Promise<Artifact | null> {
    const r = await this.pool.query<ArtifactRow>(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
      WHERE a.id = $1`,
      [id],
    );
    return r.rows[0] ? toArtifact(r.rows[0]) : null;
  }

  async listArtifacts(comparisonId: string, stageId: string): Promise<Artifact[]> {
    const r = await this.pool.query<ArtifactRow>(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
      WHERE a.stage_id = $1 AND s.comparison_id = $2 ORDER BY a.seq`,
      [stageId, comparisonId],
    );
    return r.rows.map(toArtifact);
  }

  async deleteArtifact(comparisonId: string, artifactId: string): Promise<void> {
    const now = Date.now();
    await this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      const row = (
        await db.query<{ sha256: string }>(
          `DELETE FROM artifacts a USING stages s
        WHERE a.id = $1 AND s.id = a.stage_id AND s.comparison_id = $2 RETURNING a.sha256`,
          [artifactId, comparisonId],
        )
      ).rows[0];
      if (!row) throw new StoreError('not-found', `no artifact ${artifactId} in comparison ${comparisonId}`);
      await this.collect(db, [row.sha256], now);
    });
  }

  async hasBlob(sha256: string): Promise<boolean> {
    return ((await this.pool.query('SELECT 1 FROM blobs WHERE sha256 = $1', [sha256])).rowCount ?? 0) > 0;
  }

  async storedBytes(): Promise<number> {
    const r = await this.pool.query<{ n: string }>('SELECT COALESCE(SUM(size), 0) AS n FROM blobs');
    return Number(r.rows[0]!.n);
  }

  async readBlob(sha256: string): Promise<Buffer | null> {
    if (!SHA256_HEX.test(sha256)) return null;
    // One statement, one snapshot: either the whole blob or none of it.
    const r = await this.pool.query<{ size: string; data: Buffer | null }>(
      `SELECT b.size, d.data FROM blobs b
      LEFT JOIN blob_data d ON d.data_id = b.data_id WHERE b.sha256 = $1 ORDER BY d.seq`,
      [sha256],
    );
    if (r.rows.length === 0) return null;
    const parts = r.rows.flatMap((row) => (row.data ? [row.data] : []));
    const out = Buffer.concat(parts);
    if (out.length !== Number(r.rows[0]!.size)) throw new StoreError('blob-missing', `blob ${sha256} is incomplete`);
    return out;
  }

  async openBlobStream(sha256: string): Promise<Readable | null> {
    if (!SHA256_HEX.test(sha256)) return null;
    const head = (
      await this.pool.query<{ data_id: string; size: string }>('SELECT data_id, size FROM blobs WHERE sha256 = $1', [
        sha256,
      ])
    ).rows[0];
    if (!head) return null;
    const pool = this.pool;
    const size = Number(head.size);
    // A few chunks per query: bounded memory, and no connection held while the client reads slowly.
    async function* chunks(): AsyncGenerator<Buffer> {
      let sent = 0;
      let next = 0;
      while (sent < size) {
        const r = await pool.query<{ seq: number; data: Buffer }>(
          `SELECT seq, data FROM blob_data
          WHERE data_id = $1 AND seq >= $2 ORDER BY seq LIMIT 4`,
          [head!.data_id, next],
        );
        if (r.rows.length === 0) throw new StoreError('blob-missing', `blob ${sha256} was deleted while being read`);
        for (const row of r.rows) {
          sent += row.data.length;
          next = row.seq + 1;
          yield row.data;
        }
      }
    }
    return Readable.from(chunks(), { objectMode: false });
  }

  // ---- cache ----

  async cacheGet(k: CacheKey): Promise<Buffer | null> {
    const c = scopeColumns(k);
    const r = await this.pool.query<{ value: Buffer; used_at: string }>(
      `SELECT value, used_at FROM cache e
      WHERE scope = $1 AND key = $2 AND model_version = $3 AND revision = $4
        AND (e.comparison_id IS NULL OR EXISTS (SELECT 1 FROM comparisons p WHERE p.id = e.comparison_id AND p.revision = e.revision))`,
      [c.scope, k.key, k.modelVersion, c.revision],
    );
    const row = r.rows[0];
    if (!row) return null;
    const now = Date.now();
    if (Number(row.used_at) < now - CACHE_TOUCH_MS)
      await this.pool.query('UPDATE cache SET used_at = $1 WHERE scope = $2 AND key = $3 AND model_version = $4', [
        now,
        c.scope,
        k.key,
        k.modelVersion,
      ]);
    return row.value;
  }

  async cachePut(k: CacheKey, value: Buffer | string): Promise<void> {
    const c = scopeColumns(k);
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    if (bytes.length > this.maxCacheBytes / 4) return;
    const guard =
      c.comparisonId !== null
        ? 'EXISTS (SELECT 1 FROM comparisons WHERE id = $4 AND revision = $6)'
        : c.sha256 !== null
          ? 'EXISTS (SELECT 1 FROM blobs WHERE sha256 = $5)'
          : 'true';
    await this.tx(async (db) => {
      // A writer that computed from an older revision never replaces a newer entry.
      await db.query(
        `INSERT INTO cache (scope, key, model_version, comparison_id, blob_sha256, revision, value, created_at, size, used_at)
        SELECT $1::text, $2::text, $3::integer, $4::text, $5::text, $6::bigint, $7::bytea, $8::bigint, $9::bigint, $8::bigint WHERE ${guard}
        ON CONFLICT (scope, key, model_version) DO UPDATE
          SET value = EXCLUDED.value, revision = EXCLUDED.revision, created_at = EXCLUDED.created_at,
            size = EXCLUDED.size, used_at = EXCLUDED.used_at
          WHERE EXCLUDED.revision >= cache.revision`,
        [c.scope, k.key, k.modelVersion, c.comparisonId, c.sha256, c.revision, bytes, Date.now(), bytes.length],
      );
      await db.query('DELETE FROM cache WHERE scope = $1 AND key = $2 AND model_version <> $3', [
        c.scope,
        k.key,
        k.modelVersion,
      ]);
      const total = Number((await db.query<{ n: string }>('SELECT COALESCE(SUM(size), 0) AS n FROM cache')).rows[0]!.n);
      if (total > this.maxCacheBytes) await db.query(CACHE_EVICT_SQL, [total - this.maxCacheBytes]);
    }).catch((e: { code?: string }) => {
      // The comparison or blob went away between the guard and the insert: nothing to cache.
      if (e.code !== '23503') throw e;
    });
  }

  // ---- maintenance ----

  async sweep(options: SweepOptions = {}): Promise<SweepReport> {
    const now = options.now ?? Date.now();
    const report: SweepReport = { expiredPins: 0, orphanBlobs: 0, tempFiles: 0, staleCacheEntries: 0 };
    await this.tx(async (db) => {
      report.expiredPins = (await db.query('DELETE FROM blob_pins WHERE expires_at <= $1', [now])).rowCount ?? 0;
      const orphans = (
        await db.query<{ sha256: string }>(`SELECT sha256 FROM blobs b
        WHERE NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
          AND NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256)`)
      ).rows.map((r) => r.sha256);
      report.orphanBlobs = await this.collect(db, orphans, now);
      report.staleCacheEntries =
        (
          await db.query(`DELETE FROM cache e USING comparisons p
        WHERE e.comparison_id = p.id AND e.revision < p.revision`)
        ).rowCount ?? 0;
    });
    return report;
  }

  async stats(): Promise<StoreStats> {
    const r = await this.pool.query<Record<string, string>>(`SELECT
      (SELECT COALESCE(MAX(version), 0) FROM schema_migrations) AS "schemaVersion",
      (SELECT COUNT(*) FROM comparisons) AS comparisons,
      (SELECT COUNT(*) FROM stages) AS stages,
      (SELECT COUNT(*) FROM artifacts) AS artifacts,
      (SELECT COUNT(*) FROM blobs) AS blobs,
      (SELECT COALESCE(SUM(size), 0) FROM blobs) AS "blobBytes",
      (SELECT COUNT(*) FROM blob_pins) AS pins,
      (SELECT COUNT(*) FROM cache) AS "cacheEntries",
      (SELECT COALESCE(SUM(size), 0) FROM cache) AS "cacheBytes",
      (SELECT COUNT(DISTINCT data_id) FROM blob_data) + (SELECT COUNT(*) FROM blobs WHERE size = 0) AS "blobObjects"`);
    const row = r.rows[0]!;
    return {
      schemaVersion: Number(row.schemaVersion),
      comparisons: Number(row.comparisons),
      stages: Number(row.stages),
      artifacts: Number(row.artifacts),
      blobs: Number(row.blobs),
      blobBytes: Number(row.blobBytes),
      pins: Number(row.pins),
      cacheEntries: Number(row.cacheEntries),
      cacheBytes: Number(row.cacheBytes),
      blobObjects: Number(row.blobObjects),
      tempFiles: 0,
    };
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }
}
