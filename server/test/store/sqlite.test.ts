import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, PIN_TTL_MS } from '../../src/store/index.ts';
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
    ]);
    db.close();
    expect(existsSync(join(dataDir, 'blobs', ref.sha256.slice(0, 2), ref.sha256))).toBe(true);
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
