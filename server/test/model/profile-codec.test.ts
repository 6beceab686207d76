import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/detect.ts';
import { callTree } from '../../src/analysis/call-tree.ts';
import { flatCum, sortByFlat } from '../../src/analysis/flat-cum.ts';
import { aggregateSamples, decodeProfile, encodeProfile } from '../../src/model/profile-codec.ts';
import type { Profile } from '../../src/model/profile.ts';
import { fixturesDir } from '../helpers/paths.ts';

async function load(rel: string): Promise<Profile> {
  const p = await ingest({ name: rel, bytes: readFileSync(join(fixturesDir, rel)) });
  if (p.kind !== 'profile') throw new Error(`${rel} is not a profile`);
  return p.profile;
}

describe('the compact derived form of a profile', () => {
  for (const rel of [
    'demo/baseline/run-1/cpu.pb.gz',
    'demo/baseline/run-1/heap.pb.gz',
    'demo/pooled/run-1/goroutine.pb.gz',
  ]) {
    it(`keeps every figure of ${rel}: flat, cum and the call tree, for every sample type`, async () => {
      const p = await load(rel);
      const c = decodeProfile(encodeProfile(aggregateSamples(p)))!;
      expect(c).not.toBeNull();
      expect(c.stats).toEqual(p.stats);
      expect(c.labelSets).toEqual(p.labelSets);
      // mapping files and stand-in markers too: filters match them
      expect(c.frames).toEqual(p.frames);
      expect(c.sampleStack.length).toBeLessThanOrEqual(p.sampleStack.length);
      p.sampleTypes.forEach((_t, i) => {
        expect(sortByFlat(flatCum(c, i))).toEqual(sortByFlat(flatCum(p, i)));
        expect(callTree(c, i, 0).tree).toEqual(callTree(p, i, 0).tree);
      });
    });
  }

  it('sums samples of one stack and label set, and keeps those of different label sets apart', async () => {
    const p = await load('demo/baseline/run-1/cpu.pb.gz');
    // The same stack sampled twice more, once with another label set.
    const twice: Profile = {
      ...p,
      sampleStack: Uint32Array.from([...p.sampleStack, p.sampleStack[0]!, p.sampleStack[0]!]),
      sampleLabelSet: Uint32Array.from([...p.sampleLabelSet, p.sampleLabelSet[0]!, 1]),
      labelSets: p.labelSets.length > 1 ? p.labelSets : [[], [{ key: 'k', str: 'v' }]],
      values: p.values.map((v) => Float64Array.from([...v, v[0]!, v[0]!])),
    };
    const a = aggregateSamples(twice);
    expect(a.sampleStack.length).toBe(aggregateSamples(p).sampleStack.length + (p.sampleLabelSet[0] === 1 ? 0 : 1));
    const total = (x: Profile) => x.values[1]!.reduce((s, v) => s + v, 0);
    expect(total(a)).toBe(total(twice));
  });

  it('decodes from a buffer at any alignment, and refuses one cut short', async () => {
    const p = aggregateSamples(await load('demo/baseline/run-1/cpu.pb.gz'));
    const bytes = encodeProfile(p);
    for (const shift of [0, 1, 3, 4]) {
      const moved = new Uint8Array(bytes.length + shift);
      moved.set(bytes, shift);
      const c = decodeProfile(moved.subarray(shift))!;
      expect(c.values).toEqual(p.values);
      expect(c.stackFrames).toEqual(p.stackFrames);
      expect(c.sampleStack).toEqual(p.sampleStack);
    }
    expect(decodeProfile(bytes.subarray(0, bytes.length - 4))).toBeNull();
  });

  it('refuses bytes that are not its encoding', () => {
    expect(decodeProfile(Buffer.from('not a model'))).toBeNull();
    expect(decodeProfile(Buffer.alloc(4))).toBeNull();
  });
});
