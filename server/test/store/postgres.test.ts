import pg from 'pg';
import { describe, it } from 'vitest';
import { storeContract } from './contract.ts';

/*
 * Runs the store contract on a real PostgreSQL when STAGEDIFF_TEST_DATABASE_URL is set, e.g.
 *   eval "export $(scripts/pg-test-cluster.sh | grep '^DATABASE_URL=')"
 *   STAGEDIFF_TEST_DATABASE_URL=$DATABASE_URL npx vitest run server/test/store
 * Each test gets a new database (dropped afterwards), so reruns start clean.
 */
const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;

if (!adminUrl) {
  console.warn(
    [
      '',
      '**********************************************************************',
      '*  PostgreSQL store contract SKIPPED: STAGEDIFF_TEST_DATABASE_URL is  *',
      '*  not set. Start one with scripts/pg-test-cluster.sh and pass its    *',
      '*  DATABASE_URL as STAGEDIFF_TEST_DATABASE_URL.                       *',
      '**********************************************************************',
      '',
    ].join('\n'),
  );
  describe.skip('store contract: postgres', () => {
    it('needs STAGEDIFF_TEST_DATABASE_URL', () => {});
  });
} else {
  const created: string[] = [];
  let admin: pg.Client;
  let n = 0;
  const run = `${process.pid}_${Date.now().toString(36)}`;

  const urlFor = (db: string): string => {
    const u = new URL(adminUrl);
    u.pathname = `/${db}`;
    return u.toString();
  };

  storeContract('postgres', {
    async setup() {
      admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
    },
    async freshConfig() {
      const db = `stagediff_t_${run}_${n++}`;
      await admin.query(`CREATE DATABASE ${db}`);
      created.push(db);
      return { dataDir: '/nonexistent-unused-by-postgres', databaseUrl: urlFor(db), maxConnections: 12 };
    },
    async rawComparisonRow(config, id) {
      const c = new pg.Client({ connectionString: config.databaseUrl });
      await c.connect();
      try {
        return JSON.stringify((await c.query('SELECT * FROM comparisons WHERE id = $1', [id])).rows[0]);
      } finally {
        await c.end();
      }
    },
    async teardown() {
      for (const db of created.splice(0)) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await admin.end();
    },
  });
}
