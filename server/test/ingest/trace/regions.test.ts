/**
 * Per-goroutine, per-region and per-task execution statistics of real traces with runtime/trace
 * tasks and regions (fixtures/traces/requests: a small annotated program and `go test -trace` of
 * the standard library's runtime/trace benchmarks) against scripts/trace-reference's `regions`
 * (golang.org/x/exp/trace, by go tool trace's rules): every figure equal.
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { type ExecStats, RegionSummarizer, type RegionsSummary } from '../../../src/ingest/trace/regions.ts';
import { type Transition, transitionOf } from '../../../src/ingest/trace/events.ts';
import { defaultTraceLimits, readTrace } from '../../../src/ingest/trace/reader.ts';
import { fileSource } from '../../../src/ingest/source.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const dir = `${fixturesDir}traces/requests/`;

async function regionsOf(path: string): Promise<RegionsSummary> {
  const s = new RegionSummarizer();
  const t: Transition = { kind: 'goroutine', id: 0, from: 0, to: 0, reason: '', stack: 0 };
  await readTrace(fileSource(path), (e) => s.event(e, transitionOf(e, t) ? t : null), defaultTraceLimits());
  return s.finish();
}

/** The statistics with zero entries of the reason and range maps left out (presence of a 0 is not a figure). */
function figures(s: ExecStats | null): unknown {
  if (!s) return null;
  const nz = (m: Record<string, number>) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== 0));
  return { ...s, blockNanos: nz(s.blockNanos), rangeNanos: nz(s.rangeNanos) };
}

describe.each(['lockwait-go1.26', 'runtime-trace-bench-go1.26'])('%s', (name) => {
  it('has every goroutine, task and region with the figures of scripts/trace-reference regions', async () => {
    const got = await regionsOf(`${dir}${name}.trace`);
    const want = JSON.parse(readFileSync(`${dir}expected/${name}.regions.json`, 'utf8')) as RegionsSummary;
    expect(want.tasks.length).toBeGreaterThan(10);
    expect(want.regions.length).toBeGreaterThan(10);
    expect(got.goroutines.map((g) => ({ ...g, stats: figures(g.stats) }))).toEqual(
      want.goroutines.map((g) => ({ ...g, stats: figures(g.stats) })),
    );
    expect(got.regions.map((r) => ({ ...r, stats: figures(r.stats) }))).toEqual(
      want.regions.map((r) => ({ ...r, stats: figures(r.stats) })),
    );
    expect(got.tasks.map((t) => ({ ...t, own: figures(t.own) }))).toEqual(
      want.tasks.map((t) => ({ ...t, own: figures(t.own) })),
    );
  });
});
