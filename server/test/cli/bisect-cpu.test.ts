/**
 * `stagediff bisect --metric cpu-per-request`: each run's figure is the CPU profile's total over the
 * requests served in its window, by the formula `capture` records. Checked on the demo's recorded runs
 * (the figure equals each run's capture.json `cpuMicrosPerRequest`), the decisions on those figures,
 * the flags it needs, and one live run of the demo service through the bisect's measurer.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { aaCheck, judgeStep, regressionCheck } from '../../src/cli/bisect-decide.ts';
import { bisectCommand, measureRun, profileWindow } from '../../src/cli/bisect.ts';
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

const GO = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
const live = spawnSync(GO, ['version']).status === 0 && spawnSync('sh', ['-c', 'command -v wrk']).status === 0;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

describe.skipIf(!live)('bisect --metric cpu-per-request: one live run of the demo service', () => {
  const work = mkdtempSync(join(tmpdir(), 'stagediff-bisect-cpu-'));
  let svc: ChildProcess | null = null;
  afterAll(() => {
    svc?.kill('SIGKILL');
    rmSync(work, { recursive: true, force: true });
  });

  it("measures the run's CPU per request from a CPU profile taken inside its load", { timeout: 120_000 }, async () => {
    const bin = join(work, 'svc');
    const built = spawnSync(GO, ['build', '-o', bin, '.'], {
      cwd: join(fixturesDir, 'demo-service'),
      encoding: 'utf8',
    });
    expect(built.stderr).toBe('');
    const [a, p] = [await freePort(), await freePort()];
    svc = spawn(bin, ['-addr', `127.0.0.1:${a}`, '-pprof-addr', `127.0.0.1:${p}`, '-upstream-addr', '127.0.0.1:0'], {
      stdio: 'ignore',
    });
    for (let i = 0; ; i++) {
      const ok = await fetch(`http://127.0.0.1:${a}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (i > 100) throw new Error('the demo service did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    const load = `wrk -t1 -c4 -d3s --latency 'http://127.0.0.1:${a}/api/orders?n=20&currency=EUR'`;
    const window = profileWindow(load, `http://127.0.0.1:${p}`, undefined, undefined, 'cpu-per-request');
    expect(window).toEqual({ pprof: `http://127.0.0.1:${p}`, warmup: 1, seconds: 1 });
    const runDir = join(work, 'run-1');
    const r = await measureRun(load, runDir, window, new AbortController().signal, 'run 1');
    expect(r.files).toEqual([join(runDir, 'wrk.txt'), join(runDir, 'cpu.pb.gz')]);
    // The profile covers the 1 s window, inside the load.
    const cpu = await readCpu(join(runDir, 'cpu.pb.gz'));
    expect(cpu!.durationSeconds).toBeGreaterThan(0.9);
    expect(cpu!.durationSeconds).toBeLessThan(3);
    expect(cpu!.cpuSeconds).toBeGreaterThan(0);
    const wrk = await readLoad(join(runDir, 'wrk.txt'));
    if (typeof wrk === 'string') throw new Error(wrk);
    expect(wrk.rps!).toBeGreaterThan(0);
    // The figure is capture's: CPU over the requests served in the window.
    const v = r['cpu-per-request']!;
    expect(v).toBe((cpu!.cpuSeconds * 1e6) / (wrk.rps! * cpu!.durationSeconds));
    // The demo's recorded runs cost 100-380 µs a request; a loaded machine may differ, not by 10x.
    expect(v).toBeGreaterThan(10);
    expect(v).toBeLessThan(10_000);
    expect(r.rps).toBe(wrk.rps);
  });
});
