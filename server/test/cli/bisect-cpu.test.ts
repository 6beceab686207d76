/**
 * `stagediff bisect --metric cpu-per-request`: each run's figure is the CPU profile's total over the
 * requests served in its window, by the formula `capture` records. Checked on the demo's recorded runs
 * (the figure equals each run's capture.json `cpuMicrosPerRequest`), the decisions on those figures,
 * and the flags it needs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { aaCheck, judgeStep, regressionCheck } from '../../src/cli/bisect-decide.ts';
import { bisectCommand, profileWindow } from '../../src/cli/bisect.ts';
import { readLoad } from '../../src/cli/capture-load.ts';
import { cpuMicrosPerRequest, readCpu } from '../../src/cli/capture-profiles.ts';
import { UsageError } from '../../src/cli/flags.ts';
import { fixturesDir } from '../helpers/paths.ts';

/** Each run's CPU per request, read from its cpu.pb.gz and wrk.txt as the bisect's measurer reads them. */
async function cpuPerRequest(stage: string): Promise<{ measured: number[]; recorded: number[] }> {
  const measured: number[] = [];
  const recorded: number[] = [];
  for (let k = 1; k <= 6; k++) {
    const dir = join(fixturesDir, 'demo', stage, `run-${k}`);
    const load = await readLoad(join(dir, 'wrk.txt'));
    if (typeof load === 'string') throw new Error(`${stage} run ${k}: ${load}`);
    const v = cpuMicrosPerRequest(await readCpu(join(dir, 'cpu.pb.gz')), load.rps);
    if (v === null) throw new Error(`${stage} run ${k}: no CPU per request`);
    measured.push(v);
    const rec = JSON.parse(readFileSync(join(dir, 'capture.json'), 'utf8')) as {
      runs: { summary: { cpuMicrosPerRequest: number } }[];
    };
    recorded.push(rec.runs[0]!.summary.cpuMicrosPerRequest);
  }
  return { measured, recorded };
}

const o = { metric: 'cpu-per-request' as const, minChange: 0.05 };

describe('bisect --metric cpu-per-request on the demo recorded runs', () => {
  it("reads each run's figure exactly as capture recorded it", async () => {
    for (const stage of ['baseline', 'pooled', 'async-log']) {
      const { measured, recorded } = await cpuPerRequest(stage);
      expect(measured).toEqual(recorded);
    }
    const base = await cpuPerRequest('baseline');
    expect(base.measured[0]).toBeCloseTo(376.825, 3);
  });

  it('decides on CPU per request, lower being better: pooled good, baseline bad', async () => {
    const pooled = (await cpuPerRequest('pooled')).measured;
    const baseline = (await cpuPerRequest('baseline')).measured;
    const asyncLog = (await cpuPerRequest('async-log')).measured;

    const aa = aaCheck(pooled.slice(0, 3), pooled.slice(3), o);
    expect(aa.verdict.status).not.toBe('significant');

    // Baseline costs ~2.9x the CPU per request of pooled: a regression from pooled to baseline...
    const reg = regressionCheck([pooled.slice(0, 3), pooled.slice(3)], baseline, o);
    expect(reg.verdict.status).toBe('significant');
    expect(reg.verdict.ratio!).toBeGreaterThan(2.5);
    expect(reg.ok).toBe(true);
    // ...and none the other way round (less CPU is better, not a regression).
    expect(regressionCheck([baseline.slice(0, 3), baseline.slice(3)], pooled, o).ok).toBe(false);

    // A commit costing baseline's CPU is bad; one costing pooled's (its own other runs) is good.
    expect(judgeStep(pooled, baseline, baseline.slice(0, 6), o).answer).toBe('bad');
    const step = judgeStep(pooled, baseline, asyncLog, o);
    expect(step.answer).toBe('good');
    expect(step.reason).toMatch(/^better than bad/);
  });
});

describe('bisect --metric cpu-per-request: flags', () => {
  const base = ['--good', 'HEAD~1', '--bad', 'HEAD', '--ready', 'http://127.0.0.1:9/healthz'];
  it('refuses cpu-per-request without --pprof, naming both flags', async () => {
    const err = await bisectCommand([
      ...base,
      '--load',
      'wrk -d5s http://127.0.0.1:9/',
      '--metric',
      'cpu-per-request',
      '--',
      'true',
    ]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toMatch(/^--metric cpu-per-request needs --pprof URL/);
  });

  it('places the profile window inside the load as capture does, and says what is missing', () => {
    expect(
      profileWindow(
        'wrk -t1 -c4 -d5s http://x/',
        'http://127.0.0.1:6060/debug/pprof/',
        undefined,
        undefined,
        'cpu-per-request',
      ),
    ).toEqual({
      pprof: 'http://127.0.0.1:6060',
      warmup: 1,
      seconds: 3,
    });
    expect(profileWindow('./my-load', 'http://h:1', '2', '4', 'p99')).toEqual({
      pprof: 'http://h:1',
      warmup: 2,
      seconds: 4,
    });
    expect(profileWindow('wrk -d5s http://x/', undefined, undefined, undefined, 'p99')).toBeNull();
    expect(() => profileWindow('./my-load', 'http://h:1', undefined, undefined, 'cpu-per-request')).toThrow(
      /^cannot tell how long --load '\.\/my-load' runs: give --seconds S/,
    );
    expect(() => profileWindow('wrk -d2s http://x/', 'http://h:1', undefined, undefined, 'cpu-per-request')).toThrow(
      /^--load runs 2 s: too short/,
    );
    expect(() => profileWindow('wrk -d5s http://x/', 'h:1', undefined, undefined, 'cpu-per-request')).toThrow(
      /^--pprof must be an http\(s\) URL/,
    );
    expect(() => profileWindow('wrk -d5s http://x/', undefined, undefined, '3', 'rps')).toThrow(
      /^--seconds places the CPU profile in each run: it needs --pprof URL/,
    );
    expect(() => profileWindow('wrk -d5s http://x/', 'http://h:1', undefined, '0', 'rps')).toThrow(/^--seconds 0:/);
  });
});
