// Shared helpers of `npm run bench`: timing child processes, a warm worker client, robust
// statistics, small text tables and the machine description written next to every result.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const outDir = join(repoRoot, 'test-artifacts', 'bench');
export const TIME_BIN = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;

export function median(xs) {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export const min = (xs) => (xs.length ? Math.min(...xs) : null);

/**
 * Runs a command to completion and returns its wall time in ms (spawn to exit, as a user waits for
 * it) and, where GNU time is installed, its peak RSS as the kernel accounts it at wait() (which
 * includes the processes it waited for, e.g. the tool `go tool` starts).
 */
export function timeCommand(cmd, args, { cwd = repoRoot, env = process.env } = {}) {
  return new Promise((resolve, reject) => {
    const rssFile = TIME_BIN
      ? join(os.tmpdir(), `stagediff-bench-time-${process.pid}-${Math.random().toString(36).slice(2)}`)
      : null;
    const argv = TIME_BIN ? ['-f', '%M', '-o', rssFile, cmd, ...args] : args;
    const t0 = performance.now();
    const child = spawn(TIME_BIN ?? cmd, argv, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      let peakRss = null;
      if (rssFile && existsSync(rssFile)) {
        const kb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop());
        if (Number.isFinite(kb)) peakRss = kb * 1024;
        spawnSync('rm', ['-f', rssFile]);
      }
      if (code !== 0) reject(new Error(`${cmd} ${args.join(' ')} exited with ${code}: ${stderr.slice(0, 400)}`));
      else resolve({ ms, peakRss });
    });
  });
}

/** Runs a command that prints one JSON line at its end; returns that object. */
export function runJson(cmd, args, { cwd = repoRoot, env = process.env } = {}) {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}: ${(r.stderr || '').slice(0, 600)}`);
  const last = r.stdout.trim().split('\n').pop();
  return JSON.parse(last);
}

/** A long-lived child answering one JSON line per JSON request line (see pprof-worker.ts serve). */
export function startWorker(cmd, args, { cwd = repoRoot } = {}) {
  const child = spawn(cmd, args, { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
  const rl = createInterface({ input: child.stdout });
  const waiting = [];
  rl.on('line', (line) => waiting.shift()?.resolve(JSON.parse(line)));
  child.on('exit', (code) => {
    for (const w of waiting.splice(0)) w.reject(new Error(`worker exited with ${code}`));
  });
  return {
    request(obj) {
      return new Promise((resolve, reject) => {
        waiting.push({ resolve, reject });
        child.stdin.write(`${JSON.stringify(obj)}\n`);
      });
    },
    async close() {
      child.stdin.end();
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
    },
  };
}

export function machine() {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    logicalCpus: cpus.length,
    memoryBytes: os.totalmem(),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    go: go.status === 0 ? go.stdout.trim() : null,
    loadAverage: os.loadavg(),
  };
}

export function writeResult(section, data) {
  mkdirSync(outDir, { recursive: true });
  const path = join(outDir, `${section}.json`);
  writeFileSync(path, `${JSON.stringify(data, null, 2)}\n`);
  return path;
}

/** Prints rows as an aligned text table (first column left-aligned, the others right-aligned). */
export function printTable(headers, rows) {
  const cells = [headers, ...rows].map((r) => r.map((c) => (c === null || c === undefined ? '–' : String(c))));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  console.log(line(cells[0]));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of cells.slice(1)) console.log(line(r));
}

export const fmtMs = (ms) =>
  ms === null
    ? null
    : ms >= 10_000
      ? `${(ms / 1000).toFixed(1)} s`
      : ms >= 1000
        ? `${(ms / 1000).toFixed(2)} s`
        : `${ms.toFixed(0)} ms`;
export const fmtMB = (b) => (b === null ? null : `${(b / 2 ** 20).toFixed(1)} MB`);
export const fmtRatio = (r) => (r === null || !Number.isFinite(r) ? null : r.toFixed(2));
export const fmtRate = (r) =>
  r === null ? null : r >= 1e6 ? `${(r / 1e6).toFixed(2)} M/s` : `${(r / 1e3).toFixed(0)} k/s`;

/** Node with tsx's loader, for the TypeScript workers. */
export const nodeTsx = (script, args = []) => [process.execPath, ['--import', 'tsx', join(repoRoot, script), ...args]];

/** Path of a generated test input (scripts/testdata), made on first use and cached. */
export function generatedInput(name) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/testdata/make.ts', name], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`could not generate ${name}: ${r.stderr}`);
  return r.stdout.trim();
}

let built = false;
/** Builds server/dist and web/dist once per bench run (scripts/build.mjs), for the sections that run them. */
export function ensureBuild() {
  if (built) return;
  const r = spawnSync(process.execPath, [join(repoRoot, 'scripts/build.mjs')], { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0) throw new Error('scripts/build.mjs failed');
  built = true;
}

/**
 * Starts the compiled server (`stagediff serve`) on a free port with its data in `dataDir` and no demo;
 * resolves with the process and its base URL once it says where it listens.
 */
export function startServer(dataDir, webDist, env = {}) {
  const child = spawn(process.execPath, [join(repoRoot, 'server/bin/stagediff.mjs'), 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      PORT: '0',
      DATA_DIR: dataDir,
      WEB_DIST: webDist,
      STAGEDIFF_SEED_DEMO: '0',
      LOG_LEVEL: 'info',
      STAGEDIFF_COMPILED: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own session, as a service manager starts it (see server/test/helpers/server-process.ts).
    detached: true,
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d;
      const m = /(?:listening|is running) at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        // Keep draining the logs: a full pipe would stall the server.
        child.stdout.removeListener('data', onData);
        child.stderr.removeListener('data', onData);
        child.stdout.resume();
        child.stderr.resume();
        resolve({ child, base: m[1] });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (c) => reject(new Error(`server exited (${c}): ${out.slice(0, 500)}`)));
    setTimeout(() => reject(new Error(`server did not start: ${out.slice(0, 500)}`)), 60_000);
  });
}

/** Stops a server started by startServer. */
export async function stop(child) {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

/** A response's JSON, or an error naming its URL and status. */
export async function json(res) {
  if (!res.ok) throw new Error(`${res.url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}
