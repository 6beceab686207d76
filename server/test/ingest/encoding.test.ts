/**
 * Wrappers users' files come in: UTF-16 text (what PowerShell's `>` writes, with its BOM, little-
 * or big-endian) and gzip'd text reports. The wrapped bytes are made here from real fixtures, by
 * the encoders of Node and zlib; what is read must equal the plain file's reading.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ingest, type Parsed } from '../../src/ingest/detect.ts';
import { looksLikeText, utf16Order } from '../../src/ingest/encoding.ts';
import { fixturesDir } from '../helpers/paths.ts';

const fx = (rel: string) => readFileSync(`${fixturesDir}${rel}`);

function utf16le(b: Buffer, bom = true): Buffer {
  const body = Buffer.from(b.toString('utf8'), 'utf16le');
  return bom ? Buffer.concat([Buffer.from([0xff, 0xfe]), body]) : body;
}
function utf16be(b: Buffer): Buffer {
  const le = utf16le(b, false);
  le.swap16();
  return Buffer.concat([Buffer.from([0xfe, 0xff]), le]);
}

/** What a reading says, without the parts that legitimately differ (none for these). */
function view(p: Parsed): unknown {
  if (p.kind === 'loadtest') return { format: p.format, summaries: p.runs.map((r) => r.summary) };
  if (p.kind === 'profile') return { format: p.format, values: p.profile.values, frames: p.profile.frames };
  return p;
}

const files = [
  'loadtests/wrk/errors-latency.txt',
  'loadtests/hey/ok-summary.txt',
  'loadtests/k6/console-v1-ok.txt',
  'loadtests/locust/ok_stats_history.csv',
  'profiles/pyspy-wordcount-raw.folded',
];

describe('UTF-16 and gzip', () => {
  for (const rel of files) {
    it(rel, async () => {
      const plain = view(await ingest({ name: 'upload', bytes: fx(rel) }));
      for (const wrapped of [
        utf16le(fx(rel)),
        utf16be(fx(rel)),
        utf16le(fx(rel), false),
        gzipSync(fx(rel)),
        gzipSync(utf16le(fx(rel))),
      ]) {
        expect(view(await ingest({ name: 'upload', bytes: wrapped }))).toEqual(plain);
      }
    });
  }

  it('a gzip’d pprof profile stays a pprof profile', async () => {
    const p = await ingest({ name: 'upload', bytes: fx('demo/baseline/run-1/cpu.pb.gz') });
    expect(p.kind).toBe('profile');
    expect(p.format).toBe('pprof');
  });

  it('binary data is neither UTF-16 nor text', () => {
    const pb = fx('demo/baseline/run-1/cpu.pb.gz');
    expect(utf16Order(pb)).toBeNull();
    expect(looksLikeText(pb)).toBe(false);
  });

  it('a cut UTF-16 or gzip file is a typed error or a partial reading, never a crash', async () => {
    for (const wrapped of [utf16le(fx('loadtests/hey/ok-summary.txt')), gzipSync(fx('loadtests/hey/ok-summary.txt'))]) {
      for (let n = 1; n < wrapped.length; n += 5) {
        await ingest({ name: 'upload', bytes: wrapped.subarray(0, n) }).catch((e: unknown) => {
          expect((e as Error).name).toBe('IngestError');
        });
      }
    }
  });
});
