import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { BenchmarkDiff } from '../../src/model/benchmark.ts';
import {
  ciText,
  commonScale,
  deltaText,
  displayText,
  formatBenchRow,
  geomeanRow,
  geomeanText,
  goFixed,
  groupBenchRows,
  mediansAcrossStages,
  scaleText,
  unitClass,
} from '../../src/api/benchstat-format.ts';

const data = (name: string) => new URL(`./testdata/${name}`, import.meta.url);

/** The data rows of benchstat's text tables: [pkg, unit, name, base, ci, target, ci, delta, "p=… n=…"]. */
function benchstatCells(text: string) {
  let pkg = '';
  let unit = '';
  const rows: {
    pkg: string;
    unit: string;
    name: string;
    base: string;
    baseCi: string;
    target: string;
    targetCi: string;
    delta: string;
    pn: string;
  }[] = [];
  const geomeans: { pkg: string; unit: string; line: string }[] = [];
  for (const line of text.split('\n')) {
    const p = /^pkg: (\S+)/.exec(line);
    if (p) pkg = p[1]!;
    const u = /^\s+│\s+(\S+)\s+│\s+(\S+)\s+vs base/.exec(line);
    if (u) unit = u[1]!;
    const r = /^(\S+)\s+(\S+) ±\s+(\S+)\s+(\S+) ±\s+(\S+)\s+(\S+) \((p=\S+ n=\S+)\)/.exec(line);
    if (r)
      rows.push({
        pkg,
        unit,
        name: r[1]!,
        base: r[2]!,
        baseCi: r[3]!,
        target: r[4]!,
        targetCi: r[5]!,
        delta: r[6]!,
        pn: r[7]!,
      });
    if (line.startsWith('geomean')) geomeans.push({ pkg, unit, line });
  }
  return { rows, geomeans };
}

describe('benchstat formatting', () => {
  it('formats every row of real benchstat outputs exactly as benchstat printed them', () => {
    for (const pair of ['json-encode', 'multi-pkg-metric', 'unchanged-noisy']) {
      const diff = JSON.parse(readFileSync(data(`${pair}.diff.json`), 'utf8')) as BenchmarkDiff;
      const expected = benchstatCells(readFileSync(data(`${pair}.benchstat.txt`), 'utf8'));
      expect(expected.rows.length).toBe(diff.rows.length);
      for (const row of diff.rows) {
        const e = expected.rows.find((x) => x.pkg === row.pkg && x.unit === row.unit && x.name === row.name);
        expect(e, `${pair} ${row.pkg} ${row.unit} ${row.name}`).toBeDefined();
        const t = formatBenchRow(row);
        expect([t.base.benchstat, t.base.ci, t.target.benchstat, t.target.ci, t.delta, t.pn]).toEqual([
          e!.base,
          `± ${e!.baseCi}`,
          e!.target,
          `± ${e!.targetCi}`,
          e!.delta,
          e!.pn,
        ]);
      }
      // Geomean lines: our cells appear in benchstat's line, in order.
      for (const t of groupBenchRows(diff.rows)) {
        const g = geomeanRow(t.rows);
        const line = expected.geomeans.find((x) => x.pkg === t.pkg && x.unit === t.unit)?.line;
        if (!g) {
          expect(line).toBeUndefined();
          continue;
        }
        const cells = [
          geomeanText(g.base, t.unit).benchstat,
          geomeanText(g.target, t.unit).benchstat,
          deltaText({ significant: true, deltaPercent: g.deltaPercent }),
        ].filter(Boolean);
        expect(line!.replace(/[¹²³]/g, '').trim().split(/\s+/).slice(1)).toEqual(cells);
      }
    }
  });

  it('reads like benchstat with real units', () => {
    const diff = JSON.parse(readFileSync(data('json-encode.diff.json'), 'utf8')) as BenchmarkDiff;
    const small = formatBenchRow(diff.rows[0]!);
    expect(small.base.display).toBe('680.5 ns');
    expect(small.target.display).toBe('204.1 ns');
    expect(small.delta).toBe('-70.01%');
    expect(small.verdict).toBe('better');
    const bps = formatBenchRow(diff.rows.find((r) => r.unit === 'B/s')!);
    expect(bps.base.display).toBe('316.7 MiB/s');
    expect(bps.verdict).toBe('better');
    const bop = formatBenchRow(diff.rows.find((r) => r.unit === 'B/op' && r.name === 'Encode/medium-2')!);
    expect(bop.base.display).toBe('1.125 KiB');
    expect(displayText(25.166e-6, commonScale([25.166e-6, 7.0885e-6], 'decimal'), 'sec/op')).toBe('25.166 µs');
  });

  it('scales like benchunit', () => {
    expect(unitClass('B/op')).toBe('binary');
    expect(unitClass('B/s')).toBe('binary');
    expect(unitClass('sec/op')).toBe('decimal');
    expect(unitClass('allocs/op')).toBe('decimal');
    expect(unitClass('ops/B')).toBe('decimal');
    expect(commonScale([0, 0], 'decimal')).toEqual({ prec: 3, factor: 1, prefix: '' });
    expect(scaleText(1.5e-12, commonScale([1.5e-12], 'decimal'))).toBe('0.001500n');
    expect(scaleText(1020 * 1024, commonScale([1020 * 1024], 'binary'))).toBe('1020.0Ki');
  });

  it('rounds half to even like Go', () => {
    expect(goFixed(0.125, 2)).toBe('0.12');
    expect(goFixed(0.375, 2)).toBe('0.38');
    expect(goFixed(2.5, 0)).toBe('2');
    expect(goFixed(3.5, 0)).toBe('4');
    expect(goFixed(0.1, 1)).toBe('0.1');
    expect(goFixed(-0.001, 2)).toBe('-0.00');
    expect(goFixed(9.9996, 3)).toBe('10.000');
    expect(ciText(null)).toBe('± ∞');
    expect(ciText(0.025)).toBe('± 2%');
  });

  it('marks not significant and uncomputable changes', () => {
    expect(deltaText({ significant: false, deltaPercent: 3.2 })).toBe('~');
    expect(deltaText({ significant: true, deltaPercent: null })).toBe('?');
    expect(deltaText({ significant: true, deltaPercent: 0 })).toBe('+0.00%');
  });

  it('lines up medians across stages', () => {
    const row = (name: string, median: number) => ({
      pkg: 'p',
      name,
      unit: 'sec/op',
      base: { median, ci: 0 },
      target: { median, ci: 0 },
      deltaPercent: 0,
      p: 1,
      n: 10,
      nBase: 10,
      nTarget: 10,
      significant: false,
      verdict: {
        status: 'no-change' as const,
        ratio: 1,
        p: 1,
        nBase: 10,
        nTarget: 10,
        alpha: 0.05,
        minP: 2 / 184756,
        runsNeeded: 4,
      },
    });
    const m = mediansAcrossStages([[row('A', 1), row('B', 2)], null, [row('A', 0.5)]]);
    expect(m.get('p\u0000A\u0000sec/op')).toEqual([1, null, 0.5]);
    expect(m.get('p\u0000B\u0000sec/op')).toEqual([2, null, null]);
  });
});
