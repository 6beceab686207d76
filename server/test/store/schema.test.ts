import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadMigrations, renderMigration } from '../../src/store/common.ts';
import { openStore } from '../../src/store/index.ts';
import { PgTestDatabases } from './pg-databases.ts';

/*
 * The schema a fresh database ends with after every migration, dumped as text and held against the
 * files in schema/: the migrations may be reorganised (one source for both dialects), the schema they
 * apply may not change. SQLite keeps each statement's text, so it is compared without comments and
 * with white space folded; PostgreSQL is read back from its catalog. A new migration changes the schema on
 * purpose: record it with `npx vitest run server/test/store/schema.test.ts -u` and review the files' diff.
 */

/** Drops `-- …` comments and folds white space: what SQLite stored, minus its layout. */
function normalSql(sql: string | null): string {
  if (!sql) return '';
  return sql
    .split('\n')
    .map((l) => l.replace(/--.*$/, ''))
    .join(' ')
    .replace(/\s+/g, ' ')
    .replace(/\( /g, '(')
    .replace(/ \)/g, ')')
    .replace(/ ,/g, ',')
    .trim();
}

describe('store schema: sqlite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stagediff-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a fresh database ends with the recorded schema', async () => {
    const store = await openStore({ dataDir: dir });
    await store.close();
    const db = new Database(join(dir, 'stagediff.db'), { readonly: true });
    try {
      const rows = db
        .prepare(
          "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name",
        )
        .all() as { type: string; name: string; tbl_name: string; sql: string | null }[];
      const lines = rows.map((r) => `${r.type} ${r.name} on ${r.tbl_name}: ${normalSql(r.sql)}`);
      const versions = db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as {
        version: number;
        name: string;
      }[];
      for (const v of versions) lines.push(`migration ${v.version} ${v.name}`);
      await expect(`${lines.join('\n')}\n`).toMatchFileSnapshot('./schema/sqlite.txt');
    } finally {
      db.close();
    }
  });
});

const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;
describe.skipIf(!adminUrl)('store schema: postgres', () => {
  const dbs = new PgTestDatabases(adminUrl ?? '', 'schema');
  beforeAll(() => dbs.setup());
  afterAll(() => dbs.teardown());

  it('a fresh database ends with the recorded schema', async () => {
    const config = { dataDir: '/nonexistent-unused-by-postgres', databaseUrl: await dbs.fresh() };
    const store = await openStore(config);
    await store.close();
    const lines: string[] = [];
    const columns = await dbs.query<Record<string, string>>(
      config,
      `SELECT c.relname AS tbl, a.attname AS col, format_type(a.atttypid, a.atttypmod) AS type,
              a.attnotnull AS notnull, COALESCE(pg_get_expr(d.adbin, d.adrelid), '') AS def,
              a.attidentity AS ident, a.attgenerated AS gen, a.attstorage AS storage, a.attnum AS num
         FROM pg_attribute a
         JOIN pg_class c ON c.oid = a.attrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND a.attnum > 0 AND NOT a.attisdropped
        ORDER BY c.relname, a.attnum`,
    );
    for (const c of columns)
      lines.push(
        `column ${c.tbl}.${c.col} #${c.num} ${c.type}${c.notnull ? ' not null' : ''}` +
          `${c.def ? ` default ${c.def}` : ''}${c.ident ? ` identity ${c.ident}` : ''}` +
          `${c.gen ? ` generated ${c.gen}` : ''} storage ${c.storage}`,
      );
    const constraints = await dbs.query<Record<string, string>>(
      config,
      `SELECT c.relname AS tbl, k.conname AS name, pg_get_constraintdef(k.oid) AS def,
              k.condeferrable AS deferrable, k.condeferred AS deferred
         FROM pg_constraint k
         JOIN pg_class c ON c.oid = k.conrelid
         JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public'
        ORDER BY c.relname, k.conname`,
    );
    for (const k of constraints) lines.push(`constraint ${k.tbl}.${k.name}: ${k.def}`);
    const indexes = await dbs.query<Record<string, string>>(
      config,
      "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname",
    );
    for (const i of indexes) lines.push(`index ${i.indexname}: ${i.indexdef}`);
    const sequences = await dbs.query<Record<string, string>>(
      config,
      "SELECT sequencename, data_type FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename",
    );
    for (const s of sequences) lines.push(`sequence ${s.sequencename} ${s.data_type}`);
    const versions = await dbs.query<{ version: number; name: string }>(
      config,
      'SELECT version, name FROM schema_migrations ORDER BY version',
    );
    for (const v of versions) lines.push(`migration ${v.version} ${v.name}`);
    await expect(`${lines.join('\n')}\n`).toMatchFileSnapshot('./schema/postgres.txt');
  });
});

describe('shared migrations', () => {
  it('render per dialect: words replaced, dialect-only lines kept for their dialect alone', () => {
    const sql = 'CREATE TABLE t (\n  a {{text}} NOT NULL,\n@postgres   b bytea,\n  c {{bool}}\n){{strict}};';
    expect(renderMigration(sql, 'sqlite')).toBe('CREATE TABLE t (\n  a TEXT NOT NULL,\n  c INTEGER\n) STRICT;');
    expect(renderMigration(sql, 'postgres')).toBe('CREATE TABLE t (\n  a text NOT NULL,\n  b bytea,\n  c boolean\n);');
  });

  it('refuse a word or a dialect they do not know, naming the file', () => {
    expect(() => renderMigration('x {{uuid}}', 'sqlite', '009-x.sql')).toThrow(/009-x\.sql.*\{\{uuid\}\}/);
    expect(() => renderMigration('@mysql x', 'postgres', '009-x.sql')).toThrow(/009-x\.sql.*@mysql/);
  });

  it('number each dialect 1..n with no gap or twin, version 1 from the shared folder', () => {
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const ms = loadMigrations(dialect);
      expect(ms.map((m) => m.version)).toEqual(ms.map((_, i) => i + 1));
      expect(ms[0]!.name).toBe('init');
      expect(ms[0]!.sql).not.toMatch(/\{\{\w+\}\}|^@/m);
    }
  });
});
