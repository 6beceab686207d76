/**
 * Storage bounds: a comparison holds at most MAX_COMPARISON_BYTES of files (413 past it) and the
 * instance at most MAX_STORAGE_BYTES (507 past it), each refusal naming its setting and storing
 * nothing; the comparison shows what it uses. On SQLite and on PostgreSQL.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const cpu = (stage: string, run: number) => join(fixturesDir, `demo/${stage}/run-${run}/cpu.pb.gz`);
const size = (p: string) => statSync(p).size;
const adminUrl = process.env.STAGEDIFF_TEST_DATABASE_URL;

function quotaSuite(dialect: string, env: () => Promise<Record<string, string>>) {
  describe(`storage bounds on ${dialect}`, () => {
    const one = cpu('baseline', 1);
    const two = cpu('baseline', 2);
    const three = cpu('pooled', 3);

    it('refuses a file that would take a comparison past MAX_COMPARISON_BYTES, and shows the usage', async () => {
      const app = await testApp({ ...(await env()), MAX_COMPARISON_BYTES: String(size(one) + size(two) + 100) });
      try {
        const c = await createComparison(app, 'bounded');
        const st = await addStage(app, c.id, c.auth, 'a');
        expect((await upload(app, c.id, st, c.auth, [one, two])).statusCode).toBe(200);
        const r = await upload(app, c.id, st, c.auth, [three]);
        expect(r.statusCode).toBe(413);
        expect(r.json().error.code).toBe('comparison-quota');
        expect(r.json().error.message).toMatch(/cpu\.pb\.gz .*MAX_COMPARISON_BYTES/);
        const view = (await app.inject({ url: `/api/comparisons/${c.id}` })).json();
        expect(view.stages[0].artifacts).toHaveLength(2);
        expect(view.usage).toEqual({ bytes: size(one) + size(two), maxBytes: size(one) + size(two) + 100 });
        // Another comparison has its own bound.
        const d = await createComparison(app, 'other');
        const sd = await addStage(app, d.id, d.auth, 'a');
        expect((await upload(app, d.id, sd, d.auth, [three])).statusCode).toBe(200);
        // Removing a file makes room again.
        await app.inject({
          method: 'DELETE',
          url: `/api/comparisons/${c.id}/artifacts/${view.stages[0].artifacts[0].id}`,
          headers: c.auth,
        });
        expect((await upload(app, c.id, st, c.auth, [three])).statusCode).toBe(200);
      } finally {
        await app.close();
      }
    }, 60_000);

    it('lets uploads checked at the same time see each other: two files that fit only one at a time are never both stored', async () => {
      const bound = Math.max(size(one), size(two)) + 100;
      const app = await testApp({ ...(await env()), MAX_COMPARISON_BYTES: String(bound) });
      try {
        const c = await createComparison(app, 'together');
        const st = await addStage(app, c.id, c.auth, 'a');
        // Both uploads are checked at the same moment: each one's read of what the comparison holds
        // waits until the other's has started (the read is the quota check's only one).
        const store = app.ctx.store;
        const read = store.getComparisonTree.bind(store);
        let arrived = 0;
        let bothIn: () => void = () => undefined;
        const barrier = new Promise<void>((r) => {
          bothIn = r;
        });
        store.getComparisonTree = async (id) => {
          if (++arrived === 2) bothIn();
          await Promise.race([barrier, new Promise((r) => setTimeout(r, 10_000))]);
          return read(id);
        };
        const rs = await Promise.all([one, two].map((f) => upload(app, c.id, st, c.auth, [f])));
        store.getComparisonTree = read;
        expect(arrived).toBeGreaterThanOrEqual(2);
        const statuses = rs.map((r) => r.statusCode);
        expect(statuses).toContain(413);
        expect(statuses.filter((x) => x === 200).length).toBeLessThanOrEqual(1);
        const view = (await app.inject({ url: `/api/comparisons/${c.id}` })).json();
        expect(view.usage.bytes).toBeLessThanOrEqual(bound);
        expect(view.stages[0].artifacts.length).toBeLessThanOrEqual(1);
      } finally {
        await app.close();
      }
    }, 60_000);

    it('refuses a file past MAX_STORAGE_BYTES with a 507 naming it; bytes already stored cost nothing more', async () => {
      const app = await testApp({ ...(await env()), MAX_STORAGE_BYTES: String(size(one) + size(two) + 100) });
      try {
        const c = await createComparison(app, 'instance');
        const st = await addStage(app, c.id, c.auth, 'a');
        expect((await upload(app, c.id, st, c.auth, [one, two])).statusCode).toBe(200);
        const r = await upload(app, c.id, st, c.auth, [three]);
        expect(r.statusCode).toBe(507);
        expect(r.json().error.code).toBe('storage-quota');
        expect(r.json().error.message).toMatch(/MAX_STORAGE_BYTES/);
        expect(await app.ctx.store.storedBytes()).toBe(size(one) + size(two));
        // The same bytes in another comparison are stored once: they fit.
        const d = await createComparison(app, 'same bytes');
        const sd = await addStage(app, d.id, d.auth, 'a');
        expect((await upload(app, d.id, sd, d.auth, [one])).statusCode).toBe(200);
        expect((await app.inject({ url: `/api/comparisons/${d.id}` })).json().usage.bytes).toBe(size(one));
      } finally {
        await app.close();
      }
    }, 60_000);
  });
}

quotaSuite('SQLite', async () => ({}));

describe.skipIf(!adminUrl)('on PostgreSQL', () => {
  let admin: pg.Client;
  const dbs: string[] = [];
  beforeAll(async () => {
    admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
  });
  afterAll(async () => {
    for (const db of dbs) await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.end();
  });
  // A database of its own for each test: the bounds are about what the instance holds.
  quotaSuite('PostgreSQL', async () => {
    const db = `stagediff_quota_${process.pid}_${dbs.length}_${Date.now().toString(36)}`;
    await admin.query(`CREATE DATABASE ${db}`);
    dbs.push(db);
    const url = new URL(adminUrl!);
    url.pathname = `/${db}`;
    return { DATABASE_URL: url.toString() };
  });
});

// The bounds apply to what is uploaded, not to an app built in a test without them.
describe('without bounds', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp({ MAX_STORAGE_BYTES: '0', MAX_COMPARISON_BYTES: '0' });
  });
  afterAll(async () => app.close());
  it('shows the usage with no bound', async () => {
    const c = await createComparison(app, 'free');
    const st = await addStage(app, c.id, c.auth, 'a');
    expect((await upload(app, c.id, st, c.auth, [cpu('baseline', 1)])).statusCode).toBe(200);
    expect((await app.inject({ url: `/api/comparisons/${c.id}` })).json().usage).toEqual({
      bytes: size(cpu('baseline', 1)),
      maxBytes: null,
    });
  });
});
