/**
 * Detection across every importer at once, by content only: each real sample file is claimed by the
 * right importer (the file name is withheld), and files that hold no run are refused with a typed error.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/detect.ts';
import { IngestError } from '../../src/ingest/errors.ts';
import { loadExpected } from '../helpers/loadtest-expected.ts';
import { fixturesDir, samplePath } from '../helpers/paths.ts';

const expected = loadExpected();

async function detectNameless(path: string) {
  try {
    return await ingest({ name: 'upload', bytes: readFileSync(path) });
  } catch (e) {
    expect(e, `${path}: only typed errors`).toBeInstanceOf(IngestError);
    return e as IngestError;
  }
}

describe('load-test samples are detected by content, without their names', () => {
  for (const [rel, e] of Object.entries(expected)) {
    it(rel, async () => {
      const r = await detectNameless(samplePath(`loadtests/${rel}`));
      if (e.expectError) {
        expect(r).toBeInstanceOf(IngestError);
        return;
      }
      if (r instanceof IngestError) {
        expect(e.acceptError || e.mayBeUnsupported, `${rel}: ${r.message}`).toBe(true);
        return;
      }
      expect(r.kind).toBe('loadtest');
      const allowed = [e.format, ...(e.formatAlternatives ?? [])].filter(Boolean);
      if (allowed.length > 0) expect(allowed).toContain(r.format);
    });
  }
});

describe('other artifacts are detected by content', () => {
  const dir = samplePath('gobench/');
  const kindOf = (f: string) =>
    f.endsWith('.cpuprofile')
      ? ['profile', 'cpuprofile']
      : f.endsWith('.folded')
        ? ['profile', 'folded']
        : f.includes('gctrace')
          ? ['gctrace', 'gctrace']
          : ['benchmark', 'go-bench'];
  const files = [
    ...readdirSync(dir).filter((x) => !x.endsWith('.md') && x !== 'expected' && x !== 'published'),
    'published/crc-old.txt',
    'published/crc-new.txt',
  ];
  for (const f of files) {
    it(`gobench/${f}`, async () => {
      const r = await detectNameless(dir + f);
      expect(r).not.toBeInstanceOf(IngestError);
      const [kind, format] = kindOf(f);
      expect([(r as { kind: string }).kind, (r as { format: string }).format]).toEqual([kind, format]);
    });
  }
  for (const f of readdirSync(samplePath('pprof/')).filter((x) => x.endsWith('.pb.gz'))) {
    it(`pprof/${f}`, async () => {
      const r = await detectNameless(samplePath(`pprof/${f}`));
      expect((r as { kind: string }).kind).toBe('profile');
    });
  }
  it('an unknown text file is refused as unsupported', async () => {
    const r = await ingest({ name: 'notes.txt', bytes: Buffer.from('hello, this is not a load test\n') }).catch(
      (e: unknown) => e,
    );
    expect(r).toBeInstanceOf(IngestError);
    expect((r as IngestError).code).toBe('unsupported');
  });
});

describe('every fixture cut off anywhere: a reading or a typed error, never a crash', () => {
  // the cuts are made here by script: 48 lengths spread over each file, plus its last bytes
  const root = `${fixturesDir}`;
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = `${dir}${e.name}`;
      if (e.isDirectory()) walk(`${p}/`);
      else if (!/\.(md|go|py|js|cjs|sh|mod|sum)$/.test(e.name) && statSync(p).size < 600_000) files.push(p);
    }
  };
  for (const d of ['loadtests/', 'profiles/', 'cpuprofile/']) walk(`${root}${d}`);

  it(`covers ${files.length} files`, async () => {
    expect(files.length).toBeGreaterThan(80);
    for (const f of files) {
      const bytes = readFileSync(f);
      const cuts = new Set<number>();
      for (let k = 1; k <= 48; k++) cuts.add(Math.floor((bytes.length * k) / 49));
      for (let k = 1; k <= 8; k++) cuts.add(Math.max(1, bytes.length - k));
      for (const n of cuts) {
        try {
          await ingest({ name: 'upload', bytes: bytes.subarray(0, n) });
        } catch (e) {
          if (!(e instanceof IngestError)) throw new Error(`${f} cut at ${n}: ${(e as Error).stack}`);
        }
      }
    }
  }, 120_000);
});
