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
import { join, resolve } from 'node:path';
import type { Readable } from 'node:stream';
import { checkMaxBytes, loadMigrations, pieces, processAlive } from './common.ts';
import { StoreError } from './errors.ts';
import { newId, SHA256_HEX } from './secrets.ts';
import { type Conn, type SqlDialect, SqlStore } from './sql-store.ts';
import { PIN_TTL_MS, type BlobRef, type ByteSource, type SweepOptions, type SweepReport } from './types.ts';

/*
 * The SQLite dialect of the SQL core (sql-store.ts): one better-sqlite3 connection, whose calls are
 * synchronous. The core is async, so every statement and transaction of this store runs through one
 * queue: a transaction (BEGIN … COMMIT around awaits) never interleaves with another statement of this
 * process on the connection, and other processes wait on SQLite's own locks (busy_timeout).
 *
 * Blobs live as files, not in the database: a 64 MiB upload in SQLite would be written twice (WAL,
 * then checkpoint), would bloat the WAL while readers hold it open, and better-sqlite3 cannot stream a
 * BLOB column, so every download would be loaded whole. A file is written to blobs/tmp, fsynced, then
 * renamed to blobs/<first 2 hex>/<sha256> — the rename and the blob's row happen under SQLite's write
 * lock, so "row present" always means "file complete". Leftovers of a crash (a temp file, or a renamed
 * file whose row never committed) are removed by `sweep`.
 */

const SQL: SqlDialect = {
  forUpdate: '',
  forKeyShare: '',
  artifactOrder: 'a.rowid',
  appendCapture: "UPDATE stages SET captures = json_insert(captures, '$[#]', json($2)) WHERE id = $1 RETURNING *",
  blobReturning: 'sha256',
};

/** An upload is written to its temp file in pieces of this size. */
const WRITE_BYTES = 1 << 20;

function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) {
    const { bytesWritten } = await fh.write(buf, off, buf.length - off);
    off += bytesWritten;
  }
}

/** A statement with `$n` parameters as better-sqlite3 takes it: `?` in order, the values reordered. */
interface Compiled {
  st: Database.Statement;
  order: number[];
}

export class SqliteStore extends SqlStore {
  readonly dialect = 'sqlite' as const;
  readonly blobLocation = 'files' as const;
  protected readonly sql = SQL;
  protected readonly conn: Conn;
  private readonly db: Database.Database;
  /** The connection inside a transaction (the queue is held). */
  private readonly inTx: Conn;
  /**
   * The queue of the database file, shared by every store of this process that opens it: a transaction
   * spans awaits, and another connection of this thread waiting for its lock would block the thread
   * (busy_timeout) — and so the transaction it waits for.
   */
  private static readonly queues = new Map<string, { tail: Promise<unknown> }>();
  private readonly queue: { tail: Promise<unknown> };
  private readonly compiled = new Map<string, Compiled>();
  private readonly blobDir: string;
  private readonly tmpDir: string;
  /**
   * Temp files being written right now by any store of this process (several may share one data
   * directory); `sweep` leaves them alone.
   */
  private static readonly activeTemps = new Set<string>();
  private readonly activeTemps = SqliteStore.activeTemps;

  constructor(dataDir: string, options: { maxCacheBytes?: number; clock?: () => number } = {}) {
    super(options.clock ?? Date.now, options.maxCacheBytes ?? Number.MAX_SAFE_INTEGER);
    mkdirSync(dataDir, { recursive: true });
    this.blobDir = join(dataDir, 'blobs');
    this.tmpDir = join(this.blobDir, 'tmp');
    mkdirSync(this.tmpDir, { recursive: true });
    const file = resolve(dataDir, 'stagediff.db');
    const queue = SqliteStore.queues.get(file) ?? { tail: Promise.resolve() };
    SqliteStore.queues.set(file, queue);
    this.queue = queue;
    this.db = new Database(file);
    this.db.pragma('busy_timeout = 10000');
    this.db.pragma('journal_mode = WAL');
    // FULL: a committed artifact survives power loss, which is what "acknowledged once durable" means.
    this.db.pragma('synchronous = FULL');
    this.db.pragma('foreign_keys = ON');
    this.migrate();
    this.inTx = { query: async (sql, params) => this.exec(sql, params) };
    this.conn = { query: (sql, params) => this.serial(async () => this.exec(sql, params)) };
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

  /**
   * Runs one statement now. Each is compiled once per SQL text (a small, fixed set), not on every
   * call: a read served from the cache costs a lookup, not a parse and plan of its SQL.
   */
  private exec<R>(sql: string, params: readonly unknown[] = []): { rows: R[]; count: number } {
    let c = this.compiled.get(sql);
    if (!c) {
      const order: number[] = [];
      const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
        order.push(Number(n) - 1);
        return '?';
      });
      c = { st: this.db.prepare(text), order };
      this.compiled.set(sql, c);
    }
    // better-sqlite3 binds no booleans: SQLite keeps them as 0/1.
    const values = c.order.map((i) => {
      const v = params[i];
      return typeof v === 'boolean' ? (v ? 1 : 0) : v;
    });
    if (c.st.reader) {
      const rows = c.st.all(...values) as R[];
      return { rows, count: rows.length };
    }
    return { rows: [], count: c.st.run(...values).changes };
  }

  /** Runs `fn` after everything queued before it, alone on the connection. */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.tail.then(fn, fn);
    this.queue.tail = run.catch(() => undefined);
    return run;
  }

  protected tx<T>(fn: (db: Conn) => Promise<T>, mode: 'write' | 'snapshot' = 'write'): Promise<T> {
    return this.serial(async () => {
      // IMMEDIATE takes the write lock at once, so a writer never fails to upgrade a read lock.
      this.db.exec(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN');
      try {
        const out = await fn(this.inTx);
        this.db.exec('COMMIT');
        return out;
      } catch (e) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw e;
      }
    });
  }

  protected json(v: unknown): unknown {
    return JSON.parse(v as string);
  }

  protected isUniqueViolation(e: unknown): boolean {
    return (e as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
  }

  protected isForeignKeyViolation(e: unknown): boolean {
    return (e as { code?: string }).code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
  }

  protected async lockBlob(): Promise<void> {
    // Every write holds the database's one write lock already.
  }

  /** Still inside the write transaction: no other process can re-add the same blob before its file goes. */
  protected async blobDeleted(_db: Conn, sha256: string | null): Promise<void> {
    if (sha256 !== null) rmSync(this.blobPath(sha256), { force: true });
  }

  protected async purge(): Promise<void> {}

  private blobPath(sha256: string): string {
    return join(this.blobDir, sha256.slice(0, 2), sha256);
  }

  // ---- blobs ----

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
      for await (const { piece } of pieces(src, maxBytes, WRITE_BYTES, hash)) {
        size += piece.length;
        await writeAll(fh, piece);
      }
      await fh.sync();
      await fh.close();
      fh = null;
      const sha256 = hash.digest('hex');
      const dir = join(this.blobDir, sha256.slice(0, 2));
      if (mkdirSync(dir, { recursive: true }) !== undefined) fsyncDir(this.blobDir);
      const pinId = newId();
      const now = this.clock();
      await this.tx(async (db) => {
        const final = join(dir, sha256);
        if (existsSync(final)) {
          unlinkSync(tmp); // same bytes already stored
        } else {
          renameSync(tmp, final);
          fsyncDir(dir);
        }
        await db.query(
          'INSERT INTO blobs (sha256, size, created_at) VALUES ($1, $2, $3) ON CONFLICT (sha256) DO NOTHING',
          [sha256, size, now],
        );
        await db.query('INSERT INTO blob_pins (id, sha256, expires_at) VALUES ($1, $2, $3)', [
          pinId,
          sha256,
          now + PIN_TTL_MS,
        ]);
      });
      return { sha256, size, pinId };
    } catch (e) {
      if (fh) await fh.close().catch(() => {});
      await rm(tmp, { force: true });
      throw e;
    } finally {
      this.activeTemps.delete(tmp);
    }
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

  // ---- maintenance ----

  protected async sweepBytes(now: number): Promise<number> {
    let n = 0;
    // Temp files of dead writers go at once; a live writer's only once it is older than a pin.
    for (const name of readdirSync(this.tmpDir)) {
      const path = join(this.tmpDir, name);
      if (this.activeTemps.has(path)) continue;
      const pid = Number(name.split('.')[0]);
      const ours = pid === process.pid;
      let stale = ours || !Number.isInteger(pid) || !processAlive(pid);
      if (!stale) {
        try {
          stale = statSync(path).mtimeMs < now - PIN_TTL_MS;
        } catch {
          continue;
        }
      }
      if (stale) {
        rmSync(path, { force: true });
        n++;
      }
    }
    return n;
  }

  override async sweep(options: SweepOptions = {}): Promise<SweepReport> {
    const report = await super.sweep(options);
    // A file renamed into place whose row never committed (crash between the two). Candidates are
    // found without the write lock; each is re-checked under it before it goes.
    const strays: string[] = [];
    for (const dir of readdirSync(this.blobDir)) {
      if (!/^[0-9a-f]{2}$/.test(dir)) continue;
      for (const name of readdirSync(join(this.blobDir, dir)))
        if (SHA256_HEX.test(name) && !(await this.hasBlob(name))) strays.push(name);
    }
    for (const name of strays) {
      const removed = await this.tx(async (db) => {
        if ((await db.query('SELECT 1 FROM blobs WHERE sha256 = $1', [name])).count > 0) return false;
        rmSync(this.blobPath(name), { force: true });
        return true;
      });
      if (removed) report.orphanBlobs++;
    }
    return report;
  }

  protected async byteCounts(): Promise<{ blobObjects: number; tempFiles: number }> {
    return {
      blobObjects: readdirSync(this.blobDir)
        .filter((d) => /^[0-9a-f]{2}$/.test(d))
        .reduce((n, d) => n + readdirSync(join(this.blobDir, d)).length, 0),
      tempFiles: readdirSync(this.tmpDir).length,
    };
  }

  async ping(): Promise<void> {
    await this.conn.query('SELECT 1');
    statSync(this.tmpDir);
  }

  async close(): Promise<void> {
    // After what is queued, so no statement runs on a closed connection.
    await this.serial(async () => {
      if (this.db.open) this.db.close();
    });
  }
}
