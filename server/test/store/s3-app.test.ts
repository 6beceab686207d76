/**
 * The server with blob bytes in an S3 bucket (BLOB_STORE), over a real PostgreSQL and a real S3
 * server (versitygw, checking signatures): an upload acknowledged is in the bucket, byte for byte; a
 * deleted comparison leaves no object; and when the bucket cannot be used (the server stopped, wrong
 * credentials) /healthz and uploads say so with 503 while views already computed keep being served.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { PgTestDatabases } from './pg-databases.ts';
import { TestS3Server, findVersitygw, warnNoVersitygw } from './s3-server.ts';

const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;
const versitygw = findVersitygw();
if (!versitygw) warnNoVersitygw('The server with blobs in S3');
else if (!adminUrl)
  console.warn('\n*** The server with blobs in S3 SKIPPED: STAGEDIFF_TEST_DATABASE_URL is not set ***\n');

const run1 = (f: string) => join(fixturesDir, 'demo/baseline/run-1', f);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe.skipIf(!adminUrl || !versitygw)('the server with blobs in an S3 bucket', () => {
  const dbs = new PgTestDatabases(adminUrl ?? '', 's3app');
  let s3: TestS3Server;
  let databaseUrl: string;
  let app: StagediffApp;
  const prefix = 'app/';
  let env: Record<string, string>;

  beforeAll(async () => {
    await dbs.setup();
    s3 = new TestS3Server(versitygw!);
    await s3.start();
    Object.assign(process.env, s3.env);
    databaseUrl = await dbs.fresh();
    env = {
      DATABASE_URL: databaseUrl,
      BLOB_STORE: `s3://${s3.bucket}/${prefix}`,
      BLOB_STORE_TIMEOUT_MS: '5000',
      // One worker process: it opens the store (and the bucket) itself.
      ANALYSIS_WORKERS: '1',
    };
    app = await testApp(env);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await dbs.teardown();
    await s3?.close();
  });

  it('puts every upload in the bucket before acknowledging it, and removes the objects of a deleted comparison', async () => {
    const health = await app.inject({ url: '/healthz' });
    expect(health.json()).toMatchObject({ status: 'ok', store: 'postgres', blobs: 's3' });
    const c = await createComparison(app, 'in a bucket');
    const stage = await addStage(app, c.id, c.auth, 'baseline');
    const r = await upload(app, c.id, stage, c.auth, [run1('cpu.pb.gz'), run1('wrk.txt')]);
    expect(r.statusCode).toBe(200);
    const objects = await s3.objects(`${prefix}blobs/`);
    expect(objects).toHaveLength(2);
    const inBucket = new Set<string>();
    for (const key of objects) inBucket.add(sha256(await s3.read(key)));
    expect(inBucket).toEqual(new Set([sha256(readFileSync(run1('cpu.pb.gz'))), sha256(readFileSync(run1('wrk.txt')))]));
    // Served back from the bucket, byte for byte.
    const artifact = r.json().results[0].artifact;
    const raw = await app.inject({ url: `/api/artifacts/${artifact.id}/raw` });
    expect(raw.statusCode).toBe(200);
    expect(raw.rawPayload.equals(readFileSync(run1('cpu.pb.gz')))).toBe(true);

    expect((await app.inject({ method: 'DELETE', url: `/api/comparisons/${c.id}`, headers: c.auth })).statusCode).toBe(
      204,
    );
    expect(await s3.objects(`${prefix}blobs/`)).toEqual([]);
    expect(await s3.openUploads(prefix)).toEqual([]);
  });

  it('says so with 503 while the bucket is unreachable, keeps serving computed views, and recovers', async () => {
    const c = await createComparison(app, 'outage');
    const stage = await addStage(app, c.id, c.auth, 'baseline');
    const up = await upload(app, c.id, stage, c.auth, [run1('cpu.pb.gz')]);
    expect(up.statusCode).toBe(200);
    const artifactId = up.json().results[0].artifact.id;
    const top = `/api/comparisons/${c.id}/top?stage=${stage}`;
    const before = await app.inject({ url: top });
    expect(before.statusCode).toBe(200);

    await s3.stop();
    try {
      const health = await app.inject({ url: '/healthz' });
      expect(health.statusCode).toBe(503);
      expect(health.json()).toMatchObject({ status: 'unavailable', blobs: 's3' });
      expect(health.json().error).toMatch(/blob store s3:\/\/stagediff-test\/app\/ cannot be reached \(ECONNREFUSED\)/);
      // A write needs the bucket.
      const refused = await upload(app, c.id, stage, c.auth, [run1('heap.pb.gz')]);
      expect(refused.statusCode).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();
      expect(refused.json().error.code).toBe('storage-unavailable');
      expect(refused.json().error.message).toMatch(/^heap\.pb\.gz: the blob store \(object storage\) is unavailable/);
      // Reads that need the bytes say so; views computed before, and the comparison, are served.
      const raw = await app.inject({ url: `/api/artifacts/${artifactId}/raw` });
      expect(raw.statusCode).toBe(503);
      expect(raw.json().error.code).toBe('storage-unavailable');
      const during = await app.inject({ url: top });
      expect(during.statusCode).toBe(200);
      expect(during.body).toBe(before.body);
      expect((await app.inject({ url: `/api/comparisons/${c.id}` })).statusCode).toBe(200);
      // A view not computed before, of a profile parsed at upload (its compact model is in the
      // database): served by the worker without the bucket.
      const flame = await app.inject({ url: `/api/comparisons/${c.id}/flamegraph?stage=${stage}` });
      expect(flame.statusCode).toBe(200);
    } finally {
      await s3.start();
    }

    expect((await app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect((await upload(app, c.id, stage, c.auth, [run1('heap.pb.gz')])).statusCode).toBe(200);
    // The refused upload's object key waited for a sweep; nothing is left once it ran.
    await app.ctx.store.sweep();
    const st = await app.ctx.store.stats();
    expect(st.tempFiles).toBe(0);
    expect(st.blobObjects).toBe(st.blobs);
  });

  it('says so with 503 on a replica with wrong credentials, which still serves computed views', async () => {
    const c = await createComparison(app, 'credentials');
    const stage = await addStage(app, c.id, c.auth, 'baseline');
    expect((await upload(app, c.id, stage, c.auth, [run1('allocs.pb.gz')])).statusCode).toBe(200);
    const top = `/api/comparisons/${c.id}/top?stage=${stage}`;
    const good = await app.inject({ url: top });
    expect(good.statusCode).toBe(200);

    const secret = process.env.AWS_SECRET_ACCESS_KEY;
    process.env.AWS_SECRET_ACCESS_KEY = `${secret}-but-wrong`;
    let replica: StagediffApp | undefined;
    try {
      replica = await testApp({ ...env, ANALYSIS_WORKERS: '0' });
      const health = await replica.inject({ url: '/healthz' });
      expect(health.statusCode).toBe(503);
      expect(health.json().error).toMatch(/refused the credentials or the access/);
      expect(health.json().error).not.toContain(secret);
      const refused = await upload(replica, c.id, stage, c.auth, [run1('mutex.pb.gz')]);
      expect(refused.statusCode).toBe(503);
      expect(refused.json().error.code).toBe('storage-unavailable');
      const view = await replica.inject({ url: top });
      expect(view.statusCode).toBe(200);
      expect(view.body).toBe(good.body);
    } finally {
      process.env.AWS_SECRET_ACCESS_KEY = secret;
      await replica?.close();
    }
  });
});
