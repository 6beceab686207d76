/**
 * go.sum's hash of a module zip computed on a thread of its own: the same hash the go command wrote
 * (fixtures/goproxy: app/go.sum by `go mod tidy`, the zip by `go mod download`), a zip it cannot hash
 * refused as such, and a thread that does not finish in time stopped and said so.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DirHashError } from '../../src/sources/dirhash.ts';
import { goSumHashes } from '../../src/sources/go-mod.ts';
import { HashUnfinished, hashModuleZip, hashThreads } from '../../src/services/zip-hash.ts';
import { fixturesDir } from '../helpers/paths.ts';

const fx = join(fixturesDir, 'goproxy');
const ZIP = join(fx, 'proxy/github.com/!burnt!sushi/toml/@v/v1.4.0.zip');
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-zip-hash-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('hashing a module zip on its own thread', () => {
  it("gives go.sum's hash, on a thread", async () => {
    const want = goSumHashes(readFileSync(join(fx, 'app', 'go.sum'), 'utf8')).get('github.com/BurntSushi/toml@v1.4.0');
    const before = hashThreads.started;
    expect(await hashModuleZip(ZIP, 64 * 1024 * 1024, 60_000)).toBe(want);
    expect(hashThreads.started).toBe(before + 1);
  });

  it('refuses a zip inflating past its bound, and bytes that are no zip, as unhashable', async () => {
    await expect(hashModuleZip(ZIP, 10_000, 60_000)).rejects.toThrow(DirHashError);
    const junk = join(tmp, 'junk.zip');
    writeFileSync(junk, Buffer.from('not a zip at all'));
    await expect(hashModuleZip(junk, 64 * 1024 * 1024, 60_000)).rejects.toThrow(/no end of central directory/);
    await expect(hashModuleZip(join(tmp, 'absent.zip'), 1024, 60_000)).rejects.toThrow(HashUnfinished);
  });

  it('stops a thread past its deadline: not a verdict on the zip', async () => {
    // (A thread takes far longer than 1 ms to start.)
    const e = await hashModuleZip(ZIP, 64 * 1024 * 1024, 1).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(HashUnfinished);
    expect((e as Error).message).toBe('hashing the zip took longer than 1 ms');
  });
});
