import { execFileSync } from 'node:child_process';
import {
  createReadStream,
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  linkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDeflateRaw, createGzip, deflateRawSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { SourceArchiveError, readSourceArchive, readTarGzStream } from '../../src/sources/archive.ts';
import type { SourceLimits } from '../../src/sources/source-set.ts';
import { SOURCE_LIMITS } from '../../src/config.ts';
import { type ZipEntry, zipBytes } from '../helpers/zip.ts';
import { tarHeader } from '../helpers/pax-flood.ts';

const LIMITS: SourceLimits = { ...SOURCE_LIMITS };
const GiB = 1024 ** 3;
const dir = mkdtempSync(join(tmpdir(), 'stagediff-archive-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A module on disk, archived by the real tools (tar, zip). */
function module(): string {
  const root = join(dir, `mod-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(root, 'shop', 'internal', 'codec'), { recursive: true });
  writeFileSync(join(root, 'shop', 'go.mod'), 'module example.com/shop // the shop\n\ngo 1.22\n');
  writeFileSync(join(root, 'shop', 'go.sum'), 'example.com/x v1.0.0 h1:abc=\n');
  writeFileSync(join(root, 'shop', 'main.go'), 'package main\n\n// <script>alert(1)</script>\nfunc main() {}\n');
  writeFileSync(join(root, 'shop', 'internal', 'codec', 'json.go'), 'package codec\n\nfunc Append() {}\n');
  writeFileSync(join(root, 'shop', 'logo.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]));
  writeFileSync(join(root, 'shop', 'README.md'), '# shop\n');
  return root;
}

async function refusal(p: Promise<unknown>): Promise<SourceArchiveError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof SourceArchiveError) return e;
    throw e;
  }
  throw new Error('expected a refusal');
}

function tarGz(entries: { name: string; data?: Buffer; type?: string; link?: string }[]): string {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const data = e.data ?? Buffer.alloc(0);
    parts.push(
      tarHeader(e.name, data.length, e.type ?? '0', e.link ?? ''),
      data,
      Buffer.alloc((512 - (data.length % 512)) % 512),
    );
  }
  parts.push(Buffer.alloc(1024));
  const file = join(dir, `t-${Math.random().toString(36).slice(2)}.tar.gz`);
  writeFileSync(file, gzipSync(Buffer.concat(parts)));
  return file;
}

/** A zip writer (stored or deflated entries; zip64 end records past 65,535 entries). */
function zip(entries: ZipEntry[]): string {
  const file = join(dir, `z-${Math.random().toString(36).slice(2)}.zip`);
  writeFileSync(file, zipBytes(entries));
  return file;
}

describe('source archives made by tar and zip', () => {
  const expected = ['go.mod', 'go.sum', 'internal/codec/json.go', 'main.go'];

  it("keeps the module's source files byte for byte, rooted at its go.mod, from tar -czf and zip -r", async () => {
    const root = module();
    const tgz = join(dir, 'shop.tar.gz');
    execFileSync('tar', ['-czf', tgz, '-C', root, 'shop']);
    const z = join(dir, 'shop.zip');
    execFileSync('zip', ['-qr', z, 'shop'], { cwd: root });
    for (const file of [tgz, z]) {
      const got = await readSourceArchive('shop', file, LIMITS);
      expect(got.modulePath).toBe('example.com/shop');
      expect([...got.files.keys()].sort()).toEqual(expected);
      for (const p of expected) expect(got.files.get(p)!.equals(readFileSync(join(root, 'shop', p)))).toBe(true);
    }
  });

  it('refuses symbolic and hard links as tar and zip store them', async () => {
    const root = module();
    symlinkSync('/etc/passwd', join(root, 'shop', 'passwd.go'));
    const tgz = join(dir, 'sym.tar.gz');
    execFileSync('tar', ['-czf', tgz, '-C', root, 'shop']);
    let e = await refusal(readSourceArchive('sym.tar.gz', tgz, LIMITS));
    expect(e.message).toMatch(/source archive sym\.tar\.gz, entry "shop\/passwd\.go": is a symbolic link/);
    const z = join(dir, 'sym.zip');
    execFileSync('zip', ['-qr', '--symlinks', z, 'shop'], { cwd: root });
    e = await refusal(readSourceArchive('sym.zip', z, LIMITS));
    expect(e.entry).toBe('shop/passwd.go');
    expect(e.problem).toMatch(/symbolic link/);

    const hard = module();
    linkSync(join(hard, 'shop', 'main.go'), join(hard, 'shop', 'twin.go'));
    const htgz = join(dir, 'hard.tar.gz');
    execFileSync('tar', ['-czf', htgz, '-C', hard, 'shop']);
    e = await refusal(readSourceArchive('hard.tar.gz', htgz, LIMITS));
    expect(e.problem).toMatch(/hard link/);
  });
});

describe('unsafe archives are refused, naming the entry', () => {
  it('refuses ../ and absolute paths in tar and zip', async () => {
    for (const name of ['../evil.go', 'a/../../evil.go', '/etc/evil.go']) {
      let e = await refusal(readSourceArchive('x.tar.gz', tarGz([{ name, data: Buffer.from('package x\n') }]), LIMITS));
      expect(e.entry).toBe(name);
      expect(e.tooLarge).toBe(false);
      e = await refusal(readSourceArchive('x.zip', zip([{ name, data: Buffer.from('package x\n') }]), LIMITS));
      expect(e.entry).toBe(name);
      expect(e.message).toContain(`source archive x.zip, entry ${JSON.stringify(name)}`);
    }
  });

  it('refuses a 1 GiB tar entry at its header, without inflating it', async () => {
    const file = join(dir, 'gig.tar.gz');
    async function* body() {
      yield tarHeader('main.go', GiB);
      const zeros = Buffer.alloc(4 * 1024 * 1024);
      for (let n = 0; n < GiB; n += zeros.length) yield zeros;
      yield Buffer.alloc(1024);
    }
    await pipeline(Readable.from(body()), createGzip({ level: 1 }), createWriteStream(file));
    let consumed = 0;
    const src = createReadStream(file, { highWaterMark: 16 * 1024 });
    src.on('data', (c) => {
      consumed += c.length;
    });
    const e = await refusal(readTarGzStream('gig.tar.gz', src, LIMITS));
    expect(e.entry).toBe('main.go');
    expect(e.problem).toMatch(/is 1024 MiB, over the 2 MiB one file may have \(MAX_SOURCE_FILE_BYTES\)/);
    expect(e.tooLarge).toBe(true);
    // The whole gigabyte of zeros is about 1 MiB compressed: reading it all would take all of that.
    const { size } = await import('node:fs/promises').then((f) => f.stat(file));
    expect(size).toBeGreaterThan(900 * 1024);
    expect(consumed).toBeLessThan(size / 4);
    // The reader stopped early releases the file at once.
    expect(src.destroyed).toBe(true);
  }, 120_000);

  it('refuses a 1 GiB zip entry by its declared size, and one that inflates past what it declares', async () => {
    // The deflated gigabyte is real: 1 GiB of zeros through deflate.
    const chunks: Buffer[] = [];
    const deflate = createDeflateRaw({ level: 1 });
    deflate.on('data', (c: Buffer) => chunks.push(c));
    const zeros = Buffer.alloc(4 * 1024 * 1024);
    for (let n = 0; n < GiB; n += zeros.length)
      if (!deflate.write(zeros)) await new Promise((r) => deflate.once('drain', r));
    await new Promise((r) => deflate.end(r));
    const packed = Buffer.concat(chunks);
    let e = await refusal(
      readSourceArchive('gig.zip', zip([{ name: 'main.go', deflated: packed, declared: GiB - 1 }]), LIMITS),
    );
    expect(e.entry).toBe('main.go');
    expect(e.problem).toMatch(/over the 2 MiB one file may have/);
    // The bomb lies: it declares 1,000 bytes (CRC of the first 1,000 zeros) and inflates to 16 MiB.
    const bomb = deflateRawSync(Buffer.alloc(16 * 1024 * 1024));
    e = await refusal(
      readSourceArchive(
        'bomb.zip',
        zip([{ name: 'main.go', data: Buffer.alloc(1000), deflated: bomb, declared: 1000 }]),
        LIMITS,
      ),
    );
    expect(e.entry).toBe('main.go');
    expect(e.problem).toMatch(/^declares \d+ compressed bytes for 1000 bytes of data$/);
    // A quieter lie: 20-odd compressed bytes declared as 1,000 that inflate to 1 MiB stop at 1,000.
    const quiet = deflateRawSync(Buffer.alloc(1024 * 1024));
    e = await refusal(
      readSourceArchive(
        'quiet.zip',
        zip([{ name: 'main.go', data: Buffer.alloc(1000), deflated: quiet, declared: 1000 }]),
        {
          ...LIMITS,
        },
      ),
    );
    expect(e.entry).toBe('main.go');
    expect(e.problem).toBe('inflates past its declared 1000 bytes');
  }, 120_000);

  it('refuses an archive whose files together pass the total bound (a zip bomb of many entries)', async () => {
    const one = Buffer.alloc(2 * 1024 * 1024, 0x61); // each within the per-file bound
    const deflated = deflateRawSync(one);
    const entries = Array.from({ length: 20 }, (_, i) => ({ name: `f${i}.go`, data: one, deflated }));
    const e = await refusal(readSourceArchive('many.zip', zip(entries), LIMITS));
    expect(e.entry).toBe('f16.go'); // 16 × 2 MiB is exactly the bound
    expect(e.problem).toMatch(/past the 32 MiB a source set may hold \(MAX_SOURCE_BYTES\)/);
    const t = await refusal(readSourceArchive('many.tar.gz', tarGz(entries), LIMITS));
    expect(t.entry).toBe('f16.go');
  });

  it('refuses 100,000 files: a zip by its directory count, a tar.gz past the entry bound', async () => {
    const entries = Array.from({ length: 100_000 }, (_, i) => ({ name: `p/f${i}.txt` }));
    const z = await refusal(readSourceArchive('lots.zip', zip(entries), LIMITS));
    expect(z.entry).toBeNull();
    expect(z.problem).toBe('has 100000 entries, over the 20000 an archive may have (MAX_SOURCE_ARCHIVE_ENTRIES)');
    const t = await refusal(readSourceArchive('lots.tar.gz', tarGz(entries), LIMITS));
    expect(t.entry).toBe('p/f20000.txt');
    expect(t.tooLarge).toBe(true);
    // Fewer entries than that, but more source files than a set keeps.
    const files = await refusal(
      readSourceArchive('files.zip', zip(entries.slice(0, 6000).map((e) => ({ name: `${e.name}.go` }))), LIMITS),
    );
    expect(files.problem).toMatch(/source file number 5001, over the 5000 a source set may hold \(MAX_SOURCE_FILES\)/);
  }, 120_000);

  it('counts tar metadata headers (pax, GNU long names) against the entry bound', async () => {
    // 30,000 empty pax headers in front of one file: each is an entry, so the bound is met at 20,001.
    const pax = Array.from({ length: 30_000 }, () => ({ name: 'PaxHeaders/x', type: 'x' }));
    const e = await refusal(
      readSourceArchive(
        'pax.tar.gz',
        tarGz([...pax, { name: 'main.go', data: Buffer.from('package main\n') }]),
        LIMITS,
      ),
    );
    expect(e.problem).toBe('has more than 20000 entries, metadata headers counted (MAX_SOURCE_ARCHIVE_ENTRIES)');
    expect(e.tooLarge).toBe(true);
    // Mixed kinds of metadata count alike; under the bound they are read as before.
    const small = { ...LIMITS, maxSourceArchiveEntries: 4 };
    const long = Buffer.from('a/long-name.go\0');
    const meta = [
      { name: 'g', type: 'g' },
      { name: 'L', type: 'L', data: long },
    ];
    const ok = await readSourceArchive(
      'ok.tar.gz',
      tarGz([...meta, { name: 'ignored', data: Buffer.from('package a\n') }]),
      small,
    );
    expect([...ok.files.keys()]).toEqual(['a/long-name.go']);
    expect(ok.entries).toBe(3);
    const over = await refusal(
      readSourceArchive(
        'over.tar.gz',
        tarGz([...meta, { name: 'x', type: 'x' }, { name: 'y', type: 'x' }, { name: 'main.go' }]),
        small,
      ),
    );
    expect(over.problem).toMatch(/more than 4 entries, metadata headers counted/);
  });

  it('refuses devices, damaged and foreign files, and keeps nothing of them', async () => {
    let e = await refusal(readSourceArchive('dev.tar.gz', tarGz([{ name: 'dev.go', type: '3' }]), LIMITS));
    expect(e.problem).toMatch(/not a regular file/);
    const plain = join(dir, 'plain.txt');
    writeFileSync(plain, 'package main\n');
    e = await refusal(readSourceArchive('plain.txt', plain, LIMITS));
    expect(e.problem).toBe('is neither a .tar.gz nor a .zip archive');
    const good = readFileSync(zip([{ name: 'main.go', data: Buffer.from('package main\n') }]));
    const cut = join(dir, 'cut.zip');
    writeFileSync(cut, good.subarray(0, good.length - 10));
    e = await refusal(readSourceArchive('cut.zip', cut, LIMITS));
    expect(e.problem).toMatch(/no end of central directory/);
    const tgz = readFileSync(tarGz([{ name: 'main.go', data: Buffer.alloc(5000, 0x61) }]));
    const cutTar = join(dir, 'cut.tar.gz');
    writeFileSync(cutTar, tgz.subarray(0, 40));
    e = await refusal(readSourceArchive('cut.tar.gz', cutTar, LIMITS));
    expect(e.archive).toBe('cut.tar.gz');
  });
});
