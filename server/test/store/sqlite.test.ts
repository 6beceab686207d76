import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, PIN_TTL_MS } from '../../src/store/index.ts';
import { loadMigrations } from '../../src/store/common.ts';
import { storeContract } from './contract.ts';

const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'stagediff-store-'));
  dirs.push(dir);
  return dir;
}

storeContract('sqlite', {
  async freshConfig() {
    return { dataDir: freshDir() };
  },
  async rawComparisonRow(config, id) {
    const db = new Database(join(config.dataDir, 'stagediff.db'), { readonly: true });
    try {
      return JSON.stringify(db.prepare('SELECT * FROM comparisons WHERE id = ?').get(id));
    } finally {
      db.close();
    }
  },
  async teardown() {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  },
});

describe('sqlite store specifics', () => {
  afterAll(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('keeps stagediff.db in WAL mode and blobs under blobs/<2 hex>/<sha256>', async () => {
    const dataDir = freshDir();
    const s = await openStore({ dataDir });
    const ref = await s.putBlob(
      (async function* () {
        yield Buffer.from('hello');
      })(),
      100,
    );
    await s.close();
    const db = new Database(join(dataDir, 'stagediff.db'), { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.prepare('SELECT version, name FROM schema_migrations').all()).toEqual([
      { version: 1, name: 'init' },
      { version: 2, name: 'stage-captures' },
      { version: 3, name: 'cache-bound' },
      { version: 4, name: 'retention' },
      { version: 5, name: 'artifact-kinds' },
      { version: 6, name: 'stage-sources' },
    ]);
    db.close();
    expect(existsSync(join(dataDir, 'blobs', ref.sha256.slice(0, 2), ref.sha256))).toBe(true);
  });

  it('migration 5 keeps the artifacts of an older database, in upload order, and takes the new kinds', async () => {
    const dataDir = freshDir();
    const db = new Database(join(dataDir, 'stagediff.db'));
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT',
    );
    for (const m of loadMigrations('sqlite').slice(0, 4)) {
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(m.version, m.name, 0);
    }
    db.prepare("INSERT INTO comparisons (id, title, created_at, updated_at) VALUES ('c1', 'old', 0, 0)").run();
    db.prepare(
      "INSERT INTO stages (id, comparison_id, position, name, created_at) VALUES ('s1', 'c1', 0, 'base', 0)",
    ).run();
    db.prepare("INSERT INTO blobs (sha256, size, created_at) VALUES ('ab', 1, 0)").run();
    const add = db.prepare(
      "INSERT INTO artifacts (id, stage_id, kind, format, filename, size, sha256, summary, created_at) VALUES (?, 's1', ?, 'x', ?, 1, 'ab', '{}', 0)",
    );
    add.run('z-first', 'gctrace', 'gc.txt');
    add.run('a-second', 'profile', 'cpu.pb.gz');
    expect(() => add.run('t', 'trace', 'trace.out')).toThrow(/CHECK/);
    db.close();
    const s = await openStore({ dataDir });
    expect((await s.listArtifacts('c1', 's1')).map((a) => [a.id, a.kind])).toEqual([
      ['z-first', 'gctrace'],
      ['a-second', 'profile'],
    ]);
    await s.close();
    const after = new Database(join(dataDir, 'stagediff.db'));
    const again = after.prepare(
      "INSERT INTO artifacts (id, stage_id, kind, format, filename, size, sha256, summary, created_at) VALUES (?, 's1', ?, 'x', ?, 1, 'ab', '{}', 0)",
    );
    for (const kind of ['trace', 'schedtrace', 'metrics']) again.run(`n-${kind}`, kind, kind);
    expect(() => again.run('bad', 'video', 'v')).toThrow(/CHECK/);
    after.close();
  });

  it('a sweep by a second store on the same directory leaves an upload in progress alone', async () => {
    const dataDir = freshDir();
    const a = await openStore({ dataDir });
    const b = await openStore({ dataDir });
    let resume!: () => void;
    const paused = new Promise<void>((r) => {
      resume = r;
    });
    let reached!: () => void;
    const midway = new Promise<void>((r) => {
      reached = r;
    });
    async function* slow() {
      yield Buffer.from('first half, ');
      reached();
      await paused;
      yield Buffer.from('second half');
    }
    const upload = a.putBlob(slow(), 1000);
    await midway;
    expect((await b.stats()).tempFiles).toBe(1);
    expect((await b.sweep()).tempFiles).toBe(0);
    resume();
    const ref = await upload;
    expect((await b.readBlob(ref.sha256))!.toString()).toBe('first half, second half');
    await Promise.all([a.close(), b.close()]);
  });

  it('sweep removes a blob file whose row never committed, and temp files of dead or stale writers only', async () => {
    const dataDir = freshDir();
    const s = await openStore({ dataDir });
    const sha = 'ab'.repeat(32);
    mkdirSync(join(dataDir, 'blobs', 'ab'), { recursive: true });
    writeFileSync(join(dataDir, 'blobs', 'ab', sha), 'renamed, then crashed before the row');
    const tmp = join(dataDir, 'blobs', 'tmp');
    // A live process (this test's parent) writing right now: kept until older than a pin.
    writeFileSync(join(tmp, `${process.ppid}.live.part`), 'in progress');
    // A writer that no longer exists.
    writeFileSync(join(tmp, '2147483646.dead.part'), 'left behind');
    const report = await s.sweep();
    expect(report).toMatchObject({ orphanBlobs: 1, tempFiles: 1 });
    expect(existsSync(join(dataDir, 'blobs', 'ab', sha))).toBe(false);
    expect(readdirSync(tmp)).toEqual([`${process.ppid}.live.part`]);
    const old = (Date.now() - PIN_TTL_MS - 60_000) / 1000;
    utimesSync(join(tmp, `${process.ppid}.live.part`), old, old);
    expect((await s.sweep()).tempFiles).toBe(1);
    expect(readdirSync(tmp)).toEqual([]);
    await s.close();
  });
});
