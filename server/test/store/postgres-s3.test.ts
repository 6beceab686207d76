import { describe, it } from 'vitest';
import { parseBlobStoreUrl } from '../../src/store/index.ts';
import { storeContract } from './contract.ts';
import { PgTestDatabases } from './pg-databases.ts';
import { TestS3Server, findVersitygw, warnNoVersitygw } from './s3-server.ts';

/*
 * The store contract on PostgreSQL with blob bytes in an S3 bucket (BLOB_STORE): a real PostgreSQL
 * (STAGEDIFF_TEST_DATABASE_URL) and a real S3 server (versitygw, checking signatures). Each test
 * gets a new database and its own prefix in the bucket.
 */
const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;
const versitygw = findVersitygw();
const MiB = 1024 * 1024;

if (!adminUrl || !versitygw) {
  if (!versitygw) warnNoVersitygw('PostgreSQL + S3 store contract');
  else console.warn('\n*** PostgreSQL + S3 store contract SKIPPED: STAGEDIFF_TEST_DATABASE_URL is not set ***\n');
  describe.skip('store contract: postgres + s3', () => {
    it('needs STAGEDIFF_TEST_DATABASE_URL and versitygw', () => {});
  });
} else {
  const dbs = new PgTestDatabases(adminUrl, 's3');
  const s3 = new TestS3Server(versitygw);
  let n = 0;
  const prefixOf = (blobStore: string | undefined) => parseBlobStoreUrl(blobStore ?? '').prefix;

  storeContract('postgres + s3', {
    async setup() {
      await dbs.setup();
      await s3.start();
      // The stores (and the crash tests' children) read the standard AWS environment.
      Object.assign(process.env, s3.env);
    },
    async freshConfig() {
      return {
        dataDir: '/nonexistent-unused-by-postgres',
        databaseUrl: await dbs.fresh(),
        maxConnections: 12,
        blobStore: `s3://${s3.bucket}/contract-${n++}`,
      };
    },
    rawComparisonRow: (config, id) => dbs.rawComparisonRow(config, id),
    // Two 8 MiB parts are in the bucket when the child dies.
    crashAfterBytes: 20 * MiB,
    async bucketState(config) {
      const prefix = prefixOf(config.blobStore);
      return { objects: (await s3.objects(prefix)).length, uploads: (await s3.openUploads(prefix)).length };
    },
    async settle(config) {
      // PostgreSQL releases a killed writer's advisory locks once it has seen its connection close.
      for (let i = 0; i < 200; i++) {
        const held = await dbs.query<{ n: string }>(
          config,
          "SELECT COUNT(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE l.locktype = 'advisory' AND d.datname = current_database()",
        );
        if (Number(held[0]!.n) === 0) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error('a killed child still holds advisory locks after 10 s');
    },
    async teardown() {
      await dbs.teardown();
      await s3.close();
    },
  });
}
