import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
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
import { StoreError, TooLargeError } from './errors.ts';
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
 * Blobs live as files, not in the database: a 64 MiB upload in SQLite would be written twice (WAL,
 * then checkpoint), would bloat the WAL while readers hold it open, and better-sqlite3 cannot stream a
 * BLOB column, so every download would be loaded whole. A file is written to blobs/tmp, fsynced, then
 * renamed to blobs/<first 2 hex>/<sha256> — the rename and the blob's row happen under SQLite's write
 * lock, so "row present" always means "file complete". Leftovers of a crash (a temp file, or a renamed
 * file whose row never committed) are removed by `sweep`.
 */

interface ComparisonRow {
  id: string;
  title: string;
  description: string;
  created_at: number;
  updated_at: number;
  edit_token_hash: string | null;
  read_only: number;
  revision: number;
  viewed_at: number;
  keep: number;
}
interface StageRow {
  id: string;
  comparison_id: string;
  position: number;
  name: string;
  note: string;
  created_at: number;
  captures: string;
}
interface ArtifactRow {
  id: string;
  stage_id: string;
  comparison_id: string;
  kind: string;
  format: string;
  filename: string;
  size: number;
  sha256: string;
  summary: string;
  created_at: number;
}

interface SourcesRow {
  stage_id: string;
  comparison_id: string;
  module_path: string;
  revision: string;
  dirty: number | null;
  origin: string;
  files: number;
  bytes: number;
  sha256: string;
  size: number;
  created_at: number;
}
const SOURCES_COLUMNS = `x.stage_id, s.comparison_id, x.module_path, x.revision, x.dirty, x.origin, x.files, x.bytes, x.sha256, x.size, x.created_at`;

function toSources(r: SourcesRow): StageSources {
  return {
    comparisonId: r.comparison_id,
    stageId: r.stage_id,
    modulePath: r.module_path,
    revision: r.revision,
    dirty: r.dirty === null ? null : r.dirty !== 0,
    origin: r.origin,
    files: r.files,
    bytes: r.bytes,
    sha256: r.sha256,
    size: r.size,
    createdAt: iso(r.created_at),
  };
}

const ARTIFACT_COLUMNS = `a.id, a.stage_id, s.comparison_id, a.kind, a.format, a.filename, a.size, a.sha256, a.summary, a.created_at`;

function toComparison(r: ComparisonRow): Comparison {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
    readOnly: r.read_only !== 0,
    revision: r.revision,
    keep: r.keep !== 0,
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
    captures: JSON.parse(r.captures) as unknown[],
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
    size: r.size,
    sha256: r.sha256,
    summary: JSON.parse(r.summary) as unknown,
    createdAt: iso(r.created_at),
  };
}

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    off += bytesWritten;
  }
}

export class SqliteStore implements Store {
  readonly dialect = 'sqlite' as const;
  readonly blobLocation = 'files' as const;
  private readonly db: Database.Database;
  private readonly blobDir: string;
  private readonly tmpDir: string;
  /**
   * Temp files being written right now by any store of this process (several may share one data
   * directory); `sweep` leaves them alone.
   */
  private static readonly activeTemps = new Set<string>();
  private readonly activeTemps = SqliteStore.activeTemps;

  private readonly maxCacheBytes: number;
  private readonly clock: () => number;

  constructor(dataDir: string, options: { maxCacheBytes?: number; clock?: () => number } = {}) {
    this.maxCacheBytes = options.maxCacheBytes ?? Number.MAX_SAFE_INTEGER;
    this.clock = options.clock ?? Date.now;
    mkdirSync(dataDir, { recursive: true });
    this.blobDir = join(dataDir, 'blobs');
    this.tmpDir = join(this.blobDir, 'tmp');
    mkdirSync(this.tmpDir, { recursive: true });
    this.db = new Database(join(dataDir, 'stagediff.db'));
    this.db.pragma('busy_timeout = 10000');
    this.db.pragma('journal_mode = WAL');
    // FULL: a committed artifact survives power loss, which is what "acknowledged once durable" means.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    this.migrate();
    // Each statement is compiled once per SQL text (a small, fixed set), not on every call: a read
    // served from the cache costs a lookup, not a parse and plan of its SQL.
    const prepare = this.db.prepare.bind(this.db);
    const compiled = new Map<string, ReturnType<typeof prepare>>();
    this.db.prepare = ((sql: string) => {
      let st = compiled.get(sql);
      if (!st) {
        st = prepare(sql);
        compiled.set(sql, st);
      }
      return st;
    }) as typeof this.db.prepare;
  }

  private migrate(): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT`);
    const migrations = loadMigrations('sqlite');
    // IMMEDIATE takes the write lock first, so two processes opening one file apply each migration once.
    this.db
      .transaction(() => {
        const done = new Set(
          (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
            (r) => r.version,
          ),
        );
        for (const m of migrations) {
          if (done.has(m.version)) continue;
          this.db.exec(m.sql);
          this.db
            .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(m.version, m.name, this.clock());
        }
      })
      .immediate();
  }

  private blobPath(sha256: string): string {
    return join(this.blobDir, sha256.slice(0, 2), sha256);
  }

  /** Bumps the revision (and so locks the comparison's content); throws not-found. Call inside a transaction. */
  private bump(comparisonId: string, now: number): void {
    const r = this.db
      .prepare('UPDATE comparisons SET revision = revision + 1, updated_at = ? WHERE id = ?')
      .run(now, comparisonId);
    if (r.changes === 0) throw new StoreError('not-found', `no comparison ${comparisonId}`);
  }

  private stageRow(comparisonId: string, stageId: string): StageRow | undefined {
    return this.db.prepare('SELECT * FROM stages WHERE id = ? AND comparison_id = ?').get(stageId, comparisonId) as
      | StageRow
      | undefined;
  }

  private requireStage(comparisonId: string, stageId: string): StageRow {
    const row = this.stageRow(comparisonId, stageId);
    if (!row) throw new StoreError('not-found', `no stage ${stageId} in comparison ${comparisonId}`);
    return row;
  }

  private stageRows(comparisonId: string): StageRow[] {
    return this.db
      .prepare('SELECT * FROM stages WHERE comparison_id = ? ORDER BY position')
      .all(comparisonId) as StageRow[];
  }

  /** Rewrites positions to 0..n-1 in the given order, in two steps so UNIQUE(comparison, position) holds throughout. */
  private renumber(comparisonId: string, ids: readonly string[]): void {
    this.db.prepare('UPDATE stages SET position = -1 - position WHERE comparison_id = ?').run(comparisonId);
    const set = this.db.prepare('UPDATE stages SET position = ? WHERE id = ?');
    ids.forEach((id, i) => {
      set.run(i, id);
    });
  }

  /**
   * Deletes the given blobs if no artifact and no live pin references them. Runs inside the caller's
   * write transaction and as its last step, so no other process can re-add the same blob between the
   * row going and the file going.
   */
  private collect(shas: Iterable<string>, now: number): number {
    const del = this.db.prepare(`DELETE FROM blobs WHERE sha256 = ?
      AND NOT EXISTS (SELECT 1 FROM artifacts WHERE sha256 = ?)
      AND NOT EXISTS (SELECT 1 FROM stage_sources WHERE sha256 = ?)
      AND NOT EXISTS (SELECT 1 FROM blob_pins WHERE sha256 = ? AND expires_at > ?)`);
    let n = 0;
    for (const sha of new Set(shas)) {
      if (del.run(sha, sha, sha, sha, now).changes > 0) {
        rmSync(this.blobPath(sha), { force: true });
        n++;
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
      this.db
        .prepare(`INSERT INTO comparisons (id, title, description, created_at, updated_at, edit_token_hash, read_only)
        VALUES (?, ?, ?, ?, ?, ?, ?)`)
        .run(
          id,
          input.title,
          input.description ?? '',
          now,
          now,
          token === null ? null : hashEditToken(token),
          readOnly ? 1 : 0,
        );
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw new StoreError('conflict', `comparison ${id} already exists`);
      throw e;
    }
    return { comparison: (await this.getComparison(id))!, editToken: token };
  }

  async getComparison(id: string): Promise<Comparison | null> {
    const row = this.db.prepare('SELECT * FROM comparisons WHERE id = ?').get(id) as ComparisonRow | undefined;
    return row ? toComparison(row) : null;
  }

  async getComparisonTree(id: string): Promise<ComparisonTree | null> {
    let viewedAt = 0;
    const tree = this.db.transaction((): ComparisonTree | null => {
      const row = this.db.prepare('SELECT * FROM comparisons WHERE id = ?').get(id) as ComparisonRow | undefined;
      if (!row) return null;
      viewedAt = row.viewed_at;
      const arts = this.db
        .prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
        WHERE s.comparison_id = ? ORDER BY a.rowid`)
        .all(id) as ArtifactRow[];
      const byStage = new Map<string, Artifact[]>();
      for (const a of arts) {
        const list = byStage.get(a.stage_id) ?? [];
        list.push(toArtifact(a));
        byStage.set(a.stage_id, list);
      }
      const sources = new Map<string, StageSources>();
      for (const r of this.db
        .prepare(`SELECT ${SOURCES_COLUMNS} FROM stage_sources x JOIN stages s ON s.id = x.stage_id
        WHERE s.comparison_id = ?`)
        .all(id) as SourcesRow[])
        sources.set(r.stage_id, toSources(r));
      return {
        comparison: toComparison(row),
        stages: this.stageRows(id).map((s) => {
          const src = sources.get(s.id);
          return { ...toStage(s), artifacts: byStage.get(s.id) ?? [], ...(src ? { sources: src } : {}) };
        }),
      };
    })();
    const now = this.clock();
    if (tree && viewedAt < now - VIEW_TOUCH_MS) {
      try {
        this.db.prepare('UPDATE comparisons SET viewed_at = ? WHERE id = ? AND viewed_at < ?').run(now, id, now);
      } catch {
        // best effort: a view that cannot be recorded (the database busy) is still served
      }
    }
    return tree;
  }

  async recordView(id: string): Promise<void> {
    const now = this.clock();
    try {
      this.db
        .prepare('UPDATE comparisons SET viewed_at = ? WHERE id = ? AND viewed_at < ?')
        .run(now, id, now - VIEW_TOUCH_MS);
    } catch {
      // best effort, as in getComparisonTree
    }
  }

  async updateComparison(
    id: string,
    patch: { title?: string; description?: string; keep?: boolean },
  ): Promise<Comparison> {
    checkText({ title: patch.title, description: patch.description });
    const now = this.clock();
    this.db
      .transaction(() => {
        this.bump(id, now);
        this.db
          .prepare(
            'UPDATE comparisons SET title = COALESCE(?, title), description = COALESCE(?, description), keep = COALESCE(?, keep) WHERE id = ?',
          )
          .run(
            patch.title ?? null,
            patch.description ?? null,
            patch.keep === undefined ? null : patch.keep ? 1 : 0,
            id,
          );
      })
      .immediate();
    return (await this.getComparison(id))!;
  }

  async deleteComparison(id: string): Promise<boolean> {
    return this.db.transaction((): boolean => this.deleteComparisonIn(id, this.clock())).immediate();
  }

  /** Deletes a comparison and collects its blobs; call inside a write transaction. */
  private deleteComparisonIn(id: string, now: number): boolean {
    const shas = (
      this.db
        .prepare(`SELECT DISTINCT a.sha256 FROM artifacts a JOIN stages s ON s.id = a.stage_id
        WHERE s.comparison_id = ?
        UNION SELECT x.sha256 FROM stage_sources x JOIN stages s ON s.id = x.stage_id WHERE s.comparison_id = ?`)
        .all(id, id) as { sha256: string }[]
    ).map((r) => r.sha256);
    const gone = this.db.prepare('DELETE FROM comparisons WHERE id = ?').run(id).changes > 0;
    if (gone) this.collect(shas, now);
    return gone;
  }

  async expireComparisons(unusedSince: number): Promise<string[]> {
    const expired = `SELECT id FROM comparisons
      WHERE keep = 0 AND read_only = 0 AND max(updated_at, viewed_at) < ?`;
    const candidates = (this.db.prepare(`${expired} ORDER BY id`).all(unusedSince) as { id: string }[]).map(
      (r) => r.id,
    );
    const removed: string[] = [];
    for (const id of candidates) {
      // One transaction each, re-checked under the write lock: a view or a change since keeps it.
      const gone = this.db
        .transaction(
          (): boolean =>
            this.db.prepare(`${expired} AND id = ?`).get(unusedSince, id) !== undefined &&
            this.deleteComparisonIn(id, this.clock()),
        )
        .immediate();
      if (gone) removed.push(id);
    }
    return removed;
  }

  async verifyEditToken(id: string, token: string): Promise<boolean> {
    const row = this.db.prepare('SELECT edit_token_hash, read_only FROM comparisons WHERE id = ?').get(id) as
      | { edit_token_hash: string | null; read_only: number }
      | undefined;
    if (row?.read_only !== 0) return false;
    return editTokenMatches(row.edit_token_hash, token);
  }

  // ---- stages ----

  async createStage(comparisonId: string, input: { name: string; note?: string }): Promise<Stage> {
    checkText(input);
    const now = this.clock();
    const id = newId();
    this.db
      .transaction(() => {
        this.bump(comparisonId, now);
        const { next } = this.db
          .prepare('SELECT COALESCE(MAX(position) + 1, 0) AS next FROM stages WHERE comparison_id = ?')
          .get(comparisonId) as { next: number };
        this.db
          .prepare('INSERT INTO stages (id, comparison_id, position, name, note, created_at) VALUES (?, ?, ?, ?, ?, ?)')
          .run(id, comparisonId, next, input.name, input.note ?? '', now);
      })
      .immediate();
    return toStage(this.stageRow(comparisonId, id)!);
  }

  async getStage(comparisonId: string, stageId: string): Promise<Stage | null> {
    const row = this.stageRow(comparisonId, stageId);
    return row ? toStage(row) : null;
  }

  async listStages(comparisonId: string): Promise<Stage[]> {
    return this.stageRows(comparisonId).map(toStage);
  }

  async updateStage(comparisonId: string, stageId: string, patch: { name?: string; note?: string }): Promise<Stage> {
    checkText(patch);
    const now = this.clock();
    return this.db
      .transaction((): Stage => {
        this.requireStage(comparisonId, stageId);
        this.bump(comparisonId, now);
        this.db
          .prepare('UPDATE stages SET name = COALESCE(?, name), note = COALESCE(?, note) WHERE id = ?')
          .run(patch.name ?? null, patch.note ?? null, stageId);
        return toStage(this.stageRow(comparisonId, stageId)!);
      })
      .immediate();
  }

  async addStageCapture(comparisonId: string, stageId: string, record: unknown): Promise<Stage> {
    const text = captureText(record);
    const now = this.clock();
    return this.db
      .transaction((): Stage => {
        const st = this.requireStage(comparisonId, stageId);
        if ((JSON.parse(st.captures) as unknown[]).length >= MAX_CAPTURES_PER_STAGE)
          throw new StoreError('invalid', `a stage keeps at most ${MAX_CAPTURES_PER_STAGE} capture records`);
        this.bump(comparisonId, now);
        this.db
          .prepare("UPDATE stages SET captures = json_insert(captures, '$[#]', json(?)) WHERE id = ?")
          .run(text, stageId);
        return toStage(this.stageRow(comparisonId, stageId)!);
      })
      .immediate();
  }

  async deleteStage(comparisonId: string, stageId: string): Promise<void> {
    const now = this.clock();
    this.db
      .transaction(() => {
        this.requireStage(comparisonId, stageId);
        this.bump(comparisonId, now);
        const shas = (
          this.db
            .prepare(
              'SELECT DISTINCT sha256 FROM artifacts WHERE stage_id = ? UNION SELECT sha256 FROM stage_sources WHERE stage_id = ?',
            )
            .all(stageId, stageId) as {
            sha256: string;
          }[]
        ).map((r) => r.sha256);
        this.db.prepare('DELETE FROM stages WHERE id = ?').run(stageId);
        this.renumber(
          comparisonId,
          this.stageRows(comparisonId).map((s) => s.id),
        );
        this.collect(shas, now);
      })
      .immediate();
  }

  async reorderStages(comparisonId: string, stageIds: string[]): Promise<Stage[]> {
    const now = this.clock();
    return this.db
      .transaction((): Stage[] => {
        this.bump(comparisonId, now);
        checkReorder(
          this.stageRows(comparisonId).map((s) => s.id),
          stageIds,
        );
        this.renumber(comparisonId, stageIds);
        return this.stageRows(comparisonId).map(toStage);
      })
      .immediate();
  }

  // ---- blobs and artifacts ----

  async putBlob(src: ByteSource, maxBytes: number): Promise<BlobRef> {
    checkMaxBytes(maxBytes);
    // The pid in the name lets a later sweep tell a dead writer's leftovers from a live upload.
    const tmp = join(this.tmpDir, `${process.pid}.${newId()}.part`);
    this.activeTemps.add(tmp);
    let fh: FileHandle | null = null;
    try {
      fh = await open(tmp, 'wx');
      const hash = createHash('sha256');
      let size = 0;
      for await (const chunk of src) {
        const buf = toBuffer(chunk);
        size += buf.length;
        if (size > maxBytes) throw new TooLargeError(maxBytes);
        hash.update(buf);
        await writeAll(fh, buf);
      }
      await fh.sync();
      await fh.close();
      fh = null;
      const sha256 = hash.digest('hex');
      const dir = join(this.blobDir, sha256.slice(0, 2));
      if (mkdirSync(dir, { recursive: true }) !== undefined) fsyncDir(this.blobDir);
      const pinId = newId();
      const now = this.clock();
      this.db
        .transaction(() => {
          const final = join(dir, sha256);
          if (existsSync(final)) {
            unlinkSync(tmp); // same bytes already stored
          } else {
            renameSync(tmp, final);
            fsyncDir(dir);
          }
          this.db
            .prepare('INSERT INTO blobs (sha256, size, created_at) VALUES (?, ?, ?) ON CONFLICT (sha256) DO NOTHING')
            .run(sha256, size, now);
          this.db
            .prepare('INSERT INTO blob_pins (id, sha256, expires_at) VALUES (?, ?, ?)')
            .run(pinId, sha256, now + PIN_TTL_MS);
        })
        .immediate();
      return { sha256, size, pinId };
    } catch (e) {
      if (fh) await fh.close().catch(() => {});
      await rm(tmp, { force: true });
      throw e;
    } finally {
      this.activeTemps.delete(tmp);
    }
  }

  async releaseBlob(ref: BlobRef): Promise<void> {
    const now = this.clock();
    this.db
      .transaction(() => {
        this.db.prepare('DELETE FROM blob_pins WHERE id = ?').run(ref.pinId);
        this.collect([ref.sha256], now);
      })
      .immediate();
  }

  async addArtifact(input: NewArtifact): Promise<Artifact> {
    checkKind(input.kind);
    const summary = jsonText(input.summary);
    checkText({ filename: input.filename, format: input.format });
    let ref: BlobRef;
    if ('src' in input) {
      // Fail before streaming a large body into a stage that does not exist.
      this.requireStage(input.comparisonId, input.stageId);
      ref = await this.putBlob(input.src, input.maxBytes);
    } else {
      ref = input.blob;
      if (!SHA256_HEX.test(ref.sha256)) throw new StoreError('invalid', 'blob sha256 must be 64 lowercase hex digits');
    }
    const id = newId();
    const now = this.clock();
    try {
      this.db
        .transaction(() => {
          this.requireStage(input.comparisonId, input.stageId);
          const blob = this.db.prepare('SELECT size FROM blobs WHERE sha256 = ?').get(ref.sha256) as
            | { size: number }
            | undefined;
          if (!blob) throw new StoreError('blob-missing', `blob ${ref.sha256} is not stored (its pin expired?)`);
          this.bump(input.comparisonId, now);
          this.db
            .prepare(`INSERT INTO artifacts (id, stage_id, kind, format, filename, size, sha256, summary, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
            .run(id, input.stageId, input.kind, input.format, input.filename, blob.size, ref.sha256, summary, now);
          this.db.prepare('DELETE FROM blob_pins WHERE id = ?').run(ref.pinId);
        })
        .immediate();
    } catch (e) {
      if ('src' in input) await this.releaseBlob(ref).catch(() => {});
      throw e;
    }
    return (await this.getArtifact(id))!;
  }

  async getArtifact(id: string): Promise<Artifact | null> {
    const row = this.db
      .prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id WHERE a.id = ?`)
      .get(id) as ArtifactRow | undefined;
    return row ? toArtifact(row) : null;
  }

  async listArtifacts(comparisonId: string, stageId: string): Promise<Artifact[]> {
    const rows = this.db
      .prepare(`SELECT ${ARTIFACT_COLUMNS} FROM artifacts a JOIN stages s ON s.id = a.stage_id
      WHERE a.stage_id = ? AND s.comparison_id = ? ORDER BY a.rowid`)
      .all(stageId, comparisonId) as ArtifactRow[];
    return rows.map(toArtifact);
  }

  async deleteArtifact(comparisonId: string, artifactId: string): Promise<void> {
    const now = this.clock();
    this.db
      .transaction(() => {
        const row = this.db
          .prepare(`SELECT a.sha256 FROM artifacts a JOIN stages s ON s.id = a.stage_id
        WHERE a.id = ? AND s.comparison_id = ?`)
          .get(artifactId, comparisonId) as { sha256: string } | undefined;
        if (!row) throw new StoreError('not-found', `no artifact ${artifactId} in comparison ${comparisonId}`);
        this.bump(comparisonId, now);
        this.db.prepare('DELETE FROM artifacts WHERE id = ?').run(artifactId);
        this.collect([row.sha256], now);
      })
      .immediate();
  }

  async putStageSources(input: NewStageSources): Promise<StageSources> {
    checkSourceSet(input);
    const ref = input.blob;
    if (!SHA256_HEX.test(ref.sha256)) throw new StoreError('invalid', 'blob sha256 must be 64 lowercase hex digits');
    const entries = JSON.stringify(input.entries.map((e) => ({ path: e.path, size: e.size })));
    const bytes = input.entries.reduce((n, e) => n + e.size, 0);
    const now = this.clock();
    this.db
      .transaction(() => {
        this.requireStage(input.comparisonId, input.stageId);
        const blob = this.db.prepare('SELECT size FROM blobs WHERE sha256 = ?').get(ref.sha256) as
          | { size: number }
          | undefined;
        if (!blob) throw new StoreError('blob-missing', `blob ${ref.sha256} is not stored (its pin expired?)`);
        this.bump(input.comparisonId, now);
        const old = this.db.prepare('SELECT sha256 FROM stage_sources WHERE stage_id = ?').get(input.stageId) as
          | { sha256: string }
          | undefined;
        this.db
          .prepare(`INSERT INTO stage_sources (stage_id, module_path, revision, dirty, origin, files, bytes, entries, sha256, size, created_at)
          VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (stage_id) DO UPDATE SET module_path = excluded.module_path, revision = excluded.revision,
            dirty = excluded.dirty, origin = excluded.origin, files = excluded.files, bytes = excluded.bytes,
            entries = excluded.entries, sha256 = excluded.sha256, size = excluded.size, created_at = excluded.created_at`)
          .run(
            input.stageId,
            input.modulePath,
            input.revision,
            input.dirty === null ? null : input.dirty ? 1 : 0,
            input.origin,
            input.entries.length,
            bytes,
            entries,
            ref.sha256,
            blob.size,
            now,
          );
        this.db.prepare('DELETE FROM blob_pins WHERE id = ?').run(ref.pinId);
        if (old && old.sha256 !== ref.sha256) this.collect([old.sha256], now);
      })
      .immediate();
    const { entries: _entries, ...stored } = (await this.getStageSources(input.comparisonId, input.stageId))!;
    return stored;
  }

  async getStageSources(comparisonId: string, stageId: string): Promise<StageSourcesWithFiles | null> {
    const row = this.db
      .prepare(`SELECT ${SOURCES_COLUMNS}, x.entries FROM stage_sources x JOIN stages s ON s.id = x.stage_id
      WHERE x.stage_id = ? AND s.comparison_id = ?`)
      .get(stageId, comparisonId) as (SourcesRow & { entries: string }) | undefined;
    if (!row) return null;
    return { ...toSources(row), entries: JSON.parse(row.entries) as StageSourcesWithFiles['entries'] };
  }

  async deleteStageSources(comparisonId: string, stageId: string): Promise<boolean> {
    const now = this.clock();
    return this.db
      .transaction((): boolean => {
        this.requireStage(comparisonId, stageId);
        const old = this.db.prepare('SELECT sha256 FROM stage_sources WHERE stage_id = ?').get(stageId) as
          | { sha256: string }
          | undefined;
        if (!old) return false;
        this.bump(comparisonId, now);
        this.db.prepare('DELETE FROM stage_sources WHERE stage_id = ?').run(stageId);
        this.collect([old.sha256], now);
        return true;
      })
      .immediate();
  }

  async hasBlob(sha256: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM blobs WHERE sha256 = ?').get(sha256) !== undefined;
  }

  async storedBytes(): Promise<number> {
    return (this.db.prepare('SELECT COALESCE(SUM(size), 0) AS n FROM blobs').get() as { n: number }).n;
  }

  async readBlob(sha256: string): Promise<Buffer | null> {
    if (!SHA256_HEX.test(sha256) || !(await this.hasBlob(sha256))) return null;
    try {
      return await readFile(this.blobPath(sha256));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new StoreError('blob-missing', `blob file ${sha256} is missing`);
      throw e;
    }
  }

  async openBlobStream(sha256: string): Promise<Readable | null> {
    if (!SHA256_HEX.test(sha256) || !(await this.hasBlob(sha256))) return null;
    let fh: FileHandle;
    try {
      // Opened now, so a blob deleted afterwards still streams to the end (POSIX unlink semantics).
      fh = await open(this.blobPath(sha256), 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT')
        throw new StoreError('blob-missing', `blob file ${sha256} is missing`);
      throw e;
    }
    return fh.createReadStream({ highWaterMark: 1 << 20 });
  }

  // ---- cache ----

  async cacheGet(k: CacheKey): Promise<Buffer | null> {
    const c = scopeColumns(k);
    const row = this.db
      .prepare(`SELECT value, used_at FROM cache e WHERE scope = ? AND key = ? AND model_version = ? AND revision = ?
      AND (e.comparison_id IS NULL OR EXISTS (SELECT 1 FROM comparisons p WHERE p.id = e.comparison_id AND p.revision = e.revision))`)
      .get(c.scope, k.key, k.modelVersion, c.revision) as { value: Buffer; used_at: number } | undefined;
    if (!row) return null;
    const now = this.clock();
    if (row.used_at < now - CACHE_TOUCH_MS)
      this.db
        .prepare('UPDATE cache SET used_at = ? WHERE scope = ? AND key = ? AND model_version = ?')
        .run(now, c.scope, k.key, k.modelVersion);
    return row.value;
  }

  async cachePut(k: CacheKey, value: Buffer | string): Promise<void> {
    const c = scopeColumns(k);
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
    if (bytes.length > this.maxCacheBytes / 4) return;
    const guard =
      c.comparisonId !== null
        ? 'EXISTS (SELECT 1 FROM comparisons WHERE id = @comparisonId AND revision = @revision)'
        : c.sha256 !== null
          ? 'EXISTS (SELECT 1 FROM blobs WHERE sha256 = @sha256)'
          : '1';
    this.db
      .transaction(() => {
        this.db
          .prepare(`INSERT INTO cache (scope, key, model_version, comparison_id, blob_sha256, revision, value, created_at, size, used_at)
        SELECT @scope, @key, @modelVersion, @comparisonId, @sha256, @revision, @value, @now, @size, @now WHERE ${guard}
        ON CONFLICT (scope, key, model_version) DO UPDATE
          SET value = excluded.value, revision = excluded.revision, created_at = excluded.created_at,
            size = excluded.size, used_at = excluded.used_at
          WHERE excluded.revision >= cache.revision`)
          .run({ ...c, key: k.key, modelVersion: k.modelVersion, value: bytes, now: this.clock(), size: bytes.length });
        this.db
          .prepare('DELETE FROM cache WHERE scope = ? AND key = ? AND model_version <> ?')
          .run(c.scope, k.key, k.modelVersion);
        const total = (this.db.prepare('SELECT COALESCE(SUM(size), 0) AS n FROM cache').get() as { n: number }).n;
        if (total > this.maxCacheBytes)
          this.db.prepare(CACHE_EVICT_SQL.replace('$1', '?')).run(total - this.maxCacheBytes);
      })
      .immediate();
  }

  // ---- maintenance ----

  async sweep(options: SweepOptions = {}): Promise<SweepReport> {
    const now = options.now ?? this.clock();
    const report: SweepReport = { expiredPins: 0, orphanBlobs: 0, tempFiles: 0, staleCacheEntries: 0 };
    this.db
      .transaction(() => {
        report.expiredPins = this.db.prepare('DELETE FROM blob_pins WHERE expires_at <= ?').run(now).changes;
        const orphans = (
          this.db
            .prepare(`SELECT sha256 FROM blobs b
        WHERE NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
          AND NOT EXISTS (SELECT 1 FROM stage_sources x WHERE x.sha256 = b.sha256)
          AND NOT EXISTS (SELECT 1 FROM blob_pins p WHERE p.sha256 = b.sha256)`)
            .all() as { sha256: string }[]
        ).map((r) => r.sha256);
        report.orphanBlobs = this.collect(orphans, now);
        report.staleCacheEntries = this.db
          .prepare(`DELETE FROM cache WHERE comparison_id IS NOT NULL
        AND revision < (SELECT revision FROM comparisons p WHERE p.id = cache.comparison_id)`)
          .run().changes;
      })
      .immediate();

    // Temp files of dead writers go at once; a live writer's only once it is older than a pin.
    for (const name of readdirSync(this.tmpDir)) {
      const path = join(this.tmpDir, name);
      if (this.activeTemps.has(path)) continue;
      const pid = Number(name.split('.')[0]);
      const ours = pid === process.pid;
      let stale = ours || !Number.isInteger(pid) || !pidAlive(pid);
      if (!stale) {
        try {
          stale = statSync(path).mtimeMs < now - PIN_TTL_MS;
        } catch {
          continue;
        }
      }
      if (stale) {
        rmSync(path, { force: true });
        report.tempFiles++;
      }
    }

    // A file renamed into place whose row never committed (crash between the two). Candidates are
    // found without the write lock; each is re-checked under it before it goes.
    const hasRow = this.db.prepare('SELECT 1 FROM blobs WHERE sha256 = ?');
    const strays: string[] = [];
    for (const dir of readdirSync(this.blobDir)) {
      if (!/^[0-9a-f]{2}$/.test(dir)) continue;
      for (const name of readdirSync(join(this.blobDir, dir))) {
        if (SHA256_HEX.test(name) && hasRow.get(name) === undefined) strays.push(name);
      }
    }
    for (const name of strays) {
      const removed = this.db
        .transaction((): boolean => {
          if (hasRow.get(name) !== undefined) return false;
          rmSync(this.blobPath(name), { force: true });
          return true;
        })
        .immediate();
      if (removed) report.orphanBlobs++;
    }
    return report;
  }

  async stats(_options: StatsOptions = {}): Promise<StoreStats> {
    const count = (sql: string): number => (this.db.prepare(sql).get() as { n: number }).n;
    return {
      schemaVersion: count('SELECT COALESCE(MAX(version), 0) AS n FROM schema_migrations'),
      comparisons: count('SELECT COUNT(*) AS n FROM comparisons'),
      stages: count('SELECT COUNT(*) AS n FROM stages'),
      artifacts: count('SELECT COUNT(*) AS n FROM artifacts'),
      blobs: count('SELECT COUNT(*) AS n FROM blobs'),
      blobBytes: count('SELECT COALESCE(SUM(size), 0) AS n FROM blobs'),
      pins: count('SELECT COUNT(*) AS n FROM blob_pins'),
      cacheEntries: count('SELECT COUNT(*) AS n FROM cache'),
      cacheBytes: count('SELECT COALESCE(SUM(size), 0) AS n FROM cache'),
      blobObjects: readdirSync(this.blobDir)
        .filter((d) => /^[0-9a-f]{2}$/.test(d))
        .reduce((n, d) => n + readdirSync(join(this.blobDir, d)).length, 0),
      tempFiles: readdirSync(this.tmpDir).length,
    };
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
    statSync(this.tmpDir);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
