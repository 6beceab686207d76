/**
 * joinSampleTypes on real answers: Pyroscope's alloc_objects and alloc_space of the demo's run-1
 * allocs profile, each a profile of one type with its own frame and stack tables (built with
 * Pyroscope's API types, fixtures/pyroscope), joined into one profile: stack by stack, it holds what
 * Go's own allocs.pb.gz holds for both types, and survives pprof encoding.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { encodePprof } from '../../../src/ingest/pprof/encode.ts';
import { parsePprof } from '../../../src/ingest/pprof/index.ts';
import type { Profile } from '../../../src/model/profile.ts';
import { joinSampleTypes } from '../../../src/services/profilers/join-types.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const answer = (type: string) => parsePprof(readFileSync(`${fixturesDir}pyroscope/answers/${type}/run-1.bin`), {});

/** Per stack (frame names, leaf first) and labels: each named type's summed value; all-zero stacks left out. */
function byStack(p: Profile, types: string[]): Map<string, number[]> {
  const cols = types.map((t) => p.sampleTypes.findIndex((x) => x.type === t));
  const out = new Map<string, number[]>();
  for (let i = 0; i < p.sampleStack.length; i++) {
    const s = p.sampleStack[i]!;
    const names: string[] = [];
    for (let j = p.stackOffsets[s]!; j < p.stackOffsets[s + 1]!; j++) names.push(p.frames[p.stackFrames[j]!]!.name);
    const key = `${names.join(';')}|${JSON.stringify(p.labelSets[p.sampleLabelSet[i]!])}`;
    const v = out.get(key) ?? types.map(() => 0);
    cols.forEach((c, t) => {
      v[t]! += p.values[c]![i]!;
    });
    out.set(key, v);
  }
  for (const [k, v] of out) if (v.every((x) => x === 0)) out.delete(k);
  return out;
}

describe('joinSampleTypes', () => {
  it("joins two single-type answers into Go's allocs profile, stack by stack", () => {
    const objects = answer('memory_alloc_objects_count_space_bytes');
    const space = answer('memory_alloc_space_bytes_space_bytes');
    expect(objects.sampleTypes.map((t) => t.type)).toEqual(['alloc_objects']);
    expect(space.sampleTypes.map((t) => t.type)).toEqual(['alloc_space']);
    const joined = joinSampleTypes([objects, space]);
    expect(joined.sampleTypes).toEqual([
      { type: 'alloc_objects', unit: 'count' },
      { type: 'alloc_space', unit: 'bytes' },
    ]);
    expect(joined.defaultSampleType).toBe('alloc_space');

    const go = parsePprof(gunzipSync(readFileSync(`${fixturesDir}demo/pooled/run-1/allocs.pb.gz`)), {});
    const want = byStack(go, ['alloc_objects', 'alloc_space']);
    const got = byStack(joined, ['alloc_objects', 'alloc_space']);
    expect(want.size).toBeGreaterThan(50);
    expect(got.size).toBe(want.size);
    for (const [k, v] of want) expect(got.get(k), k).toEqual(v);
    // one sample per stack and label set: the two answers' samples were matched, not laid side by side
    // (samples of one answer with the same stack are one sample too)
    expect(joined.sampleStack.length).toBeLessThanOrEqual(
      Math.max(objects.sampleStack.length, space.sampleStack.length),
    );
    expect(joined.sampleStack.length).toBeLessThan(objects.sampleStack.length + space.sampleStack.length);

    const again = parsePprof(encodePprof(joined), {});
    expect(byStack(again, ['alloc_objects', 'alloc_space'])).toEqual(got);
  });

  it('keeps a stack only one part has, with 0 for the other type', () => {
    const space = answer('memory_alloc_space_bytes_space_bytes');
    const cpu = answer('process_cpu_cpu_nanoseconds_cpu_nanoseconds');
    const joined = joinSampleTypes([space, cpu]);
    expect(joined.sampleStack.length).toBeGreaterThan(Math.max(space.sampleStack.length, cpu.sampleStack.length));
    let a = 0;
    let b = 0;
    for (const v of joined.values[0]!) a += v;
    for (const v of joined.values[1]!) b += v;
    let wantA = 0;
    let wantB = 0;
    for (const v of space.values[0]!) wantA += v;
    for (const v of cpu.values[0]!) wantB += v;
    expect([a, b]).toEqual([wantA, wantB]);
  });
});
