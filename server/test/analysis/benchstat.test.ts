import { describe, expect, it } from 'vitest';
import { compareBenchmarks, mannWhitneyU, medianCiOrders, quantileSorted } from '../../src/analysis/benchstat.ts';
import { parse } from '../../src/ingest/gobench.ts';
import type { BenchmarkDiffRow } from '../../src/model/benchmark.ts';
import { fixtureDir, gobenchSamples as samples, read } from '../helpers/parser-tests.ts';
import {
  goFixed,
  goSignedFixed2,
  readBenchstatCsv,
  readBenchstatText,
  readScaled,
  type RefRow,
} from './benchstat-reference.ts';

const ours = fixtureDir('gobench');

/** Every benchmark pair with the real benchstat's outputs: [folder, pair name, base file, target file]. */
const PAIRS: [URL, string, string, string][] = [
  ...[
    'json-encode',
    'string-concat',
    'unchanged',
    'unchanged-noisy',
    'multi-pkg-metric',
    'slice-prealloc-regression',
  ].map((p) => [samples, p, `${p}-before.txt`, `${p}-after.txt`] as [URL, string, string, string]),
  [ours, 'kvjoin', 'kvjoin-before.txt', 'kvjoin-after.txt'],
  [ours, 'kvjoin-rerun', 'kvjoin-before.txt', 'kvjoin-rerun.txt'],
];

function diffOf(dir: URL, baseFile: string, targetFile: string) {
  return compareBenchmarks(parse(read(dir, baseFile)), parse(read(dir, targetFile)));
}

/** What benchstat prints in its "vs base" column for our row. */
function deltaCell(r: BenchmarkDiffRow): string {
  if (!r.significant) return '~';
  if (r.deltaPercent === null) return '?';
  if (r.base.median === r.target.median) return '0.00%';
  return `${goSignedFixed2(r.deltaPercent)}%`;
}

/** benchstat's "p=0.PPP n=N" (the p part is left out when p is exactly 0). */
function pnCell(r: BenchmarkDiffRow): string {
  return `${r.p !== 0 ? `p=${goFixed(r.p, 3)} ` : ''}n=${r.n}`;
}

/** benchstat's "± N%" cell; null stands for its "∞" (our fixtures never cross zero, so never "?"). */
function ciCell(ci: number | null): string {
  return ci === null ? '∞' : `${goFixed(100 * ci, 0)}%`;
}

describe.each(PAIRS)('benchstat reference %s / %s', (dir, pair, baseFile, targetFile) => {
  const diff = diffOf(dir, baseFile, targetFile);
  const csv = readBenchstatCsv(read(new URL('expected/', dir), `${pair}.benchstat.csv`).toString('utf8'));
  const text = readBenchstatText(read(new URL('expected/', dir), `${pair}.benchstat.txt`).toString('utf8'));
  const key = (r: { pkg: string; unit: string; name: string }) => `${r.pkg} ${r.unit} ${r.name}`;

  it('has the same rows, in the same order, as benchstat -format csv and the text table', () => {
    expect(csv.length).toBeGreaterThan(0);
    expect(diff.rows.map(key)).toEqual(csv.map(key));
    expect(text.map(key)).toEqual(csv.map(key));
  });

  it('reproduces medians bit for bit and CI, delta, p and n as printed (CSV)', () => {
    const mismatches: string[] = [];
    diff.rows.forEach((r, i) => {
      const ref: RefRow = csv[i]!;
      const got = {
        base: { center: r.base.median, ci: ciCell(r.base.ci) },
        target: { center: r.target.median, ci: ciCell(r.target.ci) },
        delta: deltaCell(r),
        pn: pnCell(r),
      };
      const want = {
        base: { center: Number(ref.base.center), ci: ref.base.ci },
        target: { center: Number(ref.target.center), ci: ref.target.ci },
        delta: ref.delta,
        pn: ref.pn,
      };
      if (JSON.stringify(got) !== JSON.stringify(want))
        mismatches.push(`${key(r)}: got ${JSON.stringify(got)} want ${JSON.stringify(want)}`);
    });
    expect(mismatches).toEqual([]);
  });

  it('agrees with the text table: medians within print rounding, CI, verdicts and p-values', () => {
    const mismatches: string[] = [];
    diff.rows.forEach((r, i) => {
      const ref = text[i]!;
      for (const [mine, cell] of [
        [r.base.median, ref.base.center],
        [r.target.median, ref.target.center],
      ] as const) {
        const printed = readScaled(cell);
        if (Math.abs(mine - printed.value) > printed.halfUlp * (1 + 1e-9))
          mismatches.push(`${key(r)}: median ${mine} vs printed ${cell}`);
      }
      const cis = `${ciCell(r.base.ci)} ${ciCell(r.target.ci)}`;
      if (cis !== `${ref.base.ci} ${ref.target.ci}`)
        mismatches.push(`${key(r)}: CI ${cis} vs ${ref.base.ci} ${ref.target.ci}`);
      if (deltaCell(r) !== ref.delta) mismatches.push(`${key(r)}: delta ${deltaCell(r)} vs ${ref.delta}`);
      if (pnCell(r) !== ref.pn) mismatches.push(`${key(r)}: ${pnCell(r)} vs ${ref.pn}`);
    });
    expect(mismatches).toEqual([]);
  });
});

describe('benchstat verdicts named in the corpus README', () => {
  const verdicts = (pair: string) => {
    const d = diffOf(samples, `${pair}-before.txt`, `${pair}-after.txt`);
    return {
      significant: d.rows.filter((r) => r.significant).length,
      unchanged: d.rows.filter((r) => !r.significant).length,
      d,
    };
  };

  it('unchanged: every row ~', () => {
    const v = verdicts('unchanged');
    expect([v.unchanged, v.significant]).toEqual([11, 0]);
  });

  it('unchanged-noisy: the same code, yet benchstat flags 5 rows (+3.91 %, +6.91 %, +58.23 % sec/op) and so do we', () => {
    const v = verdicts('unchanged-noisy');
    expect([v.unchanged, v.significant]).toEqual([6, 5]);
    const secOp = v.d.rows
      .filter((r) => r.unit === 'sec/op')
      .map((r) => [r.name, goSignedFixed2(r.deltaPercent!), r.significant]);
    expect(secOp).toEqual([
      ['CRC32C-2', '+3.91', true],
      ['FNV64a-2', '+6.91', true],
      ['Key-2', '+58.23', true],
    ]);
  });

  it('multi-pkg-metric: "?" rows have a null delta, 6 ~ and 8 significant', () => {
    const v = verdicts('multi-pkg-metric');
    expect([v.unchanged, v.significant]).toEqual([6, 8]);
    const unknown = v.d.rows.filter((r) => r.deltaPercent === null).map((r) => `${r.unit} ${r.name}`);
    expect(unknown).toEqual(['B/op Get/zipf-2', 'B/op Get/uniform-2', 'allocs/op Get/uniform-2']);
    const equalZero = v.d.rows.find((r) => r.unit === 'allocs/op' && r.name === 'Get/zipf-2')!;
    expect(equalZero).toMatchObject({ deltaPercent: 0, p: 1, significant: false, base: { median: 0, ci: 0 } });
  });

  it('emits the design JSON shape', () => {
    const d = diffOf(samples, 'json-encode-before.txt', 'json-encode-after.txt');
    expect(d.kind).toBe('benchmark-diff');
    const r = JSON.parse(JSON.stringify(d.rows[0]));
    expect(Object.keys(r)).toEqual(
      expect.arrayContaining(['pkg', 'name', 'unit', 'base', 'target', 'deltaPercent', 'p', 'n', 'significant']),
    );
    expect(r).toMatchObject({
      pkg: 'benchcorpus/jsonenc',
      name: 'Encode/small-2',
      unit: 'sec/op',
      n: 10,
      significant: true,
    });
    expect(r.base.ci).toBeCloseTo(0.026, 3);
  });
});

describe('statistics building blocks', () => {
  it('median uses the type-8 quantile (mean of the two middle values for even n)', () => {
    expect(quantileSorted([1, 2, 3, 4], 0.5)).toBe(2.5);
    expect(quantileSorted([1, 2, 3, 4, 100], 0.5)).toBe(3);
  });

  it('median CI order statistics: too few runs give ±∞, 10 runs give x(2)..x(9)', () => {
    expect(medianCiOrders(5, 0.95)).toEqual({ lo: 0, hi: 5 }); // lower bound −∞: benchstat's "± ∞"
    expect(medianCiOrders(6, 0.95)).toEqual({ lo: 1, hi: 6 });
    expect(medianCiOrders(10, 0.95)).toEqual({ lo: 2, hi: 9 });
    // The normal approximation above 30 runs stays close to the exact binomial choice.
    const big = medianCiOrders(100, 0.95);
    expect(big.lo).toBeGreaterThanOrEqual(39);
    expect(big.hi).toBeLessThanOrEqual(62);
  });

  it('U test: exact without ties (known tail), with ties, all equal, and the normal approximation', () => {
    // Complete separation of 3 vs 3: p = 2 / C(6,3) = 0.1.
    expect(mannWhitneyU([1, 2, 3], [4, 5, 6]).p).toBeCloseTo(0.1, 12);
    // Complete separation of 10 vs 10: p = 2 / C(20,10).
    expect(
      mannWhitneyU(
        [...Array(10).keys()],
        [...Array(10).keys()].map((x) => x + 10),
      ).p,
    ).toBeCloseTo(2 / 184756, 15);
    // Ties across samples: 3 vs 3 with values {1,1,2} vs {1,2,2}.
    const tied = mannWhitneyU([1, 1, 2], [1, 2, 2]);
    expect(tied.method).toBe('exact');
    expect(tied.u).toBe(3);
    expect(tied.p).toBe(1);
    expect(mannWhitneyU([5, 5], [5, 5, 5])).toMatchObject({ p: 1, method: 'all-equal' });
    const big = mannWhitneyU(
      [...Array(60).keys()],
      [...Array(60).keys()].map((x) => x + 5),
    );
    expect(big.method).toBe('normal');
    // By hand: U1 = 1485 + 55·½ = 1512.5, μ = 1800, σ = √(3600·(121 − 330/14280)/12) = 190.507,
    // z = (−287.5 + ½)/σ = −1.5065, p = 2·Φ(z) = 0.1319.
    expect(big.u).toBe(1512.5);
    expect(big.p).toBeCloseTo(0.1319, 4);
  });
});

describe('benchstat pairs results only under equal configuration lines', () => {
  const published = new URL('published/', samples);
  const old = parse(read(published, 'crc-old.txt'));
  const neu = parse(read(published, 'crc-new.txt'));

  it('crc-old vs crc-new (their note: lines differ): no row, and the reason names the line', () => {
    // benchstat prints the two files as separate one-column tables: nothing compared.
    const printed = read(published, 'crc-old-new.benchstat.txt').toString('utf8');
    expect(printed).not.toMatch(/vs base/);
    const d = compareBenchmarks(old, neu);
    expect(d.rows).toEqual([]);
    expect(d.unpaired.base).toBe(old.benchmarks.length);
    expect(d.unpaired.target).toBe(neu.benchmarks.length);
    expect(d.reason).toMatch(/note: "hw acceleration disabled" vs "hw acceleration enabled"/);
    expect(d.reason).toMatch(/-ignore note/);
  });

  it('with the note line left out (benchstat -ignore note) every benchmark pairs, as benchstat pairs them', () => {
    const strip = (r: typeof old) => ({
      ...r,
      benchmarks: r.benchmarks.map((s) => ({
        ...s,
        config: Object.fromEntries(Object.entries(s.config).filter(([k]) => k !== 'note')),
      })),
    });
    const d = compareBenchmarks(strip(old), strip(neu));
    const csv = readBenchstatCsv(read(published, 'crc-old-new-ignore-note.benchstat.csv').toString('utf8'));
    expect(d.reason).toBeNull();
    expect(d.rows.map((r) => `${r.unit} ${r.name}`)).toEqual(csv.map((r) => `${r.unit} ${r.name}`));
    d.rows.forEach((r, i) => {
      expect(r.base.median).toBe(Number(csv[i]!.base.center));
      expect(deltaCell(r)).toBe(csv[i]!.delta);
      expect(pnCell(r)).toBe(csv[i]!.pn);
      expect(r.significant).toBe(csv[i]!.delta !== '~');
    });
  });
});
