import { fixturesDir } from './paths.ts';
import { addStage, createComparison, upload } from './app.ts';
import type { StagediffApp } from '../../src/app.ts';

/** fixtures/repeated-runs: 5 wrk runs with a CPU profile each, per recorded stage. */
export const REPEATED_STAGES = ['fast-json', 'pooled', 'pooled-rerun'] as const;
export const RUNS = 5;

export function runFiles(stage: string, what: 'wrk.txt' | 'cpu.pb.gz'): string[] {
  return Array.from({ length: RUNS }, (_, i) => `${fixturesDir}repeated-runs/${stage}/run-${i + 1}/${what}`);
}

/** Requests/sec per run as wrk printed them (fixtures/repeated-runs/README.md). */
export const PRINTED_RPS: Record<(typeof REPEATED_STAGES)[number], number[]> = {
  'fast-json': [4108.04, 3846.39, 3192.78, 4519.54, 4087.94],
  pooled: [9742.1, 9211.83, 8120.86, 10456.63, 10348.51],
  'pooled-rerun': [9220.65, 7240.03, 9391.82, 8944.03, 7623.51],
};

/** The name a run's file is uploaded under: its folder folded in (`run-3-wrk.txt`), so the name pairs it. */
export function runFileName(path: string): string {
  return path.split('/').slice(-2).join('-');
}

/**
 * A comparison of the recorded stages in order, each with its wrk runs then its CPU profiles, uploaded
 * run by run under names that carry the run (`run-3-cpu.pb.gz` divides by `run-3-wrk.txt`).
 */
export async function uploadRepeatedRuns(
  app: StagediffApp,
  stages: readonly string[] = REPEATED_STAGES,
  opts: { profiles?: boolean; runs?: number } = {},
): Promise<{ id: string; stageIds: string[] }> {
  const { id, auth } = await createComparison(app, 'repeated runs');
  const stageIds: string[] = [];
  for (const s of stages) {
    const st = await addStage(app, id, auth, s);
    stageIds.push(st);
    const n = opts.runs ?? RUNS;
    for (const w of runFiles(s, 'wrk.txt').slice(0, n)) {
      const r = await upload(app, id, st, auth, [w], [runFileName(w)]);
      if (r.statusCode !== 200) throw new Error(`upload ${w}: ${r.body}`);
    }
    if (opts.profiles !== false)
      for (const p of runFiles(s, 'cpu.pb.gz').slice(0, n)) {
        const r = await upload(app, id, st, auth, [p], [runFileName(p)]);
        if (r.statusCode !== 200) throw new Error(`upload ${p}: ${r.body}`);
      }
  }
  return { id, stageIds };
}
