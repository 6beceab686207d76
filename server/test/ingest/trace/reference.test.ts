/**
 * Execution traces against Go's own answers (fixtures/traces): real traces of every wire version Go
 * writes from 1.22 to 1.26 (the demo service under load, `go test -trace` of other modules), each
 * detected by content alone; its four derived profiles equal `go tool trace -pprof=KIND` read by
 * `go tool pprof -top` (total, and every function's flat and cum for both sample types); its summary
 * equals scripts/trace-reference's (golang.org/x/exp/trace) figure by figure within 0.1 %.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { DERIVED_KINDS } from '../../../src/ingest/trace/index.ts';
import type { TraceModel } from '../../../src/model/trace.ts';
import { fixturesDir } from '../../helpers/paths.ts';
import { compareWithin, compareWithTop } from '../../helpers/trace-compare.ts';

const dir = `${fixturesDir}traces/`;
const expectedDir = `${dir}expected/`;
const traces = readdirSync(expectedDir)
  .filter((f) => f.endsWith('.summary.json'))
  .map((f) => f.slice(0, -'.summary.json'.length))
  .sort();

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
    const read = (type: string) => readFileSync(`${expectedDir}${name}.${kind}.${type}.txt`, 'utf8');
    const { diffs, figures } = compareWithTop(p, { contentions: read('contentions'), delay: read('delay') });
    expect(diffs).toEqual([]);
    expect(figures).toBeGreaterThan(2);
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
