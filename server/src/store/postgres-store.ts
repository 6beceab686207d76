import pg from 'pg';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { checkMaxBytes, loadMigrations, pieces } from './common.ts';
import { BlobStoreUnavailableError, StoreError } from './errors.ts';
import type { S3Blobs } from './s3-blobs.ts';
import { newId, SHA256_HEX } from './secrets.ts';
import { type Conn, type SqlDialect, SqlStore } from './sql-store.ts';
import { PIN_TTL_MS, type BlobRef, type ByteSource, type StatsOptions } from './types.ts';

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
 * The PostgreSQL dialect of the SQL core (sql-store.ts), whose rules hold here too. Besides them:
 * - creating and garbage-collecting one blob both take a transaction advisory lock derived from its
 *   sha256, so "deduplicate onto an existing blob" and "delete that blob" cannot interleave;
 * - a blob is referenced first by a pin and then by an artifact, and addArtifact swaps one for the
 *   other in one transaction, so garbage collection never sees it unreferenced in between.
 */

const CHUNK_BYTES = 1 << 20;
const LOCK_NS_MIGRATIONS = 0x5d1f_0001;
const LOCK_NS_BLOBS = 0x5d1f_0002;
const LOCK_NS_UPLOADS = 0x5d1f_0003;

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

const SQL: SqlDialect = {
  forUpdate: 'FOR UPDATE',
  // The blob cannot be deleted between this check and the insert that references it.
  forKeyShare: 'FOR KEY SHARE',
  artifactOrder: 'a.seq',
  appendCapture: 'UPDATE stages SET captures = captures || jsonb_build_array($2::jsonb) WHERE id = $1 RETURNING *',
  blobReturning: 'object_key',
};

/** A client (or the pool) as the core's connection. */
function asConn(db: pg.PoolClient | pg.Pool): Conn {
  return {
    async query<R>(sql: string, params: readonly unknown[] = []) {
      const r = await db.query(sql, params as unknown[]);
      return { rows: r.rows as R[], count: r.rowCount ?? 0 };
    },
  };
}

export class PostgresStore extends SqlStore {
  readonly dialect = 'postgres' as const;
  readonly blobLocation: 'database' | 's3';
  protected readonly sql = SQL;
  protected readonly conn: Conn;
  private readonly pool: pg.Pool;
  private readonly objects: S3Blobs | undefined;

  private constructor(pool: pg.Pool, maxCacheBytes: number, objects: S3Blobs | undefined, clock: () => number) {
    super(clock, maxCacheBytes);
    this.pool = pool;
    this.conn = asConn(pool);
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

  protected async tx<T>(fn: (db: Conn) => Promise<T>, mode: 'write' | 'snapshot' = 'write'): Promise<T> {
    return this.txOn(
      (db) => fn(asConn(db)),
      mode === 'write' ? 'BEGIN' : 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
    );
  }

  private async txOn<T>(fn: (db: Db) => Promise<T>, begin: string): Promise<T> {
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

  protected json(v: unknown): unknown {
    return v;
  }

  protected isUniqueViolation(e: unknown): boolean {
    return (e as { code?: string }).code === '23505';
  }

  protected isForeignKeyViolation(e: unknown): boolean {
    return (e as { code?: string }).code === '23503';
  }

  protected async lockBlob(db: Conn, sha256: string): Promise<void> {
    await db.query('SELECT pg_advisory_xact_lock($1, $2)', [LOCK_NS_BLOBS, blobLockKey(sha256)]);
  }

  /**
   * A deleted blob's chunks and cache entries went with it (cascade); the key of its object goes to
   * pending_objects in the same transaction and onto `trash`, for `purge` after the commit.
   */
  protected async blobDeleted(db: Conn, objectKey: string | null, now: number, trash: string[]): Promise<void> {
    if (objectKey === null) return;
    await db.query(
      'INSERT INTO pending_objects (key, lock_key, created_at) VALUES ($1, NULL, $2) ON CONFLICT (key) DO NOTHING',
      [objectKey, now],
    );
    trash.push(objectKey);
  }

  /**
   * Deletes the objects of blobs that are gone, then their pending records. A bucket (or database)
   * that cannot be reached now leaves the record for a later sweep: the blob is already gone for
   * every reader, so the change that removed it stands.
   */
  protected async purge(keys: readonly string[]): Promise<void> {
    // Without the bucket configured, the records wait for a store that has it.
    if (!this.objects) return;
    for (const key of keys) {
      try {
        // Only complete objects are ever marked for deletion (a blob's, or a duplicate's).
        await this.objects.remove(key, { complete: true });
        await this.pool.query('DELETE FROM pending_objects WHERE key = $1 AND lock_key IS NULL', [key]);
      } catch {
        // left for sweep
      }
    }
  }

  // ---- blobs ----

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
    return this.txOn(async (db) => {
      const dataId = newId();
      const hash = createHash('sha256');
      let size = 0;
      let seq = 0;
      for await (const { piece } of pieces(src, maxBytes, CHUNK_BYTES, hash)) {
        if (piece.length === 0) continue;
        await db.query('INSERT INTO blob_data (data_id, seq, data) VALUES ($1, $2, $3)', [dataId, seq++, piece]);
        size += piece.length;
      }
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
    }, 'BEGIN');
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
  // ---- maintenance ----

  protected async sweepBytes(): Promise<number> {
    return this.sweepPendingObjects();
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
        const removed = await this.txOn(async (db) => {
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
        }, 'BEGIN');
        if (removed) n++;
      }
    } catch (e) {
      if (!(e instanceof BlobStoreUnavailableError)) throw e;
    }
    return n;
  }

  protected async byteCounts(options: StatsOptions): Promise<{ blobObjects: number | null; tempFiles: number }> {
    const row = (
      await this.pool.query<{ chunked: string; pending: string }>(`SELECT
      (SELECT COUNT(DISTINCT data_id) FROM blob_data)
        + (SELECT COUNT(*) FROM blobs WHERE size = 0 AND object_key IS NULL) AS chunked,
      (SELECT COUNT(*) FROM pending_objects) AS pending`)
    ).rows[0]!;
    let blobObjects: number | null = Number(row.chunked);
    if (this.objects) blobObjects = options.countObjects === false ? null : blobObjects + (await this.objects.count());
    return { blobObjects, tempFiles: Number(row.pending) };
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
