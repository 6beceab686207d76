/**
 * `stagediff capture` end to end: the demo service (fixtures/demo-service, built with Go) runs on
 * 127.0.0.1, the capture command runs against it with wrk and with the built-in generator, and the
 * stage lands in --out and on a real stagediff server over a real socket. Failures (pprof endpoint
 * unreachable, load command failing or missing) exit non-zero with one clear message and keep what
 * was captured.
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { ingest } from '../../src/ingest/detect.ts';
import type { CaptureRecord } from '../../src/model/capture.ts';
import type { Profile } from '../../src/model/profile.ts';
import { testApp } from '../helpers/app.ts';
import { fixturesDir, repoRoot } from '../helpers/paths.ts';

const GO = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
const haveGo = spawnSync(GO, ['version']).status === 0;
const haveWrk = spawnSync('sh', ['-c', 'command -v wrk']).status === 0;
const CLI = join(repoRoot, 'server/bin/stagediff.mjs');

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

/** Runs the CLI without blocking this process (the stagediff server under test lives here). */
function stagediff(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [CLI, ...args], { cwd: repoRoot, maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

async function profileOf(path: string): Promise<Profile> {
  const p = await ingest({ name: 'p.pb.gz', path });
  if (p.kind !== 'profile') throw new Error(`${path} is not a profile`);
  return p.profile;
}

function total(p: Profile, type: string): number {
  const i = p.sampleTypes.findIndex((t) => t.type === type);
  let n = 0;
  for (const v of p.values[i]!) n += v;
  return n;
}

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe.skipIf(!haveGo)('stagediff capture', () => {
  let work: string;
  let service: ChildProcess;
  let api: string;
  let pprof: string;
  let app: StagediffApp;
  let base: string;
  const target = () => `${api}/api/orders?n=20&currency=EUR`;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'stagediff-capture-test-'));
    const bin = join(work, 'demo-service');
    const b = spawnSync(GO, ['build', '-o', bin, '.'], { cwd: `${fixturesDir}demo-service`, encoding: 'utf8' });
    if (b.status !== 0) throw new Error(`go build failed: ${b.stderr}`);
    const [a, p, u] = [await freePort(), await freePort(), await freePort()];
    api = `http://127.0.0.1:${a}`;
    pprof = `http://127.0.0.1:${p}`;
    service = spawn(
      bin,
      ['-addr', `127.0.0.1:${a}`, '-pprof-addr', `127.0.0.1:${p}`, '-upstream-addr', `127.0.0.1:${u}`],
      { env: { ...process.env, GOMAXPROCS: '2' }, stdio: 'ignore' },
    );
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`${api}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    app = await testApp();
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  }, 240_000);

  afterAll(async () => {
    service?.kill('SIGTERM');
    await app?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it.skipIf(!haveWrk)(
    'with wrk: the load output byte for byte, CPU over the window, allocs as a delta, in --out and on the server',
    async () => {
      // Load before the capture, so the process's cumulative allocations dwarf one window's.
      spawnSync('wrk', ['-t1', '-c8', '-d8s', target()], { stdio: 'ignore' });
      const out = join(work, 'wrk-stage');
      const own = join(work, 'wrk-own.txt');
      const r = await stagediff([
        'capture',
        '--pprof',
        pprof,
        '--stage',
        'pooled',
        '--note',
        'shared transport',
        '--seconds',
        '3',
        '--out',
        out,
        '--server',
        base,
        '--title',
        'capture test',
        '--',
        'sh',
        '-c',
        `wrk -t1 -c8 -d5s --latency '${target()}' | tee ${own}`,
      ]);
      expect(r.stderr).toMatch(/run 1\/1: [\d,.]+ req\/s, p99 [\d.]+ ms, 0 errors, CPU/);
      expect(r.code).toBe(0);
      const cumulative = join(work, 'allocs-cumulative.pb.gz');
      const cumBytes = await (await fetch(`${pprof}/debug/pprof/allocs`)).arrayBuffer();
      writeFileSync(cumulative, Buffer.from(cumBytes));

      // The load-test artifact is exactly what wrk printed.
      expect(readFileSync(join(out, 'wrk.txt')).equals(readFileSync(own))).toBe(true);
      const rec = JSON.parse(readFileSync(join(out, 'capture.json'), 'utf8')) as CaptureRecord;
      expect(rec.error).toBeNull();
      expect(rec.load).toMatchObject({ kind: 'command', tool: 'wrk' });
      expect(rec.load.kind === 'command' && rec.load.version).toMatch(/^wrk /);
      const run = rec.runs[0]!;
      expect(run.files.map((f) => f.path).sort()).toEqual(
        ['allocs', 'block', 'cpu', 'goroutine', 'heap', 'mutex']
          .map((t) => `${t}.pb.gz`)
          .concat('wrk.txt')
          .sort(),
      );
      for (const f of run.files) expect(sha256(join(out, f.path))).toBe(f.sha256);
      expect(run.files.find((f) => f.profileType === 'allocs')!.span).toBe('delta');
      expect(run.files.find((f) => f.profileType === 'heap')!.span).toBe('snapshot');

      // The CPU profile covers the window, ± 1 s.
      const win = (Date.parse(run.window!.end) - Date.parse(run.window!.start)) / 1000;
      const cpu = await profileOf(join(out, 'cpu.pb.gz'));
      expect(Math.abs(cpu.durationNanos / 1e9 - win)).toBeLessThanOrEqual(1);
      expect(Math.abs(cpu.durationNanos / 1e9 - 3)).toBeLessThanOrEqual(1);
      // The window lies inside the load.
      expect(Date.parse(run.window!.start)).toBeGreaterThan(Date.parse(run.load.startedAt));
      expect(Date.parse(run.window!.end)).toBeLessThan(Date.parse(run.load.endedAt!));

      // allocs is a delta over the window: far below what the process allocated since it started.
      const delta = total(await profileOf(join(out, 'allocs.pb.gz')), 'alloc_space');
      const since = total(await profileOf(cumulative), 'alloc_space');
      expect(delta).toBeGreaterThan(0);
      expect(delta).toBeLessThan(since * 0.5);

      // The stage on the server: every file, the capture record, the figures wrk printed.
      const link = r.stdout.trim();
      expect(link).toMatch(new RegExp(`^${base}/c/[A-Za-z0-9_-]+$`));
      const id = link.slice(link.lastIndexOf('/') + 1);
      const c = await (await fetch(`${base}/api/comparisons/${id}`)).json();
      expect(c.stages.map((s: { name: string }) => s.name)).toEqual(['pooled']);
      expect(c.stages[0].note).toBe('shared transport');
      expect(c.stages[0].artifacts).toHaveLength(7);
      expect(c.stages[0].captures).toHaveLength(1);
      expect(c.stages[0].captures[0].runs[0].window).toEqual(run.window);
      const printed = Number(/Requests\/sec:\s+([\d.]+)/.exec(readFileSync(own, 'utf8'))![1]);
      const table = await (await fetch(`${base}/api/comparisons/${id}/stage-table`)).json();
      expect(table.rows[0].figures.rps.median).toBe(printed);
      expect(run.summary!.rps).toBe(printed);
    },
    60_000,
  );

  it('with the built-in generator and --runs 2: one autocannon JSON per run, both runs on the server', async () => {
    const out = join(work, 'builtin');
    const created = await fetch(`${base}/api/comparisons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'built-in' }),
    }).then((x) => x.json() as Promise<{ id: string; editToken: string }>);
    const r = await stagediff([
      'capture',
      '--pprof',
      pprof,
      '--stage',
      'generator',
      '--profiles',
      'cpu,allocs,heap',
      '--runs',
      '2',
      '--pause',
      '0',
      '--seconds',
      '2',
      '--url',
      target(),
      '--connections',
      '8',
      '--out',
      out,
      '--server',
      base,
      '--comparison',
      created.id,
      '--token',
      created.editToken,
    ]);
    expect(r.stderr).toMatch(/run 2\/2: [\d,.]+ req\/s/);
    expect(r.code).toBe(0);
    const rec = JSON.parse(readFileSync(join(out, 'capture.json'), 'utf8')) as CaptureRecord;
    expect(rec.load).toMatchObject({ kind: 'built-in', connections: 8, rate: null });
    expect(rec.load.kind === 'built-in' && rec.load.generator).toMatch(/^autocannon \d+\.\d+\.\d+$/);
    expect(rec.runs.map((x) => x.run)).toEqual([1, 2]);
    // The edit token is a secret: the record (kept on the server, readable by anyone with the link) hides it.
    expect(rec.command).toContain("--token '***'");
    expect(readFileSync(join(out, 'capture.json'), 'utf8')).not.toContain(created.editToken);
    for (const k of [1, 2]) {
      const dir = join(out, `run-${k}`);
      expect(readdirSync(dir).sort()).toEqual(['allocs.pb.gz', 'autocannon.json', 'cpu.pb.gz', 'heap.pb.gz']);
      // autocannon --json prints one line of JSON: the file is that line, and stagediff reads it.
      const text = readFileSync(join(dir, 'autocannon.json'), 'utf8');
      expect(text.endsWith('\n') && !text.slice(0, -1).includes('\n')).toBe(true);
      const parsed = await ingest({ name: 'x', path: join(dir, 'autocannon.json') });
      expect(parsed.format).toBe('autocannon');
      const run = rec.runs[k - 1]!;
      expect(run.summary!.requests).toBe(JSON.parse(text).requests.total);
      const win = (Date.parse(run.window!.end) - Date.parse(run.window!.start)) / 1000;
      const cpu = await profileOf(join(dir, 'cpu.pb.gz'));
      expect(Math.abs(cpu.durationNanos / 1e9 - win)).toBeLessThanOrEqual(1);
    }
    const c = await (await fetch(`${base}/api/comparisons/${created.id}`)).json();
    expect(c.stages[0].artifacts).toHaveLength(8);
    expect(c.stages[0].artifacts.map((a: { filename: string }) => a.filename)).toContain('run-2-autocannon.json');
    expect(c.stages[0].captures[0].runs).toHaveLength(2);
    expect(r.stdout.trim()).toBe(`${base}/c/${created.id}`);
  }, 60_000);

  it('with --trace and --metrics: an execution trace inside the window and the window’s runtime metrics, uploaded', async () => {
    const out = join(work, 'trace-metrics');
    const metricsUrl = `${pprof}/metrics`;
    const r = await stagediff([
      'capture',
      '--pprof',
      pprof,
      '--stage',
      'traced',
      '--profiles',
      'cpu',
      '--trace',
      '1',
      '--metrics',
      metricsUrl,
      '--seconds',
      '3',
      '--url',
      target(),
      '--connections',
      '8',
      '--out',
      out,
      '--server',
      base,
      '--title',
      'trace and metrics',
    ]);
    expect(r.stderr).toContain('a 1 s execution trace, runtime metrics every second over 3 s');
    expect(r.code).toBe(0);
    const rec = JSON.parse(readFileSync(join(out, 'capture.json'), 'utf8')) as CaptureRecord;
    expect([rec.traceSeconds, rec.metrics]).toEqual([1, metricsUrl]);
    const run = rec.runs[0]!;
    const trace = run.files.find((f) => f.role === 'trace')!;
    const metrics = run.files.find((f) => f.role === 'metrics')!;
    expect([trace.path, trace.url, metrics.path, metrics.url]).toEqual([
      'trace.out',
      `${pprof}/debug/pprof/trace?seconds=1`,
      'metrics.json',
      metricsUrl,
    ]);
    // the trace lies inside the window and spans its second
    const [w0, w1] = [Date.parse(run.window!.start), Date.parse(run.window!.end)];
    expect(Date.parse(trace.fetchedFrom!)).toBeGreaterThanOrEqual(w0);
    expect(Date.parse(trace.fetchedTo!)).toBeLessThanOrEqual(w1);
    const t = await ingest({ name: 'x', path: join(out, 'trace.out') });
    if (t.kind !== 'trace') throw new Error(t.kind);
    expect(Math.abs(t.trace.summary.spanNanos / 1e9 - 1)).toBeLessThan(0.3);
    expect(t.trace.summary.goroutines.created).toBeGreaterThan(0);
    // one scrape a second over exactly the window: at 0, 1, 2 and 3 s
    const m = await ingest({ name: 'x', path: join(out, 'metrics.json') });
    if (m.kind !== 'metrics') throw new Error(m.kind);
    expect(m.metrics.times.map(Math.round)).toEqual([0, 1, 2, 3]);
    expect(m.metrics.failedScrapes).toBe(0);
    const served = m.metrics.series.find((x) => x.name === 'demo_http_requests_total');
    expect(served?.type === 'counter' && served.windowDelta).toBeGreaterThan(0);
    expect(m.metrics.highlights.schedLatencyP99Seconds).toBeGreaterThan(0);
    // both are artifacts of the stage on the server
    const id = r.stdout.trim().slice(r.stdout.trim().lastIndexOf('/') + 1);
    const c = await (await fetch(`${base}/api/comparisons/${id}`)).json();
    const kinds = c.stages[0].artifacts
      .map((a: { kind: string; filename: string }) => `${a.kind} ${a.filename}`)
      .sort();
    expect(kinds).toEqual(['loadtest autocannon.json', 'metrics metrics.json', 'profile cpu.pb.gz', 'trace trace.out']);
  }, 60_000);

  it('--trace longer than 5 s needs --force-trace; a metrics endpoint that does not answer stops the run before the load', async () => {
    const long = await stagediff([
      'capture',
      '--pprof',
      pprof,
      '--stage',
      's',
      '--trace',
      '6',
      '--seconds',
      '8',
      '--url',
      target(),
    ]);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain(
      '--trace 6: a trace costs the service while it runs, so it is kept to 5 s; add --force-trace',
    );
    const noPprof = await stagediff([
      'capture',
      '--profiles',
      'none',
      '--stage',
      's',
      '--trace',
      '1',
      '--url',
      target(),
    ]);
    expect(noPprof.stderr).toContain('--trace needs --pprof URL');
    const out = join(work, 'metrics-dead');
    const dead = `http://127.0.0.1:${await freePort()}/metrics`;
    const r = await stagediff([
      'capture',
      '--profiles',
      'none',
      '--stage',
      's',
      '--metrics',
      dead,
      '--out',
      out,
      '--url',
      target(),
    ]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`metrics endpoint ${dead} is unreachable: connection refused; the load was not started`);
    expect(readdirSync(out)).toEqual(['capture.json']);
    const html = await stagediff([
      'capture',
      '--profiles',
      'none',
      '--stage',
      's',
      '--metrics',
      `${pprof}/debug/pprof/`,
      '--out',
      join(work, 'metrics-html'),
      '--url',
      target(),
    ]);
    expect(html.stderr).toMatch(/answered with something that is neither Prometheus text nor expvar JSON/);
  }, 60_000);

  it('an unreachable pprof endpoint: named, exit ≠ 0, the record kept, no load started', async () => {
    const out = join(work, 'unreachable');
    const dead = `http://127.0.0.1:${await freePort()}`;
    const r = await stagediff(['capture', '--pprof', dead, '--stage', 's', '--out', out, '--url', target()]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`pprof endpoint ${dead}/debug/pprof/ is unreachable: connection refused`);
    expect(r.stderr).toContain(`kept in ${out}: capture.json`);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const rec = JSON.parse(readFileSync(join(out, 'capture.json'), 'utf8')) as CaptureRecord;
    expect(rec.error).toMatch(/unreachable.*the load was not started/);
    expect(readdirSync(out)).toEqual(['capture.json']);
  }, 30_000);

  it.skipIf(!haveWrk)(
    'a load command that fails: its status and stderr named, exit ≠ 0, its output and the profiles kept',
    async () => {
      const out = join(work, 'failing');
      const r = await stagediff([
        'capture',
        '--pprof',
        pprof,
        '--stage',
        's',
        '--profiles',
        'cpu,heap',
        '--seconds',
        '1',
        '--out',
        out,
        '--server',
        base,
        '--',
        'sh',
        '-c',
        `wrk -t1 -c4 -d3s '${target()}'; echo 'upstream gave up' >&2; exit 3`,
      ]);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(/failed: run 1: wrk exited with status 3: upstream gave up/);
      expect(r.stderr).toContain('nothing was uploaded');
      expect(r.stdout).toBe('');
      expect(readdirSync(out).sort()).toEqual([
        'capture.json',
        'cpu.pb.gz',
        'heap.pb.gz',
        'load.stderr.txt',
        'wrk.txt',
      ]);
      expect(readFileSync(join(out, 'wrk.txt'), 'utf8')).toMatch(/Requests\/sec:/);
      const rec = JSON.parse(readFileSync(join(out, 'capture.json'), 'utf8')) as CaptureRecord;
      expect(rec.runs[0]!.load.exitCode).toBe(3);
      expect(rec.runs[0]!.files.find((f) => f.path === 'load.stderr.txt')!.role).toBe('raw');
    },
    30_000,
  );

  it.skipIf(!haveWrk)(
    'Ctrl-C stops the load and the profiles at once and keeps the record',
    async () => {
      const out = join(work, 'interrupted');
      const child = spawn(
        process.execPath,
        [CLI, 'capture', '--pprof', pprof, '--stage', 's', '--out', out, '--', 'wrk', '-t1', '-c4', '-d30s', target()],
        { cwd: repoRoot, stdio: ['ignore', 'ignore', 'pipe'] },
      );
      let stderr = '';
      const windowOpen = new Promise<void>((res) =>
        child.stderr!.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (stderr.includes('profile window open')) res();
        }),
      );
      const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
      await windowOpen;
      const t = Date.now();
      child.kill('SIGINT');
      expect(await exited).toBe(1);
      expect(Date.now() - t).toBeLessThan(5000);
      expect(stderr).toContain('failed: run 1: interrupted: the load was stopped');
      const rec = JSON.parse(readFileSync(join(out, 'capture.json'), 'utf8')) as CaptureRecord;
      expect(rec.runs[0]!.load.signal).toBe('SIGTERM');
      expect(rec.error).toMatch(/interrupted/);
    },
    30_000,
  );

  it('a load tool that is not installed is named', async () => {
    const out = join(work, 'missing');
    const r = await stagediff([
      'capture',
      '--pprof',
      pprof,
      '--stage',
      's',
      '--seconds',
      '1',
      '--out',
      out,
      '--',
      'no-such-load-tool',
      '-d',
      '3s',
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('load tool "no-such-load-tool" is not installed (not found on PATH)');
    expect(existsSync(join(out, 'capture.json'))).toBe(true);
  }, 30_000);
});
