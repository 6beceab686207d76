import { describe, it } from 'vitest';
import { storeContract } from './contract.ts';
import { PgTestDatabases } from './pg-databases.ts';

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
  const dbs = new PgTestDatabases(adminUrl, 't');
  storeContract('postgres', {
    setup: () => dbs.setup(),
    async freshConfig() {
      return { dataDir: '/nonexistent-unused-by-postgres', databaseUrl: await dbs.fresh(), maxConnections: 12 };
    },
    rawComparisonRow: (config, id) => dbs.rawComparisonRow(config, id),
    teardown: () => dbs.teardown(),
  });
}
