/**
 * A seeded generator of large synthetic CPU profiles, for the tests and benchmarks that need many
 * samples, many distinct stacks and deep recursion. The same options always give the same bytes.
 * It also returns the flat and cum of every function computed from its own construction (by the
 * rules `go tool pprof -top` follows), so a test can check a reader against the generator without a
 * stored answer.
 */
import { gzipSync } from 'node:zlib';
import { encodeProfile, type WriterLocation, type WriterSample } from './profile-writer.ts';

export interface SyntheticOptions {
  seed: number;
  samples: number;
  stacks: number;
  functions: number;
  locations: number;
  /** Share of stacks that are 200–400 frames of (mutual) recursion. */
  deepShare: number;
  /**
   * Draws the samples from this seed instead of continuing `seed`'s sequence: the same program and
   * stacks, another run of it (what a diff compares). Absent: the profile `seed` alone makes.
   */
  sampleSeed?: number;
}

/** The 1M-sample profile the suites and benchmarks call "synthetic huge". */
export const SYNTHETIC_HUGE: SyntheticOptions = {
  seed: 20260901,
  samples: 1_000_000,
  stacks: 200_000,
  functions: 6_000,
  locations: 16_000,
  deepShare: 0.03,
};

/** A deterministic 32-bit PRNG (mulberry32): uniform in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface SyntheticProfile {
  /** gzip-compressed profile.proto bytes. */
  gz: Buffer;
  /** Uncompressed size of the protobuf message. */
  rawBytes: number;
  /** Per sample type index: total, and function name → [flat, cum]. */
  expected: { type: string; total: number; functions: Map<string, [number, number]> }[];
}

const PERIOD = 10_000_000; // 100 Hz, in nanoseconds

export function generateSyntheticProfile(o: SyntheticOptions): SyntheticProfile {
  const rnd = prng(o.seed);
  const int = (n: number) => Math.floor(rnd() * n);
  const pkgs = ['net/http', 'encoding/json', 'runtime', 'example.com/shop/api', 'example.com/shop/db', 'sync', 'bufio'];
  const functions = Array.from({ length: o.functions }, (_, i) => {
    const pkg = pkgs[i % pkgs.length]!;
    return { id: i + 1, name: `${pkg}.fn${i}`, filename: `${pkg}/file${i % 97}.go` };
  });
  // Each location holds one frame, or two when a callee was inlined into it (innermost first).
  const locations: WriterLocation[] = Array.from({ length: o.locations }, (_, i) => {
    const lines = [{ functionId: 1 + int(o.functions), line: 1 + int(900) }];
    if (rnd() < 0.1) lines.unshift({ functionId: 1 + int(o.functions), line: 1 + int(900) });
    return { id: i + 1, mappingId: 1, address: 0x400000 + i * 16, lines };
  });
  const recursive = locations.slice(0, 40).map((l) => l.id); // a small set the deep stacks cycle through

  // Distinct stacks, leaf first, grown as a call tree (each new stack extends an earlier one by a
  // few callees, so stacks share their root side as real ones do); a few end in deep recursion.
  const roots = [locations[o.locations - 1]!.id, locations[o.locations - 2]!.id];
  const seen = new Set<string>();
  const stacks: number[][] = [];
  while (stacks.length < o.stacks) {
    let parent = stacks.length === 0 ? roots : stacks[int(stacks.length)]!;
    if (parent.length > 20) parent = roots;
    const st: number[] = [];
    if (rnd() < o.deepShare) {
      const depth = 200 + int(201);
      const a = recursive[int(recursive.length)]!;
      const b = recursive[int(recursive.length)]!;
      for (let d = 0; d < depth; d++) st.push(d % 2 === 0 ? a : b);
    }
    const grow = 1 + int(3);
    for (let d = 0; d < grow; d++) st.push(1 + int(o.locations - 2));
    if (parent.length > 0 && parent.length < 200) st.push(...parent);
    else st.push(...roots);
    const key = st.join(',');
    if (seen.has(key)) continue;
    seen.add(key);
    stacks.push(st);
  }

  // Expected figures: flat to the innermost frame of the leaf location, cum once per sample per name.
  const draw = o.sampleSeed === undefined ? rnd : prng(o.sampleSeed);
  const nameOfFn = (id: number) => functions[id - 1]!.name;
  const counts = new Float64Array(o.stacks);
  const sampleStack = new Uint32Array(o.samples);
  const sampleCount = new Uint8Array(o.samples);
  for (let i = 0; i < o.samples; i++) {
    // skewed: low stack indexes are hotter
    const r = draw();
    const k = Math.min(o.stacks - 1, Math.floor(r * r * o.stacks));
    sampleStack[i] = k;
    sampleCount[i] = 1 + Math.floor(draw() * 3);
    counts[k]! += sampleCount[i]!;
  }
  const countFlatCum = new Map<string, [number, number]>();
  let countTotal = 0;
  for (let k = 0; k < o.stacks; k++) {
    const c = counts[k]!;
    if (c === 0) continue;
    countTotal += c;
    const st = stacks[k]!;
    const leaf = nameOfFn(locations[st[0]! - 1]!.lines[0]!.functionId);
    const names = new Set<string>();
    for (const locId of st) for (const ln of locations[locId - 1]!.lines) names.add(nameOfFn(ln.functionId));
    for (const n of names) {
      const e = countFlatCum.get(n) ?? [0, 0];
      e[1] += c;
      countFlatCum.set(n, e);
    }
    countFlatCum.get(leaf)![0] += c;
  }
  const cpuFlatCum = new Map([...countFlatCum].map(([n, [f, c]]) => [n, [f * PERIOD, c * PERIOD] as [number, number]]));

  const kinds = ['handler', 'worker', 'gc'];
  function* samples(): Generator<WriterSample> {
    for (let i = 0; i < o.samples; i++) {
      const c = sampleCount[i]!;
      yield {
        locationIds: stacks[sampleStack[i]!]!,
        values: [c, c * PERIOD],
        labels:
          i % 3 === 0
            ? [
                { key: 'kind', str: kinds[i % kinds.length]! },
                { key: 'bytes', num: (i % 4096) * 8, unit: 'bytes' },
              ]
            : [],
      };
    }
  }
  const raw = encodeProfile({
    sampleTypes: [
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ],
    samples: samples(),
    mappings: [{ id: 1, file: '/opt/synthetic/server' }],
    locations,
    functions,
    timeNanos: 1_788_000_000_000_000_000,
    durationNanos: 30_000_000_000,
    periodType: { type: 'cpu', unit: 'nanoseconds' },
    period: PERIOD,
    comments: [`SYNTHETIC: generated by stagediff's scripts/testdata (seed ${o.seed}), not measured`],
  });
  return {
    gz: gzipSync(raw, { level: 6 }),
    rawBytes: raw.length,
    expected: [
      { type: 'samples', total: countTotal, functions: countFlatCum },
      { type: 'cpu', total: countTotal * PERIOD, functions: cpuFlatCum },
    ],
  };
}
