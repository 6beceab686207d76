/**
 * Execution traces against Go's own answers (fixtures/traces): real traces of every wire version Go
 * writes from 1.22 to 1.26 (the demo service under load, `go test -trace` of other modules), each
 * detected by content alone; its four derived profiles equal `go tool trace -pprof=KIND` read by
 * `go tool pprof -top` (total, and every function's flat and cum for both sample types); its summary
 * equals scripts/trace-reference's (golang.org/x/exp/trace) figure by figure within 0.1 %.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flatCum, percentageBase } from '../../../src/analysis/flat-cum.ts';
import { ingest } from '../../../src/ingest/detect.ts';
import '../../../src/ingest/registry.ts';
import { DERIVED_KINDS } from '../../../src/ingest/trace/index.ts';
import type { TraceModel } from '../../../src/model/trace.ts';
import { fixturesDir } from '../../helpers/paths.ts';
import { parseTopAll } from '../../helpers/pprof-text.ts';

const dir = `${fixturesDir}traces/`;
const expectedDir = `${dir}expected/`;
const traces = readdirSync(expectedDir)
  .filter((f) => f.endsWith('.summary.json'))
  .map((f) => f.slice(0, -'.summary.json'.length))
  .sort();

/** The total pprof reports ("… of X total"), in the unit the report was asked for. */
function reportTotal(text: string): number {
  const m = /of (-?[\d.]+)\w* total/.exec(text);
  if (!m) throw new Error(`no total in:\n${text.slice(0, 400)}`);
  return Number(m[1]);
}

/**
 * Every number of `ours` within 0.1 % of `ref` (and every string, boolean and null equal, every
 * array as long); returns how many figures were compared.
 */
function compareWithin(ours: unknown, ref: unknown, path: string, mismatches: string[]): number {
  if (typeof ref === 'number' && typeof ours === 'number') {
    const tol = Math.max(Math.abs(ref), Math.abs(ours)) * 1e-3;
    if (Math.abs(ref - ours) > tol) mismatches.push(`${path}: ${ours} vs ${ref}`);
    return 1;
  }
  if (Array.isArray(ref)) {
    if (!Array.isArray(ours) || ours.length !== ref.length) {
      mismatches.push(`${path}: length ${Array.isArray(ours) ? ours.length : typeof ours} vs ${ref.length}`);
      return 1;
    }
    return ref.reduce<number>((n, r, i) => n + compareWithin(ours[i], r, `${path}[${i}]`, mismatches), 0);
  }
  if (ref !== null && typeof ref === 'object') {
    if (ours === null || typeof ours !== 'object') {
      mismatches.push(`${path}: ${JSON.stringify(ours)} vs an object`);
      return 1;
    }
    const keys = new Set([...Object.keys(ref), ...Object.keys(ours as object)]);
    let n = 0;
    for (const k of keys)
      n += compareWithin(
        (ours as Record<string, unknown>)[k],
        (ref as Record<string, unknown>)[k],
        `${path}.${k}`,
        mismatches,
      );
    return n;
  }
  if (ours !== ref) mismatches.push(`${path}: ${JSON.stringify(ours)} vs ${JSON.stringify(ref)}`);
  return 1;
}

it('covers every wire version from Go 1.22 to 1.26 and traces of other modules', () => {
  const versions = traces.map((t) => readFileSync(`${dir}${t}.trace`).subarray(0, 8).toString());
  expect(new Set(versions)).toEqual(new Set(['go 1.22 ', 'go 1.23 ', 'go 1.25 ', 'go 1.26 ']));
  expect(traces.filter((t) => !t.startsWith('demo-')).length).toBeGreaterThanOrEqual(2);
});

describe.each(traces)('%s', (name) => {
  let model: TraceModel;
  const load = async (): Promise<TraceModel> => {
    if (!model) {
      // no file name: detection by content alone
      const parsed = await ingest({ name: 'upload', path: `${dir}${name}.trace` });
      if (parsed.kind !== 'trace') throw new Error(`${name} read as ${parsed.kind}`);
      model = parsed.trace;
    }
    return model;
  };

  it.each(DERIVED_KINDS)('-pprof=%s equals go tool trace and go tool pprof -top', async (kind) => {
    const m = await load();
    const p = m.profiles[kind];
    expect(p.kind).toBe(`trace-${kind}`);
    expect(p.durationNanos).toBe(m.summary.spanNanos);
    expect(p.sampleTypes).toEqual([
      { type: 'contentions', unit: 'count' },
      { type: 'delay', unit: 'nanoseconds' },
    ]);
    for (const [index, type] of [
      [0, 'contentions'],
      [1, 'delay'],
    ] as const) {
      const text = readFileSync(`${expectedDir}${name}.${kind}.${type}.txt`, 'utf8');
      expect(percentageBase(p, index)).toBe(reportTotal(text));
      const ref = text.includes('flat%') ? parseTopAll(text) : new Map<string, [number, number]>();
      const ours = new Map(
        flatCum(p, index)
          .filter((r) => r.flat !== 0 || r.cum !== 0)
          .map((r) => [r.name, [r.flat, r.cum] as [number, number]]),
      );
      expect([...ours.keys()].sort()).toEqual([...ref.keys()].sort());
      for (const [fn, v] of ref) expect([fn, ours.get(fn)]).toEqual([fn, v]);
    }
  });

  it('has the summary scripts/trace-reference computes (x/exp/trace), within 0.1 %', async () => {
    const m = await load();
    const ref = JSON.parse(readFileSync(`${expectedDir}${name}.summary.json`, 'utf8'));
    const mismatches: string[] = [];
    const n = compareWithin(JSON.parse(JSON.stringify(m.summary)), ref, 'summary', mismatches);
    expect(mismatches).toEqual([]);
    expect(n).toBeGreaterThan(300);
    expect(m.summary.events).toBeGreaterThan(500);
  });
});
