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
  checkSourceSet,
  iso,
  jsonText,
  loadMigrations,
  scopeColumns,
  toBuffer,
} from './common.ts';
import { BlobStoreUnavailableError, StoreError, TooLargeError } from './errors.ts';
import type { S3Blobs } from './s3-blobs.ts';
import { editTokenMatches, hashEditToken, newEditToken, newId, SHA256_HEX } from './secrets.ts';
import {
  PIN_TTL_MS,
  VIEW_TOUCH_MS,
  type Artifact,
  type BlobRef,
  type ByteSource,
  type CacheKey,
  type Comparison,
  type ComparisonTree,
  type CreatedComparison,
  type NewArtifact,
  type NewComparison,
  type NewStageSources,
  type Stage,
  type StageSources,
  type StageSourcesWithFiles,
  type StatsOptions,
  type Store,
  type StoreStats,
  type SweepOptions,
  type SweepReport,
} from './types.ts';

/*
 * Everything lives in the database, so replicas on different hosts share it — blob bytes too, unless
 * an S3 bucket is configured for them (BLOB_STORE), in which case each blob row names its object.
 *
 * A blob upload into the database is one transaction on one connection: chunks are inserted as they
 * arrive, the sha256 is known at the end, then the blob row and a pin are added and the transaction
 * commits. A crash or a refusal (too large) rolls it back, so no partial blob is ever visible.
 *
 * A blob upload into the bucket cannot be part of a transaction, so every object's key is in the
 * database before the object may exist: the writer takes a session advisory lock, records the key in
 * pending_objects, streams the object, and then, in one transaction on the same connection, replaces
 * that record by the blob row (or, when the same bytes were stored already, marks its object for
 * deletion). Deleting a blob moves its key to pending_objects in the deleting transaction; the object
 * goes after the commit. A sweep deletes the object of every pending key whose writer is gone (its
 * advisory lock is free: PostgreSQL releases it when the writer's connection ends, a kill -9
 * included), so a crash leaves neither a half blob nor an object nobody knows of.
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
const LOCK_NS_UPLOADS = 0x5d1f_0003;

interface ComparisonRow {
  id: string;
  title: string;
  description: string;
  created_at: string;
  updated_at: string;
  edit_token_hash: string | null;
  read_only: boolean;
  revision: string;
  viewed_at: string;
  keep: boolean;
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

interface SourcesRow {
  stage_id: string;
  comparison_id: string;
  module_path: string;
  revision: string;
  dirty: boolean | null;
  origin: string;
  files: number;
  bytes: string;
  sha256: string;
  size: string;
  created_at: string;
}
const SOURCES_COLUMNS = `x.stage_id, s.comparison_id, x.module_path, x.revision, x.dirty, x.origin, x.files, x.bytes, x.sha256, x.size, x.created_at`;

function toSources(r: SourcesRow): StageSources {
  return {
    comparisonId: r.comparison_id,
    stageId: r.stage_id,
    modulePath: r.module_path,
    revision: r.revision,
    dirty: r.dirty,
    origin: r.origin,
    files: Number(r.files),
    bytes: Number(r.bytes),
    sha256: r.sha256,
    size: Number(r.size),
    createdAt: iso(r.created_at),
  };
}

function toComparison(r: ComparisonRow): Comparison {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    readOnly: r.read_only,
    revision: Number(r.revision),
    keep: r.keep,
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

/**
 * A 32-bit advisory-lock key for an upload into the bucket. A collision with another live upload only
 * makes a sweep take the dead one's leftovers for alive until that other upload ends.
 */
function uploadLockKey(dataId: string): number {
  return createHash('sha256').update(dataId).digest().readInt32BE(0);
}

type Db = pg.PoolClient;

export interface PostgresStoreOptions {
  databaseUrl: string;
  /** Pool size. Each blob write holds one connection while it streams (from the local spool). */
  maxConnections?: number;
  /** Bound of the derived-result cache, bytes. */
  maxCacheBytes?: number;
  /** Where blob bytes go instead of blob_data (closed with the store). */
  objects?: S3Blobs;
  /** The clock of every time the store records and compares (tests pass a fake one). */
  clock?: () => number;
  /** Longest wait for a connection (a new one, or a free one of the pool), ms; default 5000. */
  connectTimeoutMs?: number;
  /**
   * Longest a statement may run (the server's statement_timeout) and a client waits for its answer
   * (a little longer, for a server that no longer answers at all), ms; default 30000.
   */
  statementTimeoutMs?: number;
}

export class PostgresStore implements Store {
  readonly dialect = 'postgres' as const;
  readonly blobLocation: 'database' | 's3';
  private readonly pool: pg.Pool;
  private readonly objects: S3Blobs | undefined;

  private constructor(
    pool: pg.Pool,
    private readonly maxCacheBytes: number,
    objects: S3Blobs | undefined,
    private readonly clock: () => number,
  ) {
    this.pool = pool;
    this.objects = objects;
    this.blobLocation = objects ? 's3' : 'database';
  }

  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const statementTimeoutMs = options.statementTimeoutMs ?? 30_000;
    const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    // Bounded waits: a database that is gone, or leaves the network mid-request, is an error (503 for
    // clients) within these times, never a request that does not end. Connecting (TCP and the start-up
    // exchange) has its own bound; waiting for a free connection of the pool is bounded like a
    // statement, since a burst of uploads may hold every connection for a while.
    class BoundedClient extends pg.Client {
      constructor(config?: pg.ClientConfig) {
        super({ ...config, connectionTimeoutMillis: connectTimeoutMs });
      }
    }
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.maxConnections ?? 20,
      Client: BoundedClient,
      connectionTimeoutMillis: Math.max(statementTimeoutMs, connectTimeoutMs),
      statement_timeout: statementTimeoutMs,
      query_timeout: statementTimeoutMs + 2000,
      keepAlive: true,
    });
    // An idle client losing its server must not crash the process; the next query reports the problem.
    pool.on('error', () => {});
    const store = new PostgresStore(
      pool,
      options.maxCacheBytes ?? Number.MAX_SAFE_INTEGER,
      options.objects,
      options.clock ?? Date.now,
    );
    try {
      await store.migrate();
    } catch (e) {
      await pool.end();
      options.objects?.close();
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
          this.clock(),
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

  /**
   * Deletes each blob that no artifact and no live pin references (cascading its chunks and cache
   * entries). The key of a blob's object goes to pending_objects in the same transaction and onto
   * `trash`: the caller deletes those objects once the transaction has committed (`purge`).
   */
  private async collect(db: Db, shas: Iterable<string>, now: number, trash: string[]): Promise<number> {
    let n = 0;
    for (const sha of [...new Set(shas)].sort()) {
      // sorted: two collectors never wait on each other in a cycle
      await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NS_BLOBS, blobLockKey(sha)]);
      const r = await db.query<{ object_key: string | null }>(
        `DELETE FROM blobs b WHERE b.sha256 = $1
        AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
        AND NOT EXISTS (SELECT 1 FROM stage_sources x WHERE x.sha256 = b.sha256)
        AND NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256 AND p.expires_at > $2)
        RETURNING b.object_key`,
        [sha, now],
      );
      n += r.rowCount ?? 0;
      for (const { object_key: key } of r.rows) {
        if (key === null) continue;
        await db.query(
          'INSERT INTO pending_objects (key, lock_key, created_at) VALUES ($1, NULL, $2) ON CONFLICT (key) DO NOTHING',
          [key, now],
        );
        trash.push(key);
      }
    }
    return n;
  }

  /**
   * Deletes the objects of blobs that are gone, then their pending records. A bucket (or database)
   * that cannot be reached now leaves the record for a later sweep: the blob is already gone for
   * every reader, so the change that removed it stands.
   */
  private async purge(keys: readonly string[]): Promise<number> {
    // Without the bucket configured, the records wait for a store that has it.
    if (!this.objects) return 0;
    let n = 0;
    for (const key of keys) {
      try {
        // Only complete objects are ever marked for deletion (a blob's, or a duplicate's).
        await this.objects.remove(key, { complete: true });
        await this.pool.query('DELETE FROM pending_objects WHERE key = $1 AND lock_key IS NULL', [key]);
        n++;
      } catch {
        // left for sweep
      }
    }
    return n;
  }

  // ---- comparisons ----

  async createComparison(input: NewComparison): Promise<CreatedComparison> {
    checkNewComparison(input);
    const id = input.id ?? newId();
    const readOnly = input.readOnly === true;
    const token = readOnly ? null : newEditToken();
    const now = this.clock();
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
    let viewedAt = 0;
    const tree = await this.tx(async (db) => {
      const c = (await db.query<ComparisonRow>('SELECT * FROM comparisons WHERE id = $1', [id])).rows[0];
      if (!c) return null;
      viewedAt = Number(c.viewed_at);
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
      const sources = new Map<string, StageSources>();
      for (const r of (
        await db.query<SourcesRow>(
          `SELECT ${SOURCES_COLUMNS} FROM stage_sources x JOIN stages s ON s.id = x.stage_id
        WHERE s.comparison_id = $1`,
          [id],
        )
      ).rows)
        sources.set(r.stage_id, toSources(r));
      return {
        comparison: toComparison(c),
        stages: stages.map((s) => {
          const src = sources.get(s.id);
          return { ...toStage(s), artifacts: byStage.get(s.id) ?? [], ...(src ? { sources: src } : {}) };
        }),
      };
    }, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const now = this.clock();
    if (tree && viewedAt < now - VIEW_TOUCH_MS)
      // Best effort and outside the snapshot: a view that cannot be recorded is still served.
      await this.pool
        .query('UPDATE comparisons SET viewed_at = $1 WHERE id = $2 AND viewed_at < $1', [now, id])
        .catch(() => undefined);
    return tree;
  }

  async recordView(id: string): Promise<void> {
    const now = this.clock();
    await this.pool
      .query('UPDATE comparisons SET viewed_at = $1 WHERE id = $2 AND viewed_at < $3', [now, id, now - VIEW_TOUCH_MS])
      .catch(() => undefined);
  }

  async updateComparison(
    id: string,
    patch: { title?: string; description?: string; keep?: boolean },
  ): Promise<Comparison> {
    checkText({ title: patch.title, description: patch.description });
    const now = this.clock();
    return this.tx(async (db) => {
      await this.bump(db, id, now);
      const r = await db.query<ComparisonRow>(
        `UPDATE comparisons SET title = COALESCE($2, title),
        description = COALESCE($3, description), keep = COALESCE($4, keep) WHERE id = $1 RETURNING *`,
        [id, patch.title ?? null, patch.description ?? null, patch.keep ?? null],
      );
      return toComparison(r.rows[0]!);
    });
  }

  async deleteComparison(id: string): Promise<boolean> {
    const trash: string[] = [];
    const gone = await this.tx((db) => this.deleteComparisonIn(db, id, this.clock(), trash));
    await this.purge(trash);
    return gone;
  }

  private async deleteComparisonIn(db: Db, id: string, now: number, trash: string[]): Promise<boolean> {
    const locked = await db.query('SELECT 1 FROM comparisons WHERE id = $1 FOR UPDATE', [id]);
    if (locked.rowCount === 0) return false;
    const shas = (
      await db.query<{ sha256: string }>(
        `SELECT DISTINCT a.sha256 FROM artifacts a JOIN stages s ON s.id = a.stage_id
        WHERE s.comparison_id = $1
        UNION SELECT x.sha256 FROM stage_sources x JOIN stages s ON s.id = x.stage_id WHERE s.comparison_id = $1`,
        [id],
      )
    ).rows.map((r) => r.sha256);
    await db.query('DELETE FROM comparisons WHERE id = $1', [id]);
    await this.collect(db, shas, now, trash);
    return true;
  }

  async expireComparisons(unusedSince: number): Promise<string[]> {
    const candidates = (
      await this.pool.query<{ id: string }>(
        `SELECT id FROM comparisons
        WHERE NOT keep AND NOT read_only AND GREATEST(updated_at, viewed_at) < $1 ORDER BY id`,
        [unusedSince],
      )
    ).rows.map((r) => r.id);
    const removed: string[] = [];
    for (const id of candidates) {
      const trash: string[] = [];
      // Re-checked under the row lock: a view or a change since the query above keeps it.
      const gone = await this.tx(async (db) => {
        const still = await db.query(
          `SELECT 1 FROM comparisons WHERE id = $1
          AND NOT keep AND NOT read_only AND GREATEST(updated_at, viewed_at) < $2 FOR UPDATE`,
          [id, unusedSince],
        );
        return still.rowCount !== 0 && (await this.deleteComparisonIn(db, id, this.clock(), trash));
      });
      await this.purge(trash);
      if (gone) removed.push(id);
    }
    return removed;
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
    const now = this.clock();
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
    const now = this.clock();
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
    const now = this.clock();
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
    const now = this.clock();
    const trash: string[] = [];
    await this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      await this.requireStage(db, comparisonId, stageId);
      const shas = (
        await db.query<{ sha256: string }>(
          'SELECT DISTINCT sha256 FROM artifacts WHERE stage_id = $1 UNION SELECT sha256 FROM stage_sources WHERE stage_id = $1',
          [stageId],
        )
      ).rows.map((r) => r.sha256);
      await db.query('DELETE FROM stages WHERE id = $1', [stageId]);
      await this.renumber(
        db,
        comparisonId,
        (await this.stageRows(db, comparisonId)).map((s) => s.id),
      );
      await this.collect(db, shas, now, trash);
    });
    await this.purge(trash);
  }

  async reorderStages(comparisonId: string, stageIds: string[]): Promise<Stage[]> {
    const now = this.clock();
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
    return this.objects ? this.putObject(this.objects, src, maxBytes) : this.putChunks(src, maxBytes);
  }

  /** A blob into the bucket (see the comment at the top for the protocol). */
  private async putObject(objects: S3Blobs, src: ByteSource, maxBytes: number): Promise<BlobRef> {
    const dataId = newId();
    const key = objects.keyFor(dataId);
    const lockKey = uploadLockKey(dataId);
    const db = await this.pool.connect();
    let broken: Error | undefined;
    const lost = (e: Error) => {
      broken = e;
    };
    db.on('error', lost);
    let recorded = false;
    try {
      await db.query('SELECT pg_advisory_lock($1, $2)', [LOCK_NS_UPLOADS, lockKey]);
      await db.query('INSERT INTO pending_objects (key, lock_key, created_at) VALUES ($1, $2, $3)', [
        key,
        lockKey,
        this.clock(),
      ]);
      recorded = true;
      const { sha256, size } = await objects.write(key, src, maxBytes);
      const now = this.clock();
      const pinId = newId();
      let duplicate = false;
      await db.query('BEGIN');
      try {
        await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NS_BLOBS, blobLockKey(sha256)]);
        await db.query('DELETE FROM pending_objects WHERE key = $1', [key]);
        const inserted = await db.query(
          `INSERT INTO blobs (sha256, size, data_id, object_key, created_at) VALUES ($1, $2, $3, $4, $5)
          ON CONFLICT (sha256) DO NOTHING`,
          [sha256, size, dataId, key, now],
        );
        if (inserted.rowCount === 0) {
          // The same bytes are stored already: this object goes (after the commit).
          duplicate = true;
          await db.query('INSERT INTO pending_objects (key, lock_key, created_at) VALUES ($1, NULL, $2)', [key, now]);
        }
        await db.query('INSERT INTO blob_pins (id, sha256, expires_at) VALUES ($1, $2, $3)', [
          pinId,
          sha256,
          now + PIN_TTL_MS,
        ]);
        await db.query('COMMIT');
      } catch (e) {
        await db.query('ROLLBACK').catch((re: Error) => {
          broken = re;
        });
        throw e;
      }
      recorded = false;
      if (duplicate) await this.purge([key]);
      return { sha256, size, pinId };
    } catch (e) {
      // Still holding the lock, so no sweep races this: the object (or what was sent of it) goes,
      // then its record. A bucket or database out of reach leaves the record for a sweep.
      if (recorded)
        await objects
          .remove(key)
          .then(() => this.pool.query('DELETE FROM pending_objects WHERE key = $1', [key]))
          .catch(() => undefined);
      throw e;
    } finally {
      await db.query('SELECT pg_advisory_unlock($1, $2)', [LOCK_NS_UPLOADS, lockKey]).catch((e: Error) => {
        broken ??= e; // a connection that cannot unlock is closed, which unlocks
      });
      db.removeListener('error', lost);
      db.release(broken);
    }
  }

  /** A blob into blob_data, in one transaction. */
  private async putChunks(src: ByteSource, maxBytes: number): Promise<BlobRef> {
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
      const now = this.clock();
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
    const now = this.clock();
    const trash: string[] = [];
    await this.tx(async (db) => {
      await db.query('DELETE FROM blob_pins WHERE id = $1', [ref.pinId]);
      await this.collect(db, [ref.sha256], now, trash);
    });
    await this.purge(trash);
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
    const now = this.clock();
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
    const now = this.clock();
    const trash: string[] = [];
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
      await this.collect(db, [row.sha256], now, trash);
    });
    await this.purge(trash);
  }

  async putStageSources(input: NewStageSources): Promise<StageSources> {
    checkSourceSet(input);
    const ref = input.blob;
    if (!SHA256_HEX.test(ref.sha256)) throw new StoreError('invalid', 'blob sha256 must be 64 lowercase hex digits');
    const entries = JSON.stringify(input.entries.map((e) => ({ path: e.path, size: e.size })));
    const bytes = input.entries.reduce((n, e) => n + e.size, 0);
    const now = this.clock();
    const trash: string[] = [];
    await this.tx(async (db) => {
      await this.bump(db, input.comparisonId, now);
      await this.requireStage(db, input.comparisonId, input.stageId);
      const blob = (
        await db.query<{ size: string }>('SELECT size FROM blobs WHERE sha256 = $1 FOR KEY SHARE', [ref.sha256])
      ).rows[0];
      if (!blob) throw new StoreError('blob-missing', `blob ${ref.sha256} is not stored (its pin expired?)`);
      const old = (
        await db.query<{ sha256: string }>('SELECT sha256 FROM stage_sources WHERE stage_id = $1 FOR UPDATE', [
          input.stageId,
        ])
      ).rows[0];
      await db.query(
        `INSERT INTO stage_sources (stage_id, module_path, revision, dirty, origin, files, bytes, entries, sha256, size, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10, $11)
        ON CONFLICT (stage_id) DO UPDATE SET module_path = excluded.module_path, revision = excluded.revision,
          dirty = excluded.dirty, origin = excluded.origin, files = excluded.files, bytes = excluded.bytes,
          entries = excluded.entries, sha256 = excluded.sha256, size = excluded.size, created_at = excluded.created_at`,
        [
          input.stageId,
          input.modulePath,
          input.revision,
          input.dirty,
          input.origin,
          input.entries.length,
          bytes,
          entries,
          ref.sha256,
          blob.size,
          now,
        ],
      );
      await db.query('DELETE FROM blob_pins WHERE id = $1', [ref.pinId]);
      if (old && old.sha256 !== ref.sha256) await this.collect(db, [old.sha256], now, trash);
    });
    await this.purge(trash);
    const { entries: _entries, ...stored } = (await this.getStageSources(input.comparisonId, input.stageId))!;
    return stored;
  }

  async getStageSources(comparisonId: string, stageId: string): Promise<StageSourcesWithFiles | null> {
    const row = (
      await this.pool.query<SourcesRow & { entries: StageSourcesWithFiles['entries'] }>(
        `SELECT ${SOURCES_COLUMNS}, x.entries FROM stage_sources x JOIN stages s ON s.id = x.stage_id
      WHERE x.stage_id = $1 AND s.comparison_id = $2`,
        [stageId, comparisonId],
      )
    ).rows[0];
    if (!row) return null;
    return { ...toSources(row), entries: row.entries };
  }

  async deleteStageSources(comparisonId: string, stageId: string): Promise<boolean> {
    const now = this.clock();
    const trash: string[] = [];
    const gone = await this.tx(async (db) => {
      await this.bump(db, comparisonId, now); // the comparison's row first, as every change locks it
      await this.requireStage(db, comparisonId, stageId);
      const old = (
        await db.query<{ sha256: string }>('DELETE FROM stage_sources WHERE stage_id = $1 RETURNING sha256', [stageId])
      ).rows[0];
      if (!old) return false;
      await this.collect(db, [old.sha256], now, trash);
      return true;
    });
    await this.purge(trash);
    return gone;
  }

  async hasBlob(sha256: string): Promise<boolean> {
    return ((await this.pool.query('SELECT 1 FROM blobs WHERE sha256 = $1', [sha256])).rowCount ?? 0) > 0;
  }

  async storedBytes(): Promise<number> {
    const r = await this.pool.query<{ n: string }>('SELECT COALESCE(SUM(size), 0) AS n FROM blobs');
    return Number(r.rows[0]!.n);
  }

  /** The bucket that holds a blob's object; throws when this store was opened without one. */
  private bucketFor(sha256: string): S3Blobs {
    if (!this.objects)
      throw new StoreError('blob-missing', `blob ${sha256} is in an S3 bucket, and BLOB_STORE is not set`);
    return this.objects;
  }

  async readBlob(sha256: string): Promise<Buffer | null> {
    if (!SHA256_HEX.test(sha256)) return null;
    // One statement, one snapshot: either the whole blob or none of it.
    const r = await this.pool.query<{ size: string; object_key: string | null; data: Buffer | null }>(
      `SELECT b.size, b.object_key, d.data FROM blobs b
      LEFT JOIN blob_data d ON d.data_id = b.data_id WHERE b.sha256 = $1 ORDER BY d.seq`,
      [sha256],
    );
    const head = r.rows[0];
    if (!head) return null;
    let out: Buffer | null;
    if (head.object_key !== null) {
      out = await this.bucketFor(sha256).read(head.object_key);
      if (!out) throw new StoreError('blob-missing', `the object of blob ${sha256} is missing from the bucket`);
    } else out = Buffer.concat(r.rows.flatMap((row) => (row.data ? [row.data] : [])));
    if (out.length !== Number(head.size)) throw new StoreError('blob-missing', `blob ${sha256} is incomplete`);
    return out;
  }

  async openBlobStream(sha256: string): Promise<Readable | null> {
    if (!SHA256_HEX.test(sha256)) return null;
    const head = (
      await this.pool.query<{ data_id: string; size: string; object_key: string | null }>(
        'SELECT data_id, size, object_key FROM blobs WHERE sha256 = $1',
        [sha256],
      )
    ).rows[0];
    if (!head) return null;
    if (head.object_key !== null) {
      // The GET is under way before this returns, so the reader gets the object as it was now.
      const body = await this.bucketFor(sha256).open(head.object_key);
      if (!body) throw new StoreError('blob-missing', `the object of blob ${sha256} is missing from the bucket`);
      return body;
    }
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
    const now = this.clock();
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
        [c.scope, k.key, k.modelVersion, c.comparisonId, c.sha256, c.revision, bytes, this.clock(), bytes.length],
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
    const now = options.now ?? this.clock();
    const report: SweepReport = { expiredPins: 0, orphanBlobs: 0, tempFiles: 0, staleCacheEntries: 0 };
    const trash: string[] = [];
    await this.tx(async (db) => {
      report.expiredPins = (await db.query('DELETE FROM blob_pins WHERE expires_at <= $1', [now])).rowCount ?? 0;
      const orphans = (
        await db.query<{ sha256: string }>(`SELECT sha256 FROM blobs b
        WHERE NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
          AND NOT EXISTS (SELECT 1 FROM stage_sources x WHERE x.sha256 = b.sha256)
          AND NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256)`)
      ).rows.map((r) => r.sha256);
      report.orphanBlobs = await this.collect(db, orphans, now, trash);
      report.staleCacheEntries =
        (
          await db.query(`DELETE FROM cache e USING comparisons p
        WHERE e.comparison_id = p.id AND e.revision < p.revision`)
        ).rowCount ?? 0;
    });
    await this.purge(trash);
    report.tempFiles = await this.sweepPendingObjects();
    return report;
  }

  /**
   * Deletes the object of every pending key whose writer is gone, aborting its multipart upload, and
   * then the key. A writer is gone when its advisory lock is free: taken here, with the record
   * re-read under it, since a writer that just finished deleted its record before unlocking. A
   * bucket out of reach stops the sweep here; what is left waits for the next one.
   */
  private async sweepPendingObjects(): Promise<number> {
    const objects = this.objects;
    if (!objects) return 0;
    const rows = (
      await this.pool.query<{ key: string; lock_key: number | null }>(
        'SELECT key, lock_key FROM pending_objects ORDER BY created_at',
      )
    ).rows;
    let n = 0;
    try {
      for (const row of rows) {
        if (row.lock_key === null) {
          await objects.remove(row.key, { complete: true });
          await this.pool.query('DELETE FROM pending_objects WHERE key = $1 AND lock_key IS NULL', [row.key]);
          n++;
          continue;
        }
        const removed = await this.tx(async (db) => {
          const free = (
            await db.query<{ free: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS free', [
              LOCK_NS_UPLOADS,
              row.lock_key,
            ])
          ).rows[0]!.free;
          if (!free) return false; // a live writer
          const still = await db.query('DELETE FROM pending_objects WHERE key = $1 AND lock_key = $2', [
            row.key,
            row.lock_key,
          ]);
          if (still.rowCount === 0) return false; // finished meanwhile
          // The record goes only if the object does (an error here rolls the delete back).
          await objects.remove(row.key);
          return true;
        });
        if (removed) n++;
      }
    } catch (e) {
      if (!(e instanceof BlobStoreUnavailableError)) throw e;
    }
    return n;
  }

  async stats(options: StatsOptions = {}): Promise<StoreStats> {
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
      (SELECT COUNT(DISTINCT data_id) FROM blob_data)
        + (SELECT COUNT(*) FROM blobs WHERE size = 0 AND object_key IS NULL) AS "blobObjects",
      (SELECT COUNT(*) FROM pending_objects) AS "pendingObjects"`);
    const row = r.rows[0]!;
    let blobObjects: number | null = Number(row.blobObjects);
    if (this.objects) blobObjects = options.countObjects === false ? null : blobObjects + (await this.objects.count());
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
      blobObjects,
      tempFiles: Number(row.pendingObjects),
    };
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
    await this.objects?.check();
  }

  private closed = false;

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.objects?.close();
    await this.pool.end();
  }
}
