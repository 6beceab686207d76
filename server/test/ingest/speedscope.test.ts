/**
 * speedscope's file format: a real py-spy export (sampled, one profile per thread) and evented
 * profiles written in the format's own terms.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flatCum, total } from '../../src/analysis/flat-cum.ts';
import { ingest } from '../../src/ingest/detect.ts';
import { IngestError } from '../../src/ingest/errors.ts';
import { parse } from '../../src/ingest/speedscope.ts';
import { fixturesDir } from '../helpers/paths.ts';

const bytes = readFileSync(`${fixturesDir}profiles/pyspy-wordcount.speedscope.json`);
const doc = JSON.parse(bytes.toString());

describe('speedscope files', () => {
  it('py-spy --format speedscope: detected by content; total, samples and leaves as in the file', async () => {
    const parsed = await ingest({ name: 'upload', bytes });
    if (parsed.kind !== 'profile') throw new Error(parsed.kind);
    const p = parsed.profile;
    expect(p.format).toBe('speedscope');
    expect(p.sampleTypes).toEqual([{ type: 'time', unit: 'seconds' }]);
    const prof = doc.profiles[0];
    // "Samples: 37" as py-spy printed; the weights span startValue..endValue
    expect(p.stats.numSamples).toBe(37);
    expect(total(p, 0)).toBeCloseTo(prof.endValue - prof.startValue, 9);
    // flat of each leaf = the weights of the samples ending in it (speedscope's "self")
    const self = new Map<string, number>();
    prof.samples.forEach((s: number[], i: number) => {
      if (s.length === 0) return;
      const name = doc.shared.frames[s[s.length - 1]!].name;
      self.set(name, (self.get(name) ?? 0) + prof.weights[i]);
    });
    const rows = new Map(flatCum(p, 0).map((r) => [r.name, r.flat]));
    for (const [name, w] of self) expect(rows.get(name), name).toBeCloseTo(w, 9);
  });

  it('evented profiles: time between events goes to the open stack; open frames close at endValue', () => {
    const file = {
      $schema: 'https://www.speedscope.app/file-format-schema.json',
      shared: { frames: [{ name: 'main' }, { name: 'work', file: 'a.js' }, { name: 'work', file: 'b.js' }] },
      profiles: [
        {
          type: 'evented',
          name: 'js',
          unit: 'milliseconds',
          startValue: 0,
          endValue: 20,
          events: [
            { type: 'O', frame: 0, at: 0 },
            { type: 'O', frame: 1, at: 2 },
            { type: 'C', frame: 1, at: 7 },
            { type: 'O', frame: 2, at: 9 },
          ],
        },
      ],
    };
    const p = parse(Buffer.from(JSON.stringify(file)));
    const rows = new Map(flatCum(p, 0).map((r) => [r.name, r]));
    expect(total(p, 0)).toBe(20);
    expect(rows.get('main')).toEqual({ name: 'main', flat: 4, cum: 20 });
    expect(rows.get('work (a.js)')).toEqual({ name: 'work (a.js)', flat: 5, cum: 5 });
    expect(rows.get('work (b.js)')).toEqual({ name: 'work (b.js)', flat: 11, cum: 11 });
  });

  it('bad and cut files are typed errors', () => {
    for (let n = 1; n < bytes.length; n += 97) {
      let err: unknown = null;
      try {
        parse(bytes.subarray(0, n));
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(IngestError);
    }
    const wrongFrame = {
      shared: { frames: [] },
      profiles: [{ type: 'sampled', unit: 'none', samples: [[3]], weights: [1] }],
    };
    expect(() => parse(Buffer.from(JSON.stringify(wrongFrame)))).toThrow(/frame 3/);
  });
});
