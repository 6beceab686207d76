import type { Readable } from 'node:stream';
import {
  CACHE_EVICT_SQL,
  CACHE_TOUCH_MS,
  captureText,
  checkKind,
  checkNewComparison,
  checkReorder,
  checkSourceSet,
  checkStageCapture,
  checkText,
  iso,
  jsonText,
} from './common.ts';
import { StoreError } from './errors.ts';
import { editTokenMatches, hashEditToken, newEditToken, newId, SHA256_HEX } from './secrets.ts';
import {
  VIEW_TOUCH_MS,
  type Artifact,
  type BlobLocation,
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
import { scopeColumns } from './common.ts';

/*
 * The SQL both databases run, written once. A dialect (sqlite-store.ts, postgres-store.ts) supplies a
 * connection that takes `$1`-numbered parameters and answers rows and a count of changed rows, its
 * transactions, the few fragments where the two languages differ (`SqlDialect`), and the blob bytes
 * (files, chunks or bucket objects), which share nothing between the two.
 *
 * Concurrency rules, the same in both:
 * - every change to a comparison's content starts by bumping its revision, which locks the comparison
 *   (PostgreSQL: its row; SQLite: every write holds the database's one write lock): changes to one
 *   comparison are serialised, and positions stay dense;
 * - a blob is referenced first by a pin and then by an artifact (or a source set), and the swap is one
 *   transaction, so garbage collection never sees it unreferenced in between;
 * - what a transaction removes outside the database (a bucket's objects) goes after its commit.
 */

/** Rows as a driver answers them: numbers may be strings (PostgreSQL's bigint), booleans may be 0/1. */
export type Num = number | string;
export type Bool = boolean | number;

/** One connection, or the pool outside a transaction. Parameters are `$1`, `$2`, … in the SQL text. */
export interface Conn {
  query<R>(sql: string, params?: readonly unknown[]): Promise<{ rows: R[]; count: number }>;
}

/** Where the two SQL languages differ. */
export interface SqlDialect {
  /** A row lock on what a SELECT reads, to the end of the transaction (SQLite: '', its writes are serial). */
  forUpdate: string;
  /** A lock that keeps the row from being deleted, not from being read (SQLite: ''). */
  forKeyShare: string;
  /** Upload order of artifacts (`a.` is the artifacts table). */
  artifactOrder: string;
  /** Appends the JSON text `$2` to the `captures` array of stage `$1`. */
  appendCapture: string;
  /** The column `collect` reads back from a deleted blob row. */
  blobReturning: string;
}

export interface ComparisonRow {
  id: string;
  title: string;
  description: string;
  created_at: Num;
  updated_at: Num;
  edit_token_hash: string | null;
  read_only: Bool;
  revision: Num;
  viewed_at: Num;
  keep: Bool;
}
interface StageRow {
  id: string;
  comparison_id: string;
  position: Num;
  name: string;
  note: string;
  created_at: Num;
  captures: unknown;
}
interface ArtifactRow {
  id: string;
  stage_id: string;
  comparison_id: string;
  kind: string;
  format: string;
  filename: string;
  size: Num;
  sha256: string;
  summary: unknown;
  created_at: Num;
}
interface SourcesRow {
  stage_id: string;
  comparison_id: string;
  module_path: string;
  revision: string;
  dirty: Bool | null;
  origin: string;
  files: Num;
  bytes: Num;
  sha256: string;
  size: Num;
  created_at: Num;
}

const ARTIFACT_COLUMNS = `a.id, a.stage_id, s.comparison_id, a.kind, a.format, a.filename, a.size, a.sha256, a.summary, a.created_at`;
const SOURCES_COLUMNS = `x.stage_id, s.comparison_id, x.module_path, x.revision, x.dirty, x.origin, x.files, x.bytes, x.sha256, x.size, x.created_at`;
/** A comparison that retention may remove: neither kept nor read-only, unused since `$1`. */
const EXPIRED = `NOT keep AND NOT read_only
  AND CASE WHEN updated_at > viewed_at THEN updated_at ELSE viewed_at END < $1`;

const bool = (v: Bool): boolean => v === true || v === 1;

export abstract class SqlStore implements Store {
  abstract readonly dialect: 'sqlite' | 'postgres';
  abstract readonly blobLocation: BlobLocation;
  /** Statements outside a transaction. */
  protected abstract readonly conn: Conn;
  protected abstract readonly sql: SqlDialect;

  constructor(
    protected readonly clock: () => number,
    protected readonly maxCacheBytes: number,
  ) {}

  /**
   * Runs `fn` in one transaction: `write` takes the write locks it needs (SQLite: IMMEDIATE), `snapshot`
   * reads one consistent state.
   */
  protected abstract tx<T>(fn: (db: Conn) => Promise<T>, mode?: 'write' | 'snapshot'): Promise<T>;
  /** A JSON column's value as read (SQLite answers its text). */
  protected abstract json(v: unknown): unknown;
  protected abstract isUniqueViolation(e: unknown): boolean;
  protected abstract isForeignKeyViolation(e: unknown): boolean;
  /** Serialises the creation and deletion of one blob (PostgreSQL: an advisory lock). */
  protected abstract lockBlob(db: Conn, sha256: string): Promise<void>;
  /** A blob row is gone in this transaction: its bytes go now (a file) or onto `trash` (after the commit). */
  protected abstract blobDeleted(db: Conn, returned: string | null, now: number, trash: string[]): Promise<void>;
  /** Removes what `blobDeleted` put on `trash`, once the transaction has committed. */
  protected abstract purge(trash: readonly string[]): Promise<void>;
  /** Sweeps what only the dialect knows of (temp files, bucket objects); returns how many went. */
  protected abstract sweepBytes(now: number): Promise<number>;
  /** Blob payloads physically present, and temp files or pending objects (see `StoreStats`). */
  protected abstract byteCounts(options: StatsOptions): Promise<{ blobObjects: number | null; tempFiles: number }>;

  abstract putBlob(src: ByteSource, maxBytes: number): Promise<BlobRef>;
  abstract readBlob(sha256: string): Promise<Buffer | null>;
  abstract openBlobStream(sha256: string): Promise<Readable | null>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;

  // ---- rows ----

  private toComparison(r: ComparisonRow): Comparison {
    return {
      id: r.id,
      title: r.title,
      description: r.description,
      createdAt: iso(r.created_at),
      updatedAt: iso(r.updated_at),
      readOnly: bool(r.read_only),
      revision: Number(r.revision),
      keep: bool(r.keep),
    };
  }
  private toStage(r: StageRow): Stage {
    return {
      id: r.id,
      comparisonId: r.comparison_id,
      position: Number(r.position),
      name: r.name,
      note: r.note,
      createdAt: iso(r.created_at),
      captures: this.json(r.captures) as unknown[],
    };
  }
  private toArtifact(r: ArtifactRow): Artifact {
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
      summary: this.json(r.summary),
      createdAt: iso(r.created_at),
    };
  }
  private toSources(r: SourcesRow): StageSources {
    return {
      comparisonId: r.comparison_id,
      stageId: r.stage_id,
      modulePath: r.module_path,
      revision: r.revision,
      dirty: r.dirty === null ? null : bool(r.dirty),
      origin: r.origin,
      files: Number(r.files),
      bytes: Number(r.bytes),
      sha256: r.sha256,
      size: Number(r.size),
      createdAt: iso(r.created_at),
    };
  }

  private async one<R>(db: Conn, sql: string, params: readonly unknown[] = []): Promise<R | undefined> {
    return (await db.query<R>(sql, params)).rows[0];
  }

  /** Bumps the revision, locking the comparison for the rest of the transaction; throws not-found. */
  private async bump(db: Conn, comparisonId: string, now: number): Promise<void> {
    const r = await db.query('UPDATE comparisons SET revision = revision + 1, updated_at = $1 WHERE id = $2', [
      now,
      comparisonId,
    ]);
    if (r.count === 0) throw new StoreError('not-found', `no comparison ${comparisonId}`);
  }

  protected async requireStage(db: Conn, comparisonId: string, stageId: string, lock = ''): Promise<StageRow> {
    const row = await this.one<StageRow>(db, `SELECT * FROM stages WHERE id = $1 AND comparison_id = $2 ${lock}`, [
      stageId,
      comparisonId,
    ]);
    if (!row) throw new StoreError('not-found', `no stage ${stageId} in comparison ${comparisonId}`);
    return row;
  }

  private async stageRows(db: Conn, comparisonId: string): Promise<StageRow[]> {
    return (await db.query<StageRow>('SELECT * FROM stages WHERE comparison_id = $1 ORDER BY position', [comparisonId]))
      .rows;
  }

  /** Positions 0..n-1 in the given order, in two steps so UNIQUE(comparison, position) holds throughout. */
  private async renumber(db: Conn, comparisonId: string, ids: readonly string[]): Promise<void> {
    await db.query('UPDATE stages SET position = -1 - position WHERE comparison_id = $1', [comparisonId]);
    for (let i = 0; i < ids.length; i++) await db.query('UPDATE stages SET position = $1 WHERE id = $2', [i, ids[i]]);
  }

  /**
   * Deletes each blob that no artifact, no source set and no live pin references. Sorted, so two
   * collectors never wait on each other in a cycle.
   */
  protected async collect(db: Conn, shas: Iterable<string>, now: number, trash: string[]): Promise<number> {
    let n = 0;
    for (const sha of [...new Set(shas)].sort()) {
      await this.lockBlob(db, sha);
      const r = await db.query<Record<string, string | null>>(
        `DELETE FROM blobs WHERE sha256 = $1
        AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = $1)
        AND NOT EXISTS (SELECT 1 FROM stage_sources x WHERE x.sha256 = $1)
        AND NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = $1 AND p.expires_at > $2)
        RETURNING ${this.sql.blobReturning} AS gone`,
        [sha, now],
      );
      for (const row of r.rows) {
        await this.blobDeleted(db, row.gone ?? null, now, trash);
        n++;
      }
    }
    return n;
  }

  /** A transaction that may delete blobs, their bytes removed after the commit. */
  private async txCollecting<T>(fn: (db: Conn, trash: string[]) => Promise<T>): Promise<T> {
    const trash: string[] = [];
    const out = await this.tx((db) => fn(db, trash));
    await this.purge(trash);
    return out;
  }

  // ---- comparisons ----

  async createComparison(input: NewComparison): Promise<CreatedComparison> {
    checkNewComparison(input);
    const id = input.id ?? newId();
    const readOnly = input.readOnly === true;
    const token = readOnly ? null : newEditToken();
    const now = this.clock();
    try {
      const row = await this.one<ComparisonRow>(
        this.conn,
        `INSERT INTO comparisons (id, title, description, created_at, updated_at, edit_token_hash, read_only)
        VALUES ($1, $2, $3, $4, $4, $5, $6) RETURNING *`,
        [id, input.title, input.description ?? '', now, token === null ? null : hashEditToken(token), readOnly],
      );
      return { comparison: this.toComparison(row!), editToken: token };
    } catch (e) {
      if (this.isUniqueViolation(e)) throw new StoreError('conflict', `comparison ${id} already exists`);
      throw e;
    }
  }

  async getComparison(id: string): Promise<Comparison | null> {
    const row = await this.one<ComparisonRow>(this.conn, 'SELECT * FROM comparisons WHERE id = $1', [id]);
    return row ? this.toComparison(row) : null;
  }

  async getComparisonTree(id: string): Promise<ComparisonTree | null> {
    let viewedAt = 0;
    const tree = await this.tx(async (db) => {
      const c = await this.one<ComparisonRow>(db, 'SELECT * FROM comparisons WHERE id = $1', [id]);
      if (!c) return null;
      viewedAt = Number(c.viewed_at);
      const stages = await this.stageRows(db, id);
      const arts = await db.query<ArtifactRow>(
        `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
        WHERE s.comparison_id = $1 ORDER BY ${this.sql.artifactOrder}`,
        [id],
      );
      const byStage = new Map<string, Artifact[]>();
      for (const a of arts.rows) {
        const list = byStage.get(a.stage_id) ?? [];
        list.push(this.toArtifact(a));
        byStage.set(a.stage_id, list);
      }
      const sources = new Map<string, StageSources>();
      const srcRows = await db.query<SourcesRow>(
        `SELECT ${SOURCES_COLUMNS} FROM stage_sources x JOIN stages s ON s.id = x.stage_id WHERE s.comparison_id = $1`,
        [id],
      );
      for (const r of srcRows.rows) sources.set(r.stage_id, this.toSources(r));
      return {
        comparison: this.toComparison(c),
        stages: stages.map((s) => {
          const src = sources.get(s.id);
          return { ...this.toStage(s), artifacts: byStage.get(s.id) ?? [], ...(src ? { sources: src } : {}) };
        }),
      };
    }, 'snapshot');
    const now = this.clock();
    if (tree && viewedAt < now - VIEW_TOUCH_MS)
      // Best effort and outside the snapshot: a view that cannot be recorded (the database busy) is still served.
      await this.conn
        .query('UPDATE comparisons SET viewed_at = $1 WHERE id = $2 AND viewed_at < $1', [now, id])
        .catch(() => undefined);
    return tree;
  }

  async recordView(id: string): Promise<void> {
    const now = this.clock();
    // Best effort, as in getComparisonTree: a view that cannot be recorded is still served.
    await this.conn
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
      const row = await this.one<ComparisonRow>(
        db,
        `UPDATE comparisons SET title = COALESCE($2, title),
        description = COALESCE($3, description), keep = COALESCE($4, keep) WHERE id = $1 RETURNING *`,
        [id, patch.title ?? null, patch.description ?? null, patch.keep ?? null],
      );
      return this.toComparison(row!);
    });
  }

  async deleteComparison(id: string): Promise<boolean> {
    return this.txCollecting((db, trash) => this.deleteComparisonIn(db, id, this.clock(), trash));
  }

  private async deleteComparisonIn(db: Conn, id: string, now: number, trash: string[]): Promise<boolean> {
    const locked = await db.query(`SELECT 1 FROM comparisons WHERE id = $1 ${this.sql.forUpdate}`, [id]);
    if (locked.count === 0) return false;
    const shas = (
      await db.query<{ sha256: string }>(
        `SELECT DISTINCT a.sha256 FROM artifacts a JOIN stages s ON s.id = a.stage_id WHERE s.comparison_id = $1
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
      await this.conn.query<{ id: string }>(`SELECT id FROM comparisons WHERE ${EXPIRED} ORDER BY id`, [unusedSince])
    ).rows.map((r) => r.id);
    const removed: string[] = [];
    for (const id of candidates) {
      // One transaction each, re-checked under the lock: a view or a change since the query above keeps it.
      const gone = await this.txCollecting(async (db, trash) => {
        const still = await db.query(`SELECT 1 FROM comparisons WHERE ${EXPIRED} AND id = $2 ${this.sql.forUpdate}`, [
          unusedSince,
          id,
        ]);
        return still.count !== 0 && (await this.deleteComparisonIn(db, id, this.clock(), trash));
      });
      if (gone) removed.push(id);
    }
    return removed;
  }

  async verifyEditToken(id: string, token: string): Promise<boolean> {
    const row = await this.one<{ edit_token_hash: string | null; read_only: Bool }>(
      this.conn,
      'SELECT edit_token_hash, read_only FROM comparisons WHERE id = $1',
      [id],
    );
    if (!row || bool(row.read_only)) return false;
    return editTokenMatches(row.edit_token_hash, token);
  }

  // ---- stages ----

  async createStage(comparisonId: string, input: { name: string; note?: string }): Promise<Stage> {
    checkText(input);
    const now = this.clock();
    return this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      const { next } = (await this.one<{ next: Num }>(
        db,
        'SELECT COALESCE(MAX(position) + 1, 0) AS next FROM stages WHERE comparison_id = $1',
        [comparisonId],
      ))!;
      const row = await this.one<StageRow>(
        db,
        `INSERT INTO stages (id, comparison_id, position, name, note, created_at)
        VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
        [newId(), comparisonId, Number(next), input.name, input.note ?? '', now],
      );
      return this.toStage(row!);
    });
  }

  async getStage(comparisonId: string, stageId: string): Promise<Stage | null> {
    const row = await this.one<StageRow>(this.conn, 'SELECT * FROM stages WHERE id = $1 AND comparison_id = $2', [
      stageId,
      comparisonId,
    ]);
    return row ? this.toStage(row) : null;
  }

  async listStages(comparisonId: string): Promise<Stage[]> {
    return (await this.stageRows(this.conn, comparisonId)).map((r) => this.toStage(r));
  }

  async updateStage(comparisonId: string, stageId: string, patch: { name?: string; note?: string }): Promise<Stage> {
    checkText(patch);
    const now = this.clock();
    return this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      await this.requireStage(db, comparisonId, stageId);
      const row = await this.one<StageRow>(
        db,
        'UPDATE stages SET name = COALESCE($2, name), note = COALESCE($3, note) WHERE id = $1 RETURNING *',
        [stageId, patch.name ?? null, patch.note ?? null],
      );
      return this.toStage(row!);
    });
  }

  async addStageCapture(
    comparisonId: string,
    stageId: string,
    record: unknown,
    options: { maxStageBytes?: number } = {},
  ): Promise<Stage> {
    const text = captureText(record);
    const now = this.clock();
    return this.tx(async (db) => {
      await this.bump(db, comparisonId, now);
      // The stage's row read under this transaction's lock (PostgreSQL: FOR UPDATE, read after the lock
      // is ours; SQLite: the write lock), so a concurrent append is either seen whole here or waits.
      const st = await this.requireStage(db, comparisonId, stageId, this.sql.forUpdate);
      checkStageCapture(this.json(st.captures) as unknown[], text, options.maxStageBytes);
      const row = await this.one<StageRow>(db, this.sql.appendCapture, [stageId, text]);
      return this.toStage(row!);
    });
  }

  async deleteStage(comparisonId: string, stageId: string): Promise<void> {
    const now = this.clock();
    await this.txCollecting(async (db, trash) => {
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
      return (await this.stageRows(db, comparisonId)).map((r) => this.toStage(r));
    });
  }

  // ---- artifacts and sources ----

  async releaseBlob(ref: BlobRef): Promise<void> {
    const now = this.clock();
    await this.txCollecting(async (db, trash) => {
      await db.query('DELETE FROM blob_pins WHERE id = $1', [ref.pinId]);
      await this.collect(db, [ref.sha256], now, trash);
    });
  }

  /** The size of a stored blob, which stays stored to the end of the transaction; throws blob-missing. */
  private async requireBlob(db: Conn, sha256: string): Promise<number> {
    const blob = await this.one<{ size: Num }>(db, `SELECT size FROM blobs WHERE sha256 = $1 ${this.sql.forKeyShare}`, [
      sha256,
    ]);
    if (!blob) throw new StoreError('blob-missing', `blob ${sha256} is not stored (its pin expired?)`);
    return Number(blob.size);
  }

  async addArtifact(input: NewArtifact): Promise<Artifact> {
    checkKind(input.kind);
    const summary = jsonText(input.summary);
    checkText({ filename: input.filename, format: input.format });
    let ref: BlobRef;
    if ('src' in input) {
      await this.requireStage(this.conn, input.comparisonId, input.stageId); // fail before streaming
      ref = await this.putBlob(input.src, input.maxBytes);
    } else {
      ref = input.blob;
      if (!SHA256_HEX.test(ref.sha256)) throw new StoreError('invalid', 'blob sha256 must be 64 lowercase hex digits');
    }
    const now = this.clock();
    const id = newId();
    try {
      await this.tx(async (db) => {
        await this.bump(db, input.comparisonId, now);
        await this.requireStage(db, input.comparisonId, input.stageId);
        const size = await this.requireBlob(db, ref.sha256);
        await db.query(
          `INSERT INTO artifacts (id, stage_id, kind, format, filename, size, sha256, summary, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [id, input.stageId, input.kind, input.format, input.filename, size, ref.sha256, summary, now],
        );
        await db.query('DELETE FROM blob_pins WHERE id = $1', [ref.pinId]);
      });
    } catch (e) {
      if ('src' in input) await this.releaseBlob(ref).catch(() => {});
      throw e;
    }
    return (await this.getArtifact(id))!;
  }

  async getArtifact(id: string): Promise<Artifact | null> {
    const row = await this.one<ArtifactRow>(
      this.conn,
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id WHERE a.id = $1`,
      [id],
    );
    return row ? this.toArtifact(row) : null;
  }

  async listArtifacts(comparisonId: string, stageId: string): Promise<Artifact[]> {
    const r = await this.conn.query<ArtifactRow>(
      `SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
      WHERE a.stage_id = $1 AND s.comparison_id = $2 ORDER BY ${this.sql.artifactOrder}`,
      [stageId, comparisonId],
    );
    return r.rows.map((row) => this.toArtifact(row));
  }

  async deleteArtifact(comparisonId: string, artifactId: string): Promise<void> {
    const now = this.clock();
    await this.txCollecting(async (db, trash) => {
      await this.bump(db, comparisonId, now);
      const row = await this.one<{ sha256: string }>(
        db,
        `SELECT a.sha256 FROM artifacts a JOIN stages s ON s.id = a.stage_id WHERE a.id = $1 AND s.comparison_id = $2`,
        [artifactId, comparisonId],
      );
      if (!row) throw new StoreError('not-found', `no artifact ${artifactId} in comparison ${comparisonId}`);
      await db.query('DELETE FROM artifacts WHERE id = $1', [artifactId]);
      await this.collect(db, [row.sha256], now, trash);
    });
  }

  async putStageSources(input: NewStageSources): Promise<StageSources> {
    checkSourceSet(input);
    const ref = input.blob;
    if (!SHA256_HEX.test(ref.sha256)) throw new StoreError('invalid', 'blob sha256 must be 64 lowercase hex digits');
    const entries = JSON.stringify(input.entries.map((e) => ({ path: e.path, size: e.size })));
    const bytes = input.entries.reduce((n, e) => n + e.size, 0);
    const now = this.clock();
    await this.txCollecting(async (db, trash) => {
      await this.bump(db, input.comparisonId, now);
      await this.requireStage(db, input.comparisonId, input.stageId);
      const size = await this.requireBlob(db, ref.sha256);
      const old = await this.one<{ sha256: string }>(
        db,
        `SELECT sha256 FROM stage_sources WHERE stage_id = $1 ${this.sql.forUpdate}`,
        [input.stageId],
      );
      await db.query(
        `INSERT INTO stage_sources (stage_id, module_path, revision, dirty, origin, files, bytes, entries, sha256, size, created_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
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
          size,
          now,
        ],
      );
      await db.query('DELETE FROM blob_pins WHERE id = $1', [ref.pinId]);
      if (old && old.sha256 !== ref.sha256) await this.collect(db, [old.sha256], now, trash);
    });
    const { entries: _entries, ...stored } = (await this.getStageSources(input.comparisonId, input.stageId))!;
    return stored;
  }

  async getStageSources(comparisonId: string, stageId: string): Promise<StageSourcesWithFiles | null> {
    const row = await this.one<SourcesRow & { entries: unknown }>(
      this.conn,
      `SELECT ${SOURCES_COLUMNS}, x.entries FROM stage_sources x JOIN stages s ON s.id = x.stage_id
      WHERE x.stage_id = $1 AND s.comparison_id = $2`,
      [stageId, comparisonId],
    );
    if (!row) return null;
    return { ...this.toSources(row), entries: this.json(row.entries) as StageSourcesWithFiles['entries'] };
  }

  async deleteStageSources(comparisonId: string, stageId: string): Promise<boolean> {
    const now = this.clock();
    return this.txCollecting(async (db, trash) => {
      await this.bump(db, comparisonId, now); // the comparison first, as every change locks it
      await this.requireStage(db, comparisonId, stageId);
      const old = await this.one<{ sha256: string }>(
        db,
        'DELETE FROM stage_sources WHERE stage_id = $1 RETURNING sha256',
        [stageId],
      );
      if (!old) return false;
      await this.collect(db, [old.sha256], now, trash);
      return true;
    });
  }

  async hasBlob(sha256: string): Promise<boolean> {
    return (await this.conn.query('SELECT 1 FROM blobs WHERE sha256 = $1', [sha256])).count > 0;
  }

  async storedBytes(): Promise<number> {
    return Number((await this.one<{ n: Num }>(this.conn, 'SELECT COALESCE(SUM(size), 0) AS n FROM blobs'))!.n);
  }

  // ---- cache ----

  async cacheGet(k: CacheKey): Promise<Buffer | null> {
    const c = scopeColumns(k);
    const row = await this.one<{ value: Buffer; used_at: Num }>(
      this.conn,
      `SELECT value, used_at FROM cache e WHERE scope = $1 AND key = $2 AND model_version = $3 AND revision = $4
      AND (e.comparison_id IS NULL OR EXISTS (SELECT 1 FROM comparisons p WHERE p.id = e.comparison_id AND p.revision = e.revision))`,
      [c.scope, k.key, k.modelVersion, c.revision],
    );
    if (!row) return null;
    const now = this.clock();
    if (Number(row.used_at) < now - CACHE_TOUCH_MS)
      await this.conn.query('UPDATE cache SET used_at = $1 WHERE scope = $2 AND key = $3 AND model_version = $4', [
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
    const guard: [string, unknown[]] =
      c.comparisonId !== null
        ? ['SELECT 1 FROM comparisons WHERE id = $1 AND revision = $2', [c.comparisonId, c.revision]]
        : c.sha256 !== null
          ? ['SELECT 1 FROM blobs WHERE sha256 = $1', [c.sha256]]
          : ['SELECT 1', []];
    await this.tx(async (db) => {
      // Only while its comparison's revision is current (or its blob stored); a writer that computed
      // from an older revision never replaces a newer entry.
      if ((await db.query(...guard)).count === 0) return;
      const now = this.clock();
      await db.query(
        `INSERT INTO cache (scope, key, model_version, comparison_id, blob_sha256, revision, value, created_at, size, used_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $8)
        ON CONFLICT (scope, key, model_version) DO UPDATE
          SET value = excluded.value, revision = excluded.revision, created_at = excluded.created_at,
            size = excluded.size, used_at = excluded.used_at
          WHERE excluded.revision >= cache.revision`,
        [c.scope, k.key, k.modelVersion, c.comparisonId, c.sha256, c.revision, bytes, now, bytes.length],
      );
      await db.query('DELETE FROM cache WHERE scope = $1 AND key = $2 AND model_version <> $3', [
        c.scope,
        k.key,
        k.modelVersion,
      ]);
      const total = Number((await this.one<{ n: Num }>(db, 'SELECT COALESCE(SUM(size), 0) AS n FROM cache'))!.n);
      if (total > this.maxCacheBytes) await db.query(CACHE_EVICT_SQL, [total - this.maxCacheBytes]);
    }).catch((e: unknown) => {
      // The comparison or blob went away between the guard and the insert: nothing to cache.
      if (!this.isForeignKeyViolation(e)) throw e;
    });
  }

  // ---- maintenance ----

  async sweep(options: SweepOptions = {}): Promise<SweepReport> {
    const now = options.now ?? this.clock();
    const report: SweepReport = { expiredPins: 0, orphanBlobs: 0, tempFiles: 0, staleCacheEntries: 0 };
    await this.txCollecting(async (db, trash) => {
      report.expiredPins = (await db.query('DELETE FROM blob_pins WHERE expires_at <= $1', [now])).count;
      const orphans = (
        await db.query<{ sha256: string }>(`SELECT sha256 FROM blobs b
        WHERE NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
          AND NOT EXISTS (SELECT 1 FROM stage_sources x WHERE x.sha256 = b.sha256)
          AND NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256)`)
      ).rows.map((r) => r.sha256);
      report.orphanBlobs = await this.collect(db, orphans, now, trash);
      report.staleCacheEntries = (
        await db.query(`DELETE FROM cache WHERE comparison_id IS NOT NULL
        AND revision < (SELECT revision FROM comparisons p WHERE p.id = cache.comparison_id)`)
      ).count;
    });
    report.tempFiles = await this.sweepBytes(now);
    return report;
  }

  async stats(options: StatsOptions = {}): Promise<StoreStats> {
    const row = (await this.one<Record<string, Num>>(
      this.conn,
      `SELECT
      (SELECT COALESCE(MAX(version), 0) FROM schema_migrations) AS "schemaVersion",
      (SELECT COUNT(*) FROM comparisons) AS comparisons,
      (SELECT COUNT(*) FROM stages) AS stages,
      (SELECT COUNT(*) FROM artifacts) AS artifacts,
      (SELECT COUNT(*) FROM blobs) AS blobs,
      (SELECT COALESCE(SUM(size), 0) FROM blobs) AS "blobBytes",
      (SELECT COUNT(*) FROM blob_pins) AS pins,
      (SELECT COUNT(*) FROM cache) AS "cacheEntries",
      (SELECT COALESCE(SUM(size), 0) FROM cache) AS "cacheBytes"`,
    ))!;
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
      ...(await this.byteCounts(options)),
    };
  }
}
