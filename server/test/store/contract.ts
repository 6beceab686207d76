/**
 * The store contract: every Store implementation must pass these tests. `sqlite.test.ts` and
 * `postgres.test.ts` register them with a harness that hands out fresh, empty backing stores.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  openStore,
  cacheGetJson,
  cachePutJson,
  PIN_TTL_MS,
  VIEW_TOUCH_MS,
  StageCapturesTooLargeError,
  StoreError,
  TooLargeError,
  type ByteSource,
  type CacheKey,
  type Store,
  type StoreConfig,
  type StoreStats,
} from '../../src/store/index.ts';
import { bytesOf } from './bytes.ts';
import { ARTIFACT_KINDS } from '../../src/store/types.ts';

export interface StoreHarness {
  setup?(): Promise<void>;
  teardown?(): Promise<void>;
  /** Config of a new, empty store (new directory or new database) nobody else uses. */
  freshConfig(): Promise<StoreConfig>;
  /** Every text value stored for a comparison row, so tests can check what is (not) kept. */
  rawComparisonRow(config: StoreConfig, id: string): Promise<string>;
  /**
   * Where a crash test's child stalls, mid-write (default 3 MiB). A bucket is written in parts of
   * several MiB, so there it is later, for parts to be in the bucket when the child dies.
   */
  crashAfterBytes?: number;
  /** With a bucket: its objects and open multipart uploads under the store's prefix. */
  bucketState?(config: StoreConfig): Promise<{ objects: number; uploads: number }>;
  /** Waits until the database has seen a killed child's connections end (its locks released). */
  settle?(config: StoreConfig): Promise<void>;
}

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const CRASH_CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
const MiB = 1024 * 1024;

async function* chunked(buf: Buffer, size = 64 * 1024): ByteSource {
  for (let off = 0; off < buf.length; off += size) yield buf.subarray(off, off + size);
}

function sha256(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

async function collect(stream: AsyncIterable<Buffer | Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

async function expectStoreError(p: Promise<unknown>, code: StoreError['code']): Promise<void> {
  const e = await rejection(p);
  expect(e).toBeInstanceOf(StoreError);
  expect((e as StoreError).code).toBe(code);
}

const EMPTY_COUNTS = {
  comparisons: 0,
  stages: 0,
  artifacts: 0,
  blobs: 0,
  blobBytes: 0,
  pins: 0,
  blobObjects: 0,
  tempFiles: 0,
};

function counts(s: StoreStats): Omit<StoreStats, 'schemaVersion' | 'cacheEntries' | 'cacheBytes'> {
  const { schemaVersion: _v, cacheEntries: _c, cacheBytes: _b, ...rest } = s;
  return rest;
}

export function storeContract(name: string, harness: StoreHarness): void {
  describe(`store contract: ${name}`, () => {
    const opened: Store[] = [];
    let config: StoreConfig;
    const crashAfter = harness.crashAfterBytes ?? 3 * MiB;

    async function open(cfg: StoreConfig = config, sweepOnOpen = true): Promise<Store> {
      const s = await openStore({ ...cfg, sweepOnOpen });
      opened.push(s);
      return s;
    }

    /** A fresh store with one comparison and one stage. */
    async function withStage(): Promise<{ s: Store; cid: string; sid: string; token: string }> {
      config = await harness.freshConfig();
      const s = await open();
      const { comparison, editToken } = await s.createComparison({ title: 'story' });
      const stage = await s.createStage(comparison.id, { name: 'baseline' });
      return { s, cid: comparison.id, sid: stage.id, token: editToken! };
    }

    beforeAll(async () => {
      await harness.setup?.();
    });
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((s) => s.close()));
    });
    afterAll(async () => {
      await harness.teardown?.();
    });

    describe('schema', () => {
      it('applies every migration once, even when two instances open a new database at the same time', async () => {
        config = await harness.freshConfig();
        const [a, b] = await Promise.all([open(), open()]);
        const [sa, sb] = await Promise.all([a!.stats(), b!.stats()]);
        expect(sa.schemaVersion).toBeGreaterThanOrEqual(1);
        expect(sb.schemaVersion).toBe(sa.schemaVersion);
        expect(counts(sa)).toEqual(EMPTY_COUNTS);
        await a!.close();
        const again = await open();
        expect((await again.stats()).schemaVersion).toBe(sa.schemaVersion);
      });
    });

    describe('comparisons', () => {
      it('creates, reads, updates and deletes', async () => {
        config = await harness.freshConfig();
        const s = await open();
        const before = Date.now();
        const { comparison, editToken } = await s.createComparison({
          title: 'JSON encoding',
          description: 'reflection to codegen',
        });
        expect(comparison).toMatchObject({
          title: 'JSON encoding',
          description: 'reflection to codegen',
          readOnly: false,
          revision: 1,
        });
        expect(Date.parse(comparison.createdAt)).toBeGreaterThanOrEqual(before - 1000);
        expect(comparison.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
        expect(typeof editToken).toBe('string');

        expect(await s.getComparison(comparison.id)).toEqual(comparison);
        const updated = await s.updateComparison(comparison.id, { title: 'JSON encoding, again' });
        expect(updated).toMatchObject({
          title: 'JSON encoding, again',
          description: 'reflection to codegen',
          revision: 2,
        });
        expect((await s.updateComparison(comparison.id, { description: '' })).description).toBe('');

        expect(await s.getComparison('no-such-id')).toBeNull();
        expect(await s.getComparisonTree('no-such-id')).toBeNull();
        await expectStoreError(s.updateComparison('no-such-id', { title: 'x' }), 'not-found');

        expect(await s.deleteComparison(comparison.id)).toBe(true);
        expect(await s.getComparison(comparison.id)).toBeNull();
        expect(await s.deleteComparison(comparison.id)).toBe(false);
      });

      it('generates distinct URL-safe ids of at least 128 bits', async () => {
        config = await harness.freshConfig();
        const s = await open();
        const ids = new Set<string>();
        for (let i = 0; i < 40; i++) ids.add((await s.createComparison({ title: `c${i}` })).comparison.id);
        expect(ids.size).toBe(40);
        for (const id of ids) {
          expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(Buffer.from(id, 'base64url').length).toBeGreaterThanOrEqual(16);
        }
      });

      it('accepts an explicit id and a read-only flag (the demo)', async () => {
        config = await harness.freshConfig();
        const s = await open();
        const demo = await s.createComparison({ id: 'demo', title: 'Demo', readOnly: true });
        expect(demo.editToken).toBeNull();
        expect(demo.comparison).toMatchObject({ id: 'demo', readOnly: true });
        expect(await s.verifyEditToken('demo', '')).toBe(false);
        expect(await s.verifyEditToken('demo', 'anything')).toBe(false);
        // Trusted code (the seeder) may still fill it.
        const stage = await s.createStage('demo', { name: 'baseline' });
        expect(stage.position).toBe(0);
        await expectStoreError(s.createComparison({ id: 'demo', title: 'again' }), 'conflict');
        await expectStoreError(s.createComparison({ id: 'a/b', title: 'bad' }), 'invalid');
        await expectStoreError(s.createComparison({ id: '', title: 'bad' }), 'invalid');
        expect((await s.getComparison('demo'))!.title).toBe('Demo');
      });

      it('checks edit tokens against a stored hash only', async () => {
        config = await harness.freshConfig();
        const s = await open();
        const a = await s.createComparison({ title: 'a' });
        const b = await s.createComparison({ title: 'b' });
        expect(await s.verifyEditToken(a.comparison.id, a.editToken!)).toBe(true);
        expect(await s.verifyEditToken(a.comparison.id, b.editToken!)).toBe(false);
        expect(await s.verifyEditToken(a.comparison.id, a.editToken!.slice(0, -1))).toBe(false);
        expect(await s.verifyEditToken(a.comparison.id, '')).toBe(false);
        expect(await s.verifyEditToken('unknown', a.editToken!)).toBe(false);
        const raw = await harness.rawComparisonRow(config, a.comparison.id);
        expect(raw).not.toContain(a.editToken!);
        expect(raw).toContain(createHash('sha256').update(a.editToken!).digest('hex'));
      });
    });

    describe('kinds', () => {
      it('takes an artifact of every kind', async () => {
        const { s, cid, sid } = await withStage();
        for (const kind of ARTIFACT_KINDS) {
          const a = await s.addArtifact({
            comparisonId: cid,
            stageId: sid,
            kind,
            format: 'x',
            filename: kind,
            summary: {},
            src: chunked(bytesOf(kind.length, 10)),
            maxBytes: MiB,
          });
          expect((await s.getArtifact(a.id))!.kind).toBe(kind);
        }
      });
    });

    describe('text', () => {
      it('refuses a NUL character in titles and names, and keeps a NUL in a summary as U+FFFD', async () => {
        const { s, cid, sid } = await withStage();
        await expectStoreError(s.createComparison({ title: 'a\u0000b' }), 'invalid');
        await expectStoreError(s.updateComparison(cid, { description: '\u0000' }), 'invalid');
        await expectStoreError(s.createStage(cid, { name: 'x', note: 'n\u0000' }), 'invalid');
        await expectStoreError(s.updateStage(cid, sid, { name: '\u0000' }), 'invalid');
        const a = await s.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'p',
          summary: { sampleTypes: [{ type: 'cpu\u0000x', unit: 'ns' }], text: '\\u0000' },
          src: chunked(bytesOf(41, 100)),
          maxBytes: MiB,
        });
        expect((await s.getArtifact(a.id))!.summary).toEqual({
          sampleTypes: [{ type: 'cpu\ufffdx', unit: 'ns' }],
          text: '\\u0000',
        });
      });
    });

    describe('stages', () => {
      it('appends, renames, annotates and lists by position', async () => {
        const { s, cid, sid } = await withStage();
        const b = await s.createStage(cid, { name: 'easyjson', note: 'generated encoders' });
        const c = await s.createStage(cid, { name: 'pools' });
        expect((await s.listStages(cid)).map((x) => [x.name, x.position, x.note])).toEqual([
          ['baseline', 0, ''],
          ['easyjson', 1, 'generated encoders'],
          ['pools', 2, ''],
        ]);
        const rev = (await s.getComparison(cid))!.revision;
        const renamed = await s.updateStage(cid, c.id, { name: 'sync.Pool' });
        expect(renamed).toMatchObject({ id: c.id, name: 'sync.Pool', note: '', position: 2 });
        expect((await s.updateStage(cid, c.id, { note: 'pooled buffers' })).name).toBe('sync.Pool');
        expect((await s.getComparison(cid))!.revision).toBe(rev + 2);
        expect(await s.getStage(cid, b.id)).toMatchObject({ name: 'easyjson', comparisonId: cid });
        expect(await s.getStage(cid, 'nope')).toBeNull();
        await expectStoreError(s.createStage('nope', { name: 'x' }), 'not-found');
        await expectStoreError(s.updateStage(cid, 'nope', { name: 'x' }), 'not-found');
        expect(sid).toBeTruthy();
      });

      it('appends capture records to a stage, in order, and bumps the revision', async () => {
        const { s, cid, sid } = await withStage();
        expect((await s.getStage(cid, sid))!.captures).toEqual([]);
        const rev = (await s.getComparison(cid))!.revision;
        const first = {
          schema: 'stagediff-capture/1',
          runs: [{ run: 1, window: { seconds: 3 } }],
          note: 'ünïcode "q"',
        };
        await s.addStageCapture(cid, sid, first);
        const after = await s.addStageCapture(cid, sid, { schema: 'stagediff-capture/1', runs: [] });
        expect(after.captures).toEqual([first, { schema: 'stagediff-capture/1', runs: [] }]);
        expect((await s.getComparison(cid))!.revision).toBe(rev + 2);
        expect((await s.getComparisonTree(cid))!.stages[0]!.captures).toHaveLength(2);
        await expectStoreError(s.addStageCapture(cid, sid, [1, 2]), 'invalid');
        await expectStoreError(s.addStageCapture(cid, sid, { big: 'x'.repeat(300 * 1024) }), 'invalid');
        await expectStoreError(s.addStageCapture(cid, 'nope', {}), 'not-found');
        const other = (await s.createComparison({ title: 'other' })).comparison.id;
        await expectStoreError(s.addStageCapture(other, sid, {}), 'not-found');
        expect((await s.getStage(cid, sid))!.captures).toHaveLength(2);
        for (let i = 2; i < 100; i++) await s.addStageCapture(cid, sid, { i });
        await expectStoreError(s.addStageCapture(cid, sid, { i: 100 }), 'invalid');
        expect((await s.getStage(cid, sid))!.captures).toHaveLength(100);
      });

      it('holds a stage to its capture bound, concurrent records included', async () => {
        const { s, cid, sid } = await withStage();
        const bound = MiB;
        // 12 records of ~200 KB at once: five fit in 1 MiB, the other seven are refused.
        const record = (i: number) => ({ schema: 'stagediff-capture/1', i, runs: [{ note: 'x'.repeat(200 * 1024) }] });
        const results = await Promise.allSettled(
          Array.from({ length: 12 }, (_, i) => s.addStageCapture(cid, sid, record(i), { maxStageBytes: bound })),
        );
        const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
        for (const e of refused) {
          expect(e).toBeInstanceOf(StageCapturesTooLargeError);
          expect((e as StageCapturesTooLargeError).code).toBe('too-large');
          expect((e as StageCapturesTooLargeError).limit).toBe(bound);
          expect((e as StageCapturesTooLargeError).total).toBeGreaterThan(bound);
        }
        const kept = (await s.getStage(cid, sid))!.captures;
        const keptBytes = kept.reduce((n: number, c) => n + Buffer.byteLength(JSON.stringify(c)), 0);
        expect(keptBytes).toBeLessThanOrEqual(bound);
        expect(kept).toHaveLength(5);
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(5);
        expect(refused).toHaveLength(7);
        // Exactly at the bound is allowed; one byte over is not; no bound, no byte check.
        const other = (await s.createStage(cid, { name: 'second' })).id;
        const small = { n: 'y'.repeat(100) };
        const size = Buffer.byteLength(JSON.stringify(small));
        await s.addStageCapture(cid, other, small, { maxStageBytes: size });
        await expectStoreError(s.addStageCapture(cid, other, small, { maxStageBytes: 2 * size - 1 }), 'too-large');
        await s.addStageCapture(cid, other, small, { maxStageBytes: 2 * size });
        await s.addStageCapture(cid, other, small);
        expect((await s.getStage(cid, other))!.captures).toHaveLength(3);
      });

      it('scopes every stage operation to its comparison', async () => {
        const { s, cid, sid } = await withStage();
        const other = (await s.createComparison({ title: 'other' })).comparison.id;
        expect(await s.getStage(other, sid)).toBeNull();
        expect(await s.listStages(other)).toEqual([]);
        await expectStoreError(s.updateStage(other, sid, { name: 'hijack' }), 'not-found');
        await expectStoreError(s.deleteStage(other, sid), 'not-found');
        await expectStoreError(
          s.addArtifact({
            comparisonId: other,
            stageId: sid,
            kind: 'profile',
            format: 'pprof',
            filename: 'x',
            summary: {},
            src: chunked(Buffer.from('x')),
            maxBytes: 10,
          }),
          'not-found',
        );
        expect((await s.getStage(cid, sid))!.name).toBe('baseline');
        expect((await s.getComparison(other))!.revision).toBe(1);
        expect((await s.stats()).blobs).toBe(0);
      });

      it('reorders and keeps positions dense after deletes', async () => {
        const { s, cid, sid: a } = await withStage();
        const b = (await s.createStage(cid, { name: 'b' })).id;
        const c = (await s.createStage(cid, { name: 'c' })).id;
        const d = (await s.createStage(cid, { name: 'd' })).id;
        const reordered = await s.reorderStages(cid, [c, a, d, b]);
        expect(reordered.map((x) => [x.name, x.position])).toEqual([
          ['c', 0],
          ['baseline', 1],
          ['d', 2],
          ['b', 3],
        ]);
        expect((await s.listStages(cid)).map((x) => x.id)).toEqual([c, a, d, b]);

        const rev = (await s.getComparison(cid))!.revision;
        await expectStoreError(s.reorderStages(cid, [c, a, d]), 'invalid');
        await expectStoreError(s.reorderStages(cid, [c, a, d, d]), 'invalid');
        await expectStoreError(s.reorderStages(cid, [c, a, d, b, 'x']), 'invalid');
        await expectStoreError(s.reorderStages(cid, [c, a, d, 'x']), 'invalid');
        await expectStoreError(s.reorderStages('nope', []), 'not-found');
        expect((await s.listStages(cid)).map((x) => x.id)).toEqual([c, a, d, b]);
        expect((await s.getComparison(cid))!.revision).toBe(rev);

        await s.deleteStage(cid, a);
        expect((await s.listStages(cid)).map((x) => [x.name, x.position])).toEqual([
          ['c', 0],
          ['d', 1],
          ['b', 2],
        ]);
        await s.deleteStage(cid, c);
        const e = await s.createStage(cid, { name: 'e' });
        expect(e.position).toBe(2);
        expect((await s.listStages(cid)).map((x) => [x.name, x.position])).toEqual([
          ['d', 0],
          ['b', 1],
          ['e', 2],
        ]);
        await expectStoreError(s.deleteStage(cid, a), 'not-found');
      });

      it('gives concurrent appends distinct consecutive positions', async () => {
        const { s, cid } = await withStage();
        await Promise.all(Array.from({ length: 20 }, (_, i) => s.createStage(cid, { name: `s${i}` })));
        expect((await s.listStages(cid)).map((x) => x.position)).toEqual(Array.from({ length: 21 }, (_, i) => i));
      });
    });

    describe('artifacts and blobs', () => {
      it('stores an upload byte for byte and reads it back whole and streamed', async () => {
        const { s, cid, sid } = await withStage();
        const bytes = bytesOf(1, 300_000);
        const summary = {
          kind: 'profile',
          totals: { 'cpu/nanoseconds': 123456789 },
          top: [{ name: 'main.handler', flat: 1, cum: 2 }],
        };
        const art = await s.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'cpu.pb.gz',
          summary,
          src: chunked(bytes, 7000),
          maxBytes: 64 * MiB,
        });
        expect(art).toMatchObject({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'cpu.pb.gz',
          size: bytes.length,
          sha256: sha256(bytes),
        });
        expect(art.summary).toEqual(summary);
        expect(await s.getArtifact(art.id)).toEqual(art);
        expect(await s.listArtifacts(cid, sid)).toEqual([art]);
        expect(await s.getArtifact('nope')).toBeNull();
        expect((await s.readBlob(art.sha256))!.equals(bytes)).toBe(true);
        expect((await collect((await s.openBlobStream(art.sha256))!)).equals(bytes)).toBe(true);
        expect(await s.readBlob('0'.repeat(64))).toBeNull();
        expect(await s.openBlobStream('0'.repeat(64))).toBeNull();
        expect(await s.readBlob('../../etc/passwd')).toBeNull();
        expect(await s.hasBlob(art.sha256)).toBe(true);
        expect((await s.getComparison(cid))!.revision).toBe(3); // create stage, add artifact
      });

      it('adds a blob written beforehand (write, parse, then add) and keeps upload order', async () => {
        const { s, cid, sid } = await withStage();
        const refs = [];
        for (let i = 0; i < 3; i++) refs.push(await s.putBlob(chunked(bytesOf(10 + i, 1000 + i)), 10_000));
        expect(refs[1]).toMatchObject({ size: 1001, sha256: sha256(bytesOf(11, 1001)) });
        const kinds = ['loadtest', 'benchmark', 'gctrace'] as const;
        const added = [];
        for (let i = 0; i < 3; i++) {
          added.push(
            await s.addArtifact({
              comparisonId: cid,
              stageId: sid,
              kind: kinds[i]!,
              format: 'f',
              filename: `f${i}`,
              summary: { i },
              blob: refs[i]!,
            }),
          );
        }
        expect((await s.listArtifacts(cid, sid)).map((a) => a.filename)).toEqual(['f0', 'f1', 'f2']);
        expect((await s.stats()).pins).toBe(0); // each add released its pin
        const tree = (await s.getComparisonTree(cid))!;
        expect(tree.comparison.revision).toBe(5);
        expect(tree.stages).toHaveLength(1);
        expect(tree.stages[0]!.artifacts.map((a) => a.id)).toEqual(added.map((a) => a.id));
        await expectStoreError(
          s.addArtifact({
            comparisonId: cid,
            stageId: sid,
            kind: 'nonsense' as 'profile',
            format: 'f',
            filename: 'x',
            summary: {},
            blob: refs[0]!,
          }),
          'invalid',
        );
      });

      it('stores an empty file', async () => {
        const { s, cid, sid } = await withStage();
        const art = await s.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'loadtest',
          format: 'wrk',
          filename: 'empty.txt',
          summary: null,
          src: chunked(Buffer.alloc(0)),
          maxBytes: 10,
        });
        expect(art.size).toBe(0);
        expect(art.summary).toBeNull();
        expect((await s.readBlob(art.sha256))!.length).toBe(0);
        expect((await collect((await s.openBlobStream(art.sha256))!)).length).toBe(0);
        const st = await s.stats();
        expect(st.blobObjects).toBe(st.blobs);
      });

      it('streams a 64 MiB file in and out', async () => {
        const { s, cid, sid } = await withStage();
        const bytes = bytesOf(64, 64 * MiB);
        const t0 = performance.now();
        const art = await s.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'big.pb.gz',
          summary: {},
          src: chunked(bytes),
          maxBytes: 64 * MiB,
        });
        const writeMs = performance.now() - t0;
        expect(art.size).toBe(64 * MiB);
        expect(art.sha256).toBe(sha256(bytes));
        expect((await s.readBlob(art.sha256))!.equals(bytes)).toBe(true);
        const streamed = await collect((await s.openBlobStream(art.sha256))!);
        expect(streamed.equals(bytes)).toBe(true);
        console.log(
          `[store ${name}] 64 MiB write ${writeMs.toFixed(0)} ms (${(64 / (writeMs / 1000)).toFixed(0)} MiB/s)`,
        );
      });

      it('refuses beyond maxBytes with a TooLargeError and keeps nothing', async () => {
        const { s, cid, sid } = await withStage();
        const before = await s.stats();
        const e = await rejection(s.putBlob(chunked(bytesOf(2, 3 * MiB)), 2 * MiB));
        expect(e).toBeInstanceOf(TooLargeError);
        expect((e as TooLargeError).code).toBe('too-large');
        expect((e as TooLargeError).limit).toBe(2 * MiB);
        const e2 = await rejection(
          s.addArtifact({
            comparisonId: cid,
            stageId: sid,
            kind: 'profile',
            format: 'pprof',
            filename: 'big',
            summary: {},
            src: chunked(bytesOf(3, 5000), 1000),
            maxBytes: 4999,
          }),
        );
        expect(e2).toBeInstanceOf(TooLargeError);
        expect(counts(await s.stats())).toEqual(counts(before));
        expect((await s.stats()).blobs).toBe(0);
        expect((await s.getComparison(cid))!.revision).toBe(2);
        // Exactly at the limit is allowed.
        const ok = await s.putBlob(chunked(bytesOf(3, 5000), 1000), 5000);
        expect(ok.size).toBe(5000);
      });

      it('keeps nothing when the source fails mid-stream', async () => {
        const { s } = await withStage();
        async function* failing(): ByteSource {
          yield bytesOf(4, 2 * MiB);
          throw new Error('client went away');
        }
        const e = await rejection(s.putBlob(failing(), 64 * MiB));
        expect((e as Error).message).toBe('client went away');
        const st = await s.stats();
        expect([st.blobs, st.blobObjects, st.pins, st.tempFiles]).toEqual([0, 0, 0, 0]);
      });

      it('deduplicates identical bytes across artifacts and comparisons', async () => {
        const { s, cid, sid } = await withStage();
        const other = (await s.createComparison({ title: 'other' })).comparison.id;
        const otherStage = (await s.createStage(other, { name: 'base' })).id;
        const bytes = bytesOf(5, 100_000);
        const a1 = await s.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'a',
          summary: {},
          src: chunked(bytes),
          maxBytes: MiB,
        });
        const a2 = await s.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'b',
          summary: {},
          src: chunked(bytes, 999),
          maxBytes: MiB,
        });
        const a3 = await s.addArtifact({
          comparisonId: other,
          stageId: otherStage,
          kind: 'profile',
          format: 'pprof',
          filename: 'c',
          summary: {},
          src: chunked(bytes),
          maxBytes: MiB,
        });
        expect(new Set([a1.sha256, a2.sha256, a3.sha256]).size).toBe(1);
        expect(new Set([a1.id, a2.id, a3.id]).size).toBe(3);
        const st = await s.stats();
        expect([st.artifacts, st.blobs, st.blobObjects, st.blobBytes]).toEqual([3, 1, 1, 100_000]);
        // What the uploads take counts identical bytes once, and drops with the last file holding them.
        expect(await s.storedBytes()).toBe(100_000);
        const pinned = await s.putBlob(chunked(bytesOf(8, 2_000)), MiB);
        expect(await s.storedBytes()).toBe(102_000);
        await s.releaseBlob(pinned);
        expect(await s.storedBytes()).toBe(100_000);
        await s.deleteComparison(other);
        await s.deleteArtifact(cid, a1.id);
        expect(await s.storedBytes()).toBe(100_000);
        await s.deleteArtifact(cid, a2.id);
        expect(await s.storedBytes()).toBe(0);
      });

      it('deletes a comparison with its artifacts, and only the blobs nobody else references', async () => {
        const { s, cid, sid } = await withStage();
        const other = (await s.createComparison({ title: 'other' })).comparison.id;
        const otherStage = (await s.createStage(other, { name: 'base' })).id;
        const shared = bytesOf(6, 50_000);
        const own = bytesOf(7, 60_000);
        const add = (c: string, st: string, b: Buffer) =>
          s.addArtifact({
            comparisonId: c,
            stageId: st,
            kind: 'profile',
            format: 'pprof',
            filename: 'f',
            summary: {},
            src: chunked(b),
            maxBytes: MiB,
          });
        const aShared = await add(cid, sid, shared);
        const aOwn = await add(cid, sid, own);
        const bShared = await add(other, otherStage, shared);
        await cachePutJson(s, { scope: { comparisonId: cid, revision: 4 }, key: 'flame', modelVersion: 1 }, { n: 1 });

        expect(await s.deleteComparison(cid)).toBe(true);
        expect(await s.getArtifact(aShared.id)).toBeNull();
        expect(await s.getArtifact(aOwn.id)).toBeNull();
        expect(await s.hasBlob(aOwn.sha256)).toBe(false);
        expect(await s.readBlob(aOwn.sha256)).toBeNull();
        expect((await s.readBlob(bShared.sha256))!.equals(shared)).toBe(true);
        expect(await s.getArtifact(bShared.id)).toMatchObject({ comparisonId: other });
        let st = await s.stats();
        expect([st.comparisons, st.stages, st.artifacts, st.blobs, st.blobObjects, st.cacheEntries]).toEqual([
          1, 1, 1, 1, 1, 0,
        ]);

        await s.deleteComparison(other);
        st = await s.stats();
        expect(counts(st)).toEqual(EMPTY_COUNTS);
      });

      it('deleting an artifact or a stage drops blobs left unreferenced', async () => {
        const { s, cid, sid } = await withStage();
        const s2 = (await s.createStage(cid, { name: 'two' })).id;
        const add = (st: string, seed: number) =>
          s.addArtifact({
            comparisonId: cid,
            stageId: st,
            kind: 'loadtest',
            format: 'wrk',
            filename: `f${seed}`,
            summary: {},
            src: chunked(bytesOf(seed, 1000)),
            maxBytes: MiB,
          });
        const x = await add(sid, 20);
        const xAgain = await add(s2, 20);
        const y = await add(sid, 21);
        await s.deleteArtifact(cid, x.id);
        expect(await s.hasBlob(x.sha256)).toBe(true); // still used by xAgain
        await s.deleteArtifact(cid, y.id);
        expect(await s.hasBlob(y.sha256)).toBe(false);
        await expectStoreError(s.deleteArtifact(cid, y.id), 'not-found');
        const otherCid = (await s.createComparison({ title: 'o' })).comparison.id;
        await expectStoreError(s.deleteArtifact(otherCid, xAgain.id), 'not-found');
        await s.deleteStage(cid, s2);
        expect(await s.getArtifact(xAgain.id)).toBeNull();
        expect(await s.hasBlob(x.sha256)).toBe(false);
        const st = await s.stats();
        expect([st.artifacts, st.blobs, st.blobObjects]).toEqual([0, 0, 0]);
      });

      it('pins a written blob until it is used, released, or the pin expires', async () => {
        const { s, cid, sid } = await withStage();
        const bytes = bytesOf(30, 2000);
        const r1 = await s.putBlob(chunked(bytes), MiB);
        const r2 = await s.putBlob(chunked(bytes), MiB);
        expect(r1.sha256).toBe(r2.sha256);
        expect(r1.pinId).not.toBe(r2.pinId);
        expect((await s.sweep()).orphanBlobs).toBe(0);
        await s.releaseBlob(r1);
        expect(await s.hasBlob(r1.sha256)).toBe(true); // r2 still holds it
        await s.releaseBlob(r2);
        expect(await s.hasBlob(r1.sha256)).toBe(false);

        const r3 = await s.putBlob(chunked(bytesOf(31, 10)), MiB);
        expect((await s.sweep({ now: Date.now() + PIN_TTL_MS / 2 })).orphanBlobs).toBe(0);
        const report = await s.sweep({ now: Date.now() + PIN_TTL_MS + 1000 });
        expect(report).toMatchObject({ expiredPins: 1, orphanBlobs: 1 });
        await expectStoreError(
          s.addArtifact({
            comparisonId: cid,
            stageId: sid,
            kind: 'profile',
            format: 'pprof',
            filename: 'late',
            summary: {},
            blob: r3,
          }),
          'blob-missing',
        );
        expect((await s.stats()).artifacts).toBe(0);
      });

      it('loses nothing with 50 concurrent artifact adds', async () => {
        const { s, cid, sid } = await withStage();
        const sid2 = (await s.createStage(cid, { name: 'two' })).id;
        // 50 uploads, 40 distinct contents (every 5th repeats an earlier one), across two stages.
        const contents = Array.from({ length: 50 }, (_, i) =>
          bytesOf(i % 5 === 4 ? 100 + i - 1 : 100 + i, 20_000 + i * 1000),
        );
        const arts = await Promise.all(
          contents.map((b, i) =>
            s.addArtifact({
              comparisonId: cid,
              stageId: i % 2 ? sid2 : sid,
              kind: 'profile',
              format: 'pprof',
              filename: `p${i}`,
              summary: { i },
              src: chunked(b, 4096),
              maxBytes: MiB,
            }),
          ),
        );
        const distinct = new Set(contents.map(sha256));
        expect(new Set(arts.map((a) => a.id)).size).toBe(50);
        const tree = (await s.getComparisonTree(cid))!;
        expect(tree.comparison.revision).toBe(3 + 50);
        const all = tree.stages.flatMap((st) => st.artifacts);
        expect(all).toHaveLength(50);
        for (const a of all) {
          const i = (a.summary as { i: number }).i;
          expect(a.sha256).toBe(sha256(contents[i]!));
          expect(a.stageId).toBe(i % 2 ? sid2 : sid);
        }
        const st = await s.stats();
        expect([st.artifacts, st.blobs, st.blobObjects, st.pins, st.tempFiles]).toEqual([
          50,
          distinct.size,
          distinct.size,
          0,
          0,
        ]);
        for (const a of arts.slice(0, 10)) expect(sha256((await s.readBlob(a.sha256))!)).toBe(a.sha256);
      });
    });

    describe('source sets', () => {
      const entries = [
        { path: 'go.mod', size: 20 },
        { path: 'main.go', size: 300 },
      ];
      it("stores a stage's sources, shows them in the tree, replaces them atomically and collects the old blob", async () => {
        const { s, cid, sid } = await withStage();
        const first = bytesOf(31, 5000);
        const ref1 = await s.putBlob(chunked(first), MiB);
        const put = await s.putStageSources({
          comparisonId: cid,
          stageId: sid,
          modulePath: 'example.com/shop',
          revision: 'a'.repeat(40),
          dirty: true,
          origin: 'capture',
          entries,
          blob: ref1,
        });
        expect(put).toMatchObject({
          comparisonId: cid,
          stageId: sid,
          modulePath: 'example.com/shop',
          dirty: true,
          files: 2,
          bytes: 320,
          sha256: sha256(first),
          size: first.length,
        });
        expect((await s.getStageSources(cid, sid))!.entries).toEqual(entries);
        const tree = (await s.getComparisonTree(cid))!;
        expect(tree.stages[0]!.sources).toEqual(put);
        expect(tree.comparison.revision).toBe(3);
        // The pin went with the insert: a sweep far in the future keeps the blob.
        await s.sweep({ now: Date.now() + 2 * PIN_TTL_MS });
        expect(await s.hasBlob(ref1.sha256)).toBe(true);

        const second = bytesOf(32, 7000);
        const ref2 = await s.putBlob(chunked(second), MiB);
        const replaced = await s.putStageSources({
          comparisonId: cid,
          stageId: sid,
          modulePath: 'example.com/shop',
          revision: 'b'.repeat(40),
          dirty: null,
          origin: 'src.tar.gz',
          entries: [{ path: 'main.go', size: 7000 }],
          blob: ref2,
        });
        expect(replaced).toMatchObject({ revision: 'b'.repeat(40), dirty: null, files: 1, sha256: sha256(second) });
        expect(await s.hasBlob(ref1.sha256)).toBe(false);
        expect((await s.readBlob(ref2.sha256))!.equals(second)).toBe(true);

        expect(await s.deleteStageSources(cid, sid)).toBe(true);
        expect(await s.deleteStageSources(cid, sid)).toBe(false);
        expect(await s.getStageSources(cid, sid)).toBeNull();
        expect((await s.getComparisonTree(cid))!.stages[0]).not.toHaveProperty('sources');
        expect(await s.hasBlob(ref2.sha256)).toBe(false);
      });

      it('refuses bad input and keeps nothing half-written', async () => {
        const { s, cid, sid } = await withStage();
        const ref = await s.putBlob(chunked(bytesOf(33, 100)), MiB);
        const base = {
          comparisonId: cid,
          stageId: sid,
          modulePath: 'm',
          revision: '',
          dirty: false,
          origin: 'x',
          blob: ref,
        };
        await expectStoreError(s.putStageSources({ ...base, entries: [{ path: '/etc/passwd', size: 1 }] }), 'invalid');
        await expectStoreError(
          s.putStageSources({
            ...base,
            entries: [
              { path: 'b.go', size: 1 },
              { path: 'a.go', size: 1 },
            ],
          }),
          'invalid',
        );
        await expectStoreError(s.putStageSources({ ...base, stageId: 'nope', entries }), 'not-found');
        await expectStoreError(
          s.putStageSources({ ...base, blob: { sha256: '0'.repeat(64), size: 1, pinId: 'x' }, entries }),
          'blob-missing',
        );
        expect(await s.getStageSources(cid, sid)).toBeNull();
        expect((await s.getComparison(cid))!.revision).toBe(2);
      });

      it('goes with its stage and its comparison, blobs included', async () => {
        const { s, cid, sid } = await withStage();
        const other = await s.createStage(cid, { name: 'pooled' });
        const a = bytesOf(34, 900);
        const b = bytesOf(35, 900);
        const put = async (stageId: string, bytes: Buffer) =>
          s.putStageSources({
            comparisonId: cid,
            stageId,
            modulePath: 'm',
            revision: '',
            dirty: null,
            origin: 'x',
            entries,
            blob: await s.putBlob(chunked(bytes), MiB),
          });
        await put(sid, a);
        await put(other.id, b);
        await s.deleteStage(cid, sid);
        expect(await s.hasBlob(sha256(a))).toBe(false);
        expect(await s.hasBlob(sha256(b))).toBe(true);
        expect(await s.deleteComparison(cid)).toBe(true);
        expect(await s.hasBlob(sha256(b))).toBe(false);
        expect((await s.stats()).blobs).toBe(0);
      });
    });

    describe('derived-data cache', () => {
      it('serves an entry only for its key, model version and current revision', async () => {
        const { s, cid, sid } = await withStage();
        const rev = (await s.getComparison(cid))!.revision;
        const key: CacheKey = { scope: { comparisonId: cid, revision: rev }, key: 'flame?stage=1', modelVersion: 3 };
        expect(await s.cacheGet(key)).toBeNull();
        await s.cachePut(key, Buffer.from([1, 2, 3]));
        expect([...(await s.cacheGet(key))!]).toEqual([1, 2, 3]);
        expect(await s.cacheGet({ ...key, modelVersion: 4 })).toBeNull();
        expect(await s.cacheGet({ ...key, key: 'flame?stage=2' })).toBeNull();
        await cachePutJson(s, { ...key, key: 'json' }, { a: [1, 'x'] });
        expect(await cacheGetJson(s, { ...key, key: 'json' })).toEqual({ a: [1, 'x'] });

        // A newer model version replaces the older one.
        await s.cachePut({ ...key, modelVersion: 4 }, 'v4');
        expect((await s.cacheGet({ ...key, modelVersion: 4 }))!.toString()).toBe('v4');
        expect(await s.cacheGet(key)).toBeNull();

        // Any change to the comparison makes every entry of the old revision invisible...
        await s.updateStage(cid, sid, { note: 'changed' });
        expect(await s.cacheGet({ ...key, modelVersion: 4 })).toBeNull();
        const now = (await s.getComparison(cid))!.revision;
        expect(now).toBe(rev + 1);
        expect(await s.cacheGet({ ...key, scope: { comparisonId: cid, revision: now }, modelVersion: 4 })).toBeNull();
        // ... and a late writer that computed from the old revision stores nothing.
        const entries = (await s.stats()).cacheEntries;
        await s.cachePut({ ...key, key: 'late' }, 'stale');
        expect((await s.stats()).cacheEntries).toBe(entries);
        expect(await s.cacheGet({ ...key, key: 'late' })).toBeNull();
        // sweep drops entries of old revisions.
        expect((await s.sweep()).staleCacheEntries).toBe(entries);
        expect((await s.stats()).cacheEntries).toBe(0);
        // A put for an unknown comparison is a no-op, not an error.
        await s.cachePut({ scope: { comparisonId: 'gone', revision: 1 }, key: 'k', modelVersion: 1 }, 'x');
        expect((await s.stats()).cacheEntries).toBe(0);
      });

      it('stays within its byte bound, evicting the least recently used entries first', async () => {
        config = await harness.freshConfig();
        const s = await open({ ...config, maxCacheBytes: 1200 });
        const { comparison } = await s.createComparison({ title: 'bounded' });
        const scope = { comparisonId: comparison.id, revision: comparison.revision };
        const key = (k: string): CacheKey => ({ scope, key: k, modelVersion: 1 });
        for (const k of ['a', 'b', 'c', 'd']) {
          await s.cachePut(key(k), Buffer.alloc(300, k));
          await new Promise((r) => setTimeout(r, 3)); // distinct last-use times
        }
        expect((await s.stats()).cacheBytes).toBe(1200);
        await s.cachePut(key('e'), Buffer.alloc(300, 'e'));
        const st = await s.stats();
        expect(st.cacheBytes).toBe(1200);
        expect(st.cacheEntries).toBe(4);
        expect(await s.cacheGet(key('a'))).toBeNull();
        for (const k of ['b', 'c', 'd', 'e']) expect((await s.cacheGet(key(k)))!.toString()).toBe(k.repeat(300));
        // A value over a quarter of the bound is not cached at all (it would flush everything else).
        await s.cachePut(key('big'), Buffer.alloc(301));
        expect(await s.cacheGet(key('big'))).toBeNull();
        expect((await s.stats()).cacheEntries).toBe(4);
        // Many distinct keys never grow it past the bound.
        for (let i = 0; i < 50; i++) await s.cachePut(key(`k${i}`), Buffer.alloc(100 + i));
        expect((await s.stats()).cacheBytes).toBeLessThanOrEqual(1200);
      });

      it('ties blob-scoped entries to their blob and keeps global ones', async () => {
        const { s, cid, sid } = await withStage();
        const art = await s.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'p',
          summary: {},
          src: chunked(bytesOf(40, 500)),
          maxBytes: MiB,
        });
        const bk: CacheKey = { scope: { sha256: art.sha256 }, key: 'parsed', modelVersion: 1 };
        await s.cachePut(bk, 'model');
        await s.cachePut({ scope: 'global', key: 'g', modelVersion: 1 }, 'global');
        await s.updateComparison(cid, { title: 'new' });
        expect((await s.cacheGet(bk))!.toString()).toBe('model'); // content-addressed: a comparison change does not matter
        await s.deleteArtifact(cid, art.id);
        expect(await s.cacheGet(bk)).toBeNull();
        await s.cachePut(bk, 'for a deleted blob');
        expect(await s.cacheGet(bk)).toBeNull();
        expect((await s.cacheGet({ scope: 'global', key: 'g', modelVersion: 1 }))!.toString()).toBe('global');
      });
    });

    describe('two replicas on one database', () => {
      it('share comparisons, blobs and cache, and never serve a stale entry', async () => {
        config = await harness.freshConfig();
        const a = await open();
        const b = await open();
        const { comparison, editToken } = await a.createComparison({ title: 'shared' });
        const cid = comparison.id;
        expect(await b.verifyEditToken(cid, editToken!)).toBe(true);
        const sid = (await b.createStage(cid, { name: 'baseline' })).id;
        const bytes = bytesOf(50, 3 * MiB + 17);
        const art = await a.addArtifact({
          comparisonId: cid,
          stageId: sid,
          kind: 'profile',
          format: 'pprof',
          filename: 'cpu',
          summary: { x: 1 },
          src: chunked(bytes),
          maxBytes: 64 * MiB,
        });
        expect((await b.readBlob(art.sha256))!.equals(bytes)).toBe(true);
        expect((await collect((await b.openBlobStream(art.sha256))!)).equals(bytes)).toBe(true);

        // Replica a computes and caches a result for the current revision; b sees the hit.
        const treeA = (await a.getComparisonTree(cid))!;
        const key = (rev: number): CacheKey => ({
          scope: { comparisonId: cid, revision: rev },
          key: 'table',
          modelVersion: 1,
        });
        await cachePutJson(a, key(treeA.comparison.revision), { stages: treeA.stages.length });
        const treeB = (await b.getComparisonTree(cid))!;
        expect(treeB.comparison.revision).toBe(treeA.comparison.revision);
        expect(await cacheGetJson(b, key(treeB.comparison.revision))).toEqual({ stages: 1 });

        // b changes the story; a must miss whichever revision it asks for.
        await b.createStage(cid, { name: 'easyjson' });
        expect(await a.cacheGet(key(treeA.comparison.revision))).toBeNull();
        const fresh = (await a.getComparisonTree(cid))!;
        expect(fresh.stages).toHaveLength(2);
        expect(fresh.comparison.revision).toBe(treeA.comparison.revision + 1);
        expect(await a.cacheGet(key(fresh.comparison.revision))).toBeNull();

        // Deleting through one replica is seen by the other.
        expect(await a.deleteComparison(cid)).toBe(true);
        expect(await b.getComparison(cid)).toBeNull();
        expect(await b.getArtifact(art.id)).toBeNull();
        expect(await b.readBlob(art.sha256)).toBeNull();
        expect(await b.verifyEditToken(cid, editToken!)).toBe(false);
      });

      it('never loses a blob that one replica re-uploads while the other deletes its last user', async () => {
        config = await harness.freshConfig();
        const a = await open();
        const b = await open();
        const keep = (await a.createComparison({ title: 'keeps uploading' })).comparison.id;
        const keepStage = (await a.createStage(keep, { name: 's' })).id;
        for (let round = 0; round < 15; round++) {
          const bytes = bytesOf(500 + round, 200_000);
          const doomed = (await a.createComparison({ title: `doomed ${round}` })).comparison.id;
          const doomedStage = (await a.createStage(doomed, { name: 's' })).id;
          await a.addArtifact({
            comparisonId: doomed,
            stageId: doomedStage,
            kind: 'profile',
            format: 'pprof',
            filename: 'x',
            summary: {},
            src: chunked(bytes),
            maxBytes: MiB,
          });
          const [, art] = await Promise.all([
            a.deleteComparison(doomed),
            b.addArtifact({
              comparisonId: keep,
              stageId: keepStage,
              kind: 'profile',
              format: 'pprof',
              filename: `r${round}`,
              summary: {},
              src: chunked(bytes, 8192),
              maxBytes: MiB,
            }),
          ]);
          expect((await a.readBlob(art.sha256))!.equals(bytes)).toBe(true);
        }
        const st = await a.stats();
        expect([st.comparisons, st.artifacts, st.blobs, st.blobObjects, st.pins]).toEqual([1, 15, 15, 15, 0]);
      });
    });

    describe('crash consistency', () => {
      interface CrashRun {
        marker: string;
        exitSignal: NodeJS.Signals | null;
      }

      /** Runs crash-child.ts in `mode` and SIGKILLs it as soon as it reports being mid-operation. */
      function crashChild(cfg: StoreConfig, mode: string, cid: string, sid: string): Promise<CrashRun> {
        return new Promise((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', CRASH_CHILD], {
            cwd: ROOT,
            env: {
              ...process.env,
              CRASH_CONFIG: JSON.stringify(cfg),
              CRASH_MODE: mode,
              CRASH_COMPARISON: cid,
              CRASH_STAGE: sid,
              CRASH_AFTER_BYTES: String(crashAfter),
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let out = '';
          let err = '';
          let marker = '';
          const timer = setTimeout(() => {
            child.kill('SIGKILL');
            reject(new Error(`crash child never reached its marker; stderr: ${err}`));
          }, 60_000);
          child.stdout.on('data', (d: Buffer) => {
            out += d.toString();
            const line = out.split('\n').find((l) => l.startsWith('MARK '));
            if (line && !marker) {
              marker = line.slice(5);
              child.kill('SIGKILL');
            }
          });
          child.stderr.on('data', (d: Buffer) => {
            err += d.toString();
          });
          child.on('exit', (_code, signal) => {
            clearTimeout(timer);
            if (!marker) reject(new Error(`crash child exited early: ${err}`));
            else Promise.resolve(harness.settle?.(cfg)).then(() => resolve({ marker, exitSignal: signal }), reject);
          });
        });
      }

      async function setupForCrash(): Promise<{ cid: string; sid: string; rev: number }> {
        config = await harness.freshConfig();
        const s = await open();
        const cid = (await s.createComparison({ title: 'crash' })).comparison.id;
        const sid = (await s.createStage(cid, { name: 'baseline' })).id;
        const rev = (await s.getComparison(cid))!.revision;
        await s.close();
        opened.splice(opened.indexOf(s), 1);
        return { cid, sid, rev };
      }

      for (const mode of ['put-blob-mid-stream', 'add-artifact-mid-stream'] as const) {
        it(`SIGKILL during a streaming write (${mode}) leaves no artifact and nothing after sweep`, async () => {
          const { cid, sid, rev } = await setupForCrash();
          const run = await crashChild(config, mode, cid, sid);
          expect(run.exitSignal).toBe('SIGKILL');
          expect(Number(run.marker)).toBeGreaterThanOrEqual(crashAfter); // it really was mid-write

          const raw = await open(config, false);
          const before = await raw.stats();
          expect([before.artifacts, before.blobs, before.pins]).toEqual([0, 0, 0]);
          // The partial write is still there for a sweep to find: SQLite's temp file, or the key of
          // the object being uploaded to the bucket (PostgreSQL rolled its transaction back).
          expect(before.tempFiles).toBe(raw.blobLocation === 'database' ? 0 : 1);
          // In a bucket, parts were uploaded: a multipart upload is open.
          if (harness.bucketState) expect((await harness.bucketState(config)).uploads).toBe(1);
          expect((await raw.getComparison(cid))!.revision).toBe(rev);
          expect(await raw.listArtifacts(cid, sid)).toEqual([]);
          await raw.close();
          opened.splice(opened.indexOf(raw), 1);

          const s = await open(); // sweeps on open
          const after = await s.stats();
          expect(counts(after)).toEqual({ ...EMPTY_COUNTS, comparisons: 1, stages: 1 });
          if (harness.bucketState) expect(await harness.bucketState(config)).toEqual({ objects: 0, uploads: 0 });
          // and the store works normally afterwards
          const art = await s.addArtifact({
            comparisonId: cid,
            stageId: sid,
            kind: 'profile',
            format: 'pprof',
            filename: 'ok',
            summary: {},
            src: chunked(bytesOf(9, 1000)),
            maxBytes: MiB,
          });
          expect((await s.readBlob(art.sha256))!.equals(bytesOf(9, 1000))).toBe(true);
        });
      }

      it('SIGKILL between a durable blob and its artifact row leaves a pinned orphan that sweep removes', async () => {
        const { cid, sid, rev } = await setupForCrash();
        const run = await crashChild(config, 'between-blob-and-row', cid, sid);
        expect(run.exitSignal).toBe('SIGKILL');
        const written = run.marker; // sha256 of the blob the child wrote
        const s = await open();
        expect(await s.hasBlob(written)).toBe(true); // durable: putBlob had returned
        expect((await s.readBlob(written))!.equals(bytesOf(77, 2 * MiB))).toBe(true);
        expect((await s.stats()).artifacts).toBe(0);
        expect((await s.getComparison(cid))!.revision).toBe(rev);
        const report = await s.sweep({ now: Date.now() + PIN_TTL_MS + 1000 });
        expect(report).toMatchObject({ expiredPins: 1, orphanBlobs: 1 });
        expect(counts(await s.stats())).toEqual({ ...EMPTY_COUNTS, comparisons: 1, stages: 1 });
        if (harness.bucketState) expect(await harness.bucketState(config)).toEqual({ objects: 0, uploads: 0 });
      });
    });

    describe('retention', () => {
      const DAY = 24 * 3600 * 1000;

      it('removes the comparisons unused since the cutoff with their blobs, and nothing else (a fake clock)', async () => {
        let now = Date.parse('2026-03-01T12:00:00Z');
        config = { ...(await harness.freshConfig()), clock: () => now };
        const s = await open();
        const shared = bytesOf(900, 40_000);
        async function story(title: string, seed: number, withShared = false) {
          const { comparison, editToken } = await s.createComparison({ title });
          const sid = (await s.createStage(comparison.id, { name: 'baseline' })).id;
          const add = (b: Buffer, f: string) =>
            s.addArtifact({
              comparisonId: comparison.id,
              stageId: sid,
              kind: 'profile',
              format: 'pprof',
              filename: f,
              summary: {},
              src: chunked(b),
              maxBytes: MiB,
            });
          const own = await add(bytesOf(seed, 30_000 + seed), 'own');
          if (withShared) await add(shared, 'shared');
          return { id: comparison.id, sid, token: editToken!, own: own.sha256 };
        }
        const stale = await story('never looked at again', 901, true);
        const viewed = await story('viewed on day 20', 902, true);
        const changed = await story('changed on day 25', 903);
        const kept = await story('kept by its owner', 904);
        const demo = (await s.createComparison({ id: 'demo', title: 'Demo', readOnly: true })).comparison.id;
        const demoStage = (await s.createStage(demo, { name: 'baseline' })).id;
        await s.addArtifact({
          comparisonId: demo,
          stageId: demoStage,
          kind: 'profile',
          format: 'pprof',
          filename: 'demo',
          summary: {},
          src: chunked(bytesOf(905, 1000)),
          maxBytes: MiB,
        });
        expect((await s.updateComparison(kept.id, { keep: true })).keep).toBe(true);
        expect((await s.getComparison(stale.id))!.keep).toBe(false);

        now += 20 * DAY;
        const rev = (await s.getComparison(viewed.id))!.revision;
        expect((await s.getComparisonTree(viewed.id))!.comparison.revision).toBe(rev); // a view changes nothing
        expect((await s.getComparison(viewed.id))!.revision).toBe(rev);
        now += 5 * DAY;
        await s.updateStage(changed.id, changed.sid, { note: 'tuned' });

        // Day 31: only the story nobody changed or viewed for 30 days goes, with the blob only it used.
        now += 6 * DAY;
        expect(await s.expireComparisons(now - 30 * DAY)).toEqual([stale.id]);
        expect(await s.getComparison(stale.id)).toBeNull();
        expect(await s.hasBlob(stale.own)).toBe(false);
        expect((await s.readBlob(sha256(shared)))!.equals(shared)).toBe(true); // still used by `viewed`
        for (const c of [viewed, changed, kept]) expect(await s.hasBlob(c.own)).toBe(true);
        let st = await s.stats();
        expect([st.comparisons, st.artifacts, st.blobs, st.blobObjects, st.pins]).toEqual([4, 5, 5, 5, 0]);
        expect(await s.expireComparisons(now - 30 * DAY)).toEqual([]);

        // Day 51: `viewed` is 31 days past its view; the shared blob goes with it.
        now += 20 * DAY;
        expect(await s.expireComparisons(now - 30 * DAY)).toEqual([viewed.id]);
        expect(await s.hasBlob(sha256(shared))).toBe(false);
        // The owner lets go of `kept`: that is a change, so it has 30 days from now.
        await s.updateComparison(kept.id, { keep: false });
        expect(await s.expireComparisons(now - 30 * DAY)).toEqual([]);

        // Day 100: everything but the read-only demo has gone.
        now += 49 * DAY;
        expect((await s.expireComparisons(now - 30 * DAY)).sort()).toEqual([changed.id, kept.id].sort());
        st = await s.stats();
        expect([st.comparisons, st.artifacts, st.blobs, st.blobObjects, st.pins]).toEqual([1, 1, 1, 1, 0]);
        expect((await s.getComparisonTree(demo))!.stages[0]!.artifacts).toHaveLength(1);
        if (harness.bucketState) expect(await harness.bucketState(config)).toEqual({ objects: 1, uploads: 0 });
      });

      it('records a view at most once per VIEW_TOUCH_MS', async () => {
        let now = Date.parse('2026-03-01T12:00:00Z');
        config = { ...(await harness.freshConfig()), clock: () => now };
        const s = await open();
        const id = (await s.createComparison({ title: 'x' })).comparison.id;
        now += 10 * DAY;
        await s.getComparisonTree(id); // recorded: day 10
        now += VIEW_TOUCH_MS / 2;
        await s.getComparisonTree(id); // too soon after the last: not recorded
        // 30 days after day 10 plus a minute: the second view did not move the last use.
        now = Date.parse('2026-03-01T12:00:00Z') + 40 * DAY + 60_000;
        expect(await s.expireComparisons(now - 30 * DAY)).toEqual([id]);
      });

      it('recordView (a read served from a cache) counts for retention, at most once per VIEW_TOUCH_MS', async () => {
        const start = Date.parse('2026-03-01T12:00:00Z');
        let now = start;
        config = { ...(await harness.freshConfig()), clock: () => now };
        const s = await open();
        const read = (await s.createComparison({ title: 'read from a cache' })).comparison.id;
        const unread = (await s.createComparison({ title: 'not read' })).comparison.id;
        const rev = (await s.getComparison(read))!.revision;
        now += 10 * DAY;
        await s.recordView(read); // recorded: day 10
        now += VIEW_TOUCH_MS / 2;
        await s.recordView(read); // too soon: not recorded
        await s.recordView('no-such-comparison'); // nothing to record, no error
        expect((await s.getComparison(read))!.revision).toBe(rev); // a view changes nothing
        now = start + 35 * DAY;
        expect(await s.expireComparisons(now - 30 * DAY)).toEqual([unread]);
        now = start + 40 * DAY + 60_000;
        expect(await s.expireComparisons(now - 30 * DAY)).toEqual([read]);
      });
    });
  });
}
