/**
 * A profile of 8,000,000 samples over 1,000,000 distinct stacks (scripts/testdata/many-stacks.mjs,
 * about 40 MB gzipped, 317 MiB inflated) and a second run of the same program, through a real
 * server as `stagediff serve` starts it — default settings: analysis worker processes, their heap and
 * time limits — over its socket: both uploads, the flamegraph and the diff as the web client asks
 * for them answer 200 with the profiles' figures, and the server's processes stay under 2.5 GB of
 * resident memory together. Slow (minutes, the files are generated on first use), never timed.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manyStacksProfilePath } from '../../../scripts/testdata/many-stacks.mjs';
import { repoRoot } from '../helpers/paths.ts';

/** What the web client asks for (its MIN_FRACTION). */
const MIN_FRACTION = 0.0005;
const LIMIT_BYTES = 2.5 * 1024 ** 3;

/** A process's peak resident set so far (VmHWM), bytes; 0 when it is gone. */
function hwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

let work: string;
let server: ChildProcess;
let base: string;
const workerPeaks = new Map<number, number>();
let sampler: NodeJS.Timeout;
/** The server's peak: its own high-water mark plus each worker process's (an upper bound of their sum). */
const peakBytes = () => hwm(server.pid!) + [...workerPeaks.values()].reduce((a, b) => a + b, 0);

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'stagediff-huge-'));
  writeFileSync(join(work, 'index.html'), '<!doctype html><title>test</title>');
  server = spawn(process.execPath, [join(repoRoot, 'server/bin/stagediff.mjs'), 'serve'], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: join(work, 'data'),
      WEB_DIST: work,
      PORT: '0',
      STAGEDIFF_SEED_DEMO: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d;
      const m = /(?:listening|is running) at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(m[1]!);
    };
    server.stdout!.on('data', onData);
    server.stderr!.on('data', onData);
    server.once('exit', (code) => reject(new Error(`the server exited (${code}): ${out.slice(-800)}`)));
  });
  sampler = setInterval(() => {
    for (const c of childrenOf(server.pid!)) workerPeaks.set(c, Math.max(workerPeaks.get(c) ?? 0, hwm(c)));
  }, 100);
}, 120_000);

afterAll(async () => {
  clearInterval(sampler);
  if (server && server.exitCode === null) {
    const gone = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await gone;
  }
  rmSync(work, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: the test reads response shapes by path; a wrong path fails the assertion
async function call(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const r = await fetch(base + path, init);
  const text = await r.text();
  return { status: r.status, body: text.startsWith('{') ? JSON.parse(text) : text };
}

describe('8M samples over 1M distinct stacks through a real server on default settings', () => {
  it('uploads two runs, draws the flamegraph and the diff, under 2.5 GB', async () => {
    const runA = await manyStacksProfilePath({ seed: 42 });
    const runB = await manyStacksProfilePath({ seed: 43 });
    const made = await call('/api/comparisons', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'huge' }),
    });
    expect(made.status).toBe(201);
    const auth = { authorization: `Bearer ${made.body.editToken}` };
    const id = made.body.id as string;
    const stages: string[] = [];
    for (const [name, file] of [
      ['before', runA],
      ['after', runB],
    ] as const) {
      const st = await call(`/api/comparisons/${id}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name }),
      });
      expect(st.status).toBe(201);
      stages.push(st.body.id);
      const up = await call(`/api/comparisons/${id}/stages/${st.body.id}/artifacts?filename=${name}.pb.gz`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', ...auth },
        body: readFileSync(file),
      });
      expect(up.status, JSON.stringify(up.body).slice(0, 500)).toBe(200);
      expect(up.body.results[0].ok, JSON.stringify(up.body.results[0])).toBe(true);
    }
    const [before, after] = stages as [string, string];

    const fg = await call(`/api/comparisons/${id}/flamegraph?stage=${before}&minFraction=${MIN_FRACTION}`);
    expect(fg.status, JSON.stringify(fg.body).slice(0, 500)).toBe(200);
    expect(fg.body.sampleType).toBe('cpu');
    // Every sample is one or two ticks of 10 ms: 8M samples make between 80,000 and 160,000 s.
    expect(fg.body.total).toBeGreaterThan(8e6 * 1e7);
    expect(fg.body.total).toBeLessThan(16e6 * 1e7);
    expect(fg.body.tree.value).toBe(fg.body.total);
    // Trimmed at 0.05 % of the total: a few thousand frames drawn out of millions, the rest counted.
    expect(fg.body.trim.nodes).toBeGreaterThan(100);
    expect(fg.body.trim.prunedNodes).toBeGreaterThan(1_000_000);
    for (const c of fg.body.tree.children) expect(c.value).toBeGreaterThanOrEqual(MIN_FRACTION * fg.body.total);

    // Asked for every node (minFraction 0, the parameter's default): the default node cap keeps the
    // heaviest 50,000 of the millions and says which threshold that took.
    const all = await call(`/api/comparisons/${id}/flamegraph?stage=${before}`);
    expect(all.status, JSON.stringify(all.body).slice(0, 500)).toBe(200);
    expect(all.body.trim.nodeCap).toBe(50_000);
    expect(all.body.trim.nodes).toBeLessThanOrEqual(50_000);
    expect(all.body.trim.nodes).toBeGreaterThan(10_000);
    expect(all.body.trim.minFraction).toBeGreaterThan(0);
    expect(all.body.trim.prunedNodes).toBeGreaterThan(1_000_000);

    const fgAfter = await call(`/api/comparisons/${id}/flamegraph?stage=${after}&minFraction=${MIN_FRACTION}`);
    expect(fgAfter.status).toBe(200);

    const diff = await call(
      `/api/comparisons/${id}/diff?base=${before}&target=${after}&mode=absolute&minFraction=${MIN_FRACTION}`,
    );
    expect(diff.status, JSON.stringify(diff.body).slice(0, 500)).toBe(200);
    expect(diff.body.baseTotal).toBe(fg.body.total);
    expect(diff.body.targetTotal).toBe(fgAfter.body.total);
    expect(diff.body.tree.base).toBe(fg.body.total);
    expect(diff.body.tree.target).toBe(fgAfter.body.total);
    expect(diff.body.trim.prunedNodes).toBeGreaterThan(1_000_000);
    // The same program twice: the two runs' functions are the same ones, with other weights.
    expect(diff.body.top.length).toBeGreaterThan(0);
    expect(diff.body.top.every((r: { status: string }) => r.status === 'changed' || r.status === 'unchanged')).toBe(
      true,
    );

    for (const c of childrenOf(server.pid!)) workerPeaks.set(c, Math.max(workerPeaks.get(c) ?? 0, hwm(c)));
    const peak = peakBytes();
    console.log(
      `huge profile: server peak RSS ${(peak / 2 ** 20).toFixed(0)} MiB (main ${(hwm(server.pid!) / 2 ** 20).toFixed(0)} MiB, workers ${[...workerPeaks.values()].map((b) => (b / 2 ** 20).toFixed(0)).join(' + ')} MiB)`,
    );
    expect(peak).toBeLessThan(LIMIT_BYTES);
  }, 900_000);
});
