// Section "bigprofile": a CPU profile of 8 M samples over 1 M distinct stacks (about 312 MiB
// inflated, 43 MB gzipped, under the upload limits), made by the seeded generator in
// scripts/testdata/many-stacks.mjs, through the server as a user meets it: upload → first
// flamegraph, first diff against a second run of the same program (another seed), the cached repeats, the same views cold after a restart (parsed again from the stored
// bytes), and the server's peak RSS (the kernel's high-water mark of the one process: main thread
// and analysis workers). Reference: `go tool pprof -top` on the same file, timed in the same run.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { manyStacksProfilePath } from '../../testdata/many-stacks.mjs';
import Database from 'better-sqlite3';
import { fmtMB, fmtMs, median, printTable, repoRoot, timeCommand } from '../lib.mjs';

const rss = (p) => `${fmtMB(p.total)} (${fmtMB(p.main)} + ${fmtMB(p.workers)})`;
const ratio3 = (r) => (Number.isFinite(r) ? r.toFixed(3) : null);

const GO = '/usr/local/go/bin/go';

function startServer(dataDir, webDist) {
  const child = spawn(process.execPath, [join(repoRoot, 'server/bin/stagediff.mjs'), 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      PORT: '0',
      DATA_DIR: dataDir,
      WEB_DIST: webDist,
      STAGEDIFF_SEED_DEMO: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (d) => {
      out += d;
      const m = /(?:listening|is running) at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve({ child, base: m[1] });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (c, signal) => {
      if (c || signal) console.error(`server exited (${c ?? signal}): ${out.slice(-1500)}`);
      reject(new Error(`server exited (${c}): ${out.slice(-800)}`));
    });
    setTimeout(() => reject(new Error(`server did not start: ${out.slice(0, 500)}`)), 60_000);
  });
}

/** A process's peak resident set so far (VmHWM), bytes; 0 when it is gone. */
function hwm(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** The server's analysis worker processes (its children), by pid. */
function children(pid) {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/**
 * The server's peak memory: the main process's high-water mark plus each worker process's (an
 * upper bound of their simultaneous peak), sampled while the views run since a worker's figures
 * vanish with it.
 */
function watchPeak(pid) {
  const workers = new Map();
  const sample = () => {
    for (const c of children(pid)) workers.set(c, Math.max(workers.get(c) ?? 0, hwm(c)));
  };
  const timer = setInterval(sample, 100);
  return {
    stop() {
      sample();
      clearInterval(timer);
      const w = [...workers.values()].reduce((a, b) => a + b, 0);
      return { main: hwm(pid), workers: w, total: hwm(pid) + w };
    },
  };
}

async function stop(child) {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

async function json(res) {
  if (!res.ok) throw new Error(`${res.url}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/** Wall time of one GET, ms (the body read whole), and the body's size. */
async function timedGet(url) {
  const t0 = performance.now();
  const r = await fetch(url).catch((e) => {
    throw new Error(`${url}: ${e.message} (${e.cause?.message ?? 'no cause'})`);
  });
  const body = await r.arrayBuffer();
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status} ${Buffer.from(body).toString().slice(0, 300)}`);
  return { ms: performance.now() - t0, bytes: body.byteLength };
}

export async function run({ reps, quick }) {
  const bigPath = await manyStacksProfilePath({ seed: 42 });
  const smallPath = await manyStacksProfilePath({ seed: 43 });
  const work = mkdtempSync(join(tmpdir(), 'stagediff-bench-big-'));
  const dataDir = join(work, 'data');
  const webDist = join(work, 'web');
  const results = { files: {}, server: {}, reference: {} };
  for (const [k, p] of [
    ['big', bigPath],
    ['small', smallPath],
  ])
    results.files[k] = { path: p.slice(repoRoot.length + 1), gzipBytes: statSync(p).size };
  try {
    mkdirSync(webDist, { recursive: true });
    writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>bench</title>');
    let srv = await startServer(dataDir, webDist);
    let peak = watchPeak(srv.child.pid);
    const c = await json(
      await fetch(`${srv.base}/api/comparisons`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'big profiles' }),
      }),
    );
    const auth = { authorization: `Bearer ${c.editToken}` };
    const stage = async (name) =>
      (
        await json(
          await fetch(`${srv.base}/api/comparisons/${c.id}/stages`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...auth },
            body: JSON.stringify({ name }),
          }),
        )
      ).id;
    const small = await stage('run B (seed 43)');
    const big = await stage('run A (seed 42)');
    const put = async (st, path, name) => {
      const t0 = performance.now();
      const r = await json(
        await fetch(`${srv.base}/api/comparisons/${c.id}/stages/${st}/artifacts?filename=${name}`, {
          method: 'POST',
          headers: { 'content-type': 'application/octet-stream', ...auth },
          body: readFileSync(path),
        }),
      );
      if (!r.results[0].ok) throw new Error(`upload ${name}: ${JSON.stringify(r.results[0])}`);
      return performance.now() - t0;
    };
    results.server.uploadSmallMs = await put(small, smallPath, 'small.pb.gz');
    results.server.uploadBigMs = await put(big, bigPath, 'big.pb.gz');
    const flamePath = (f) => `/api/comparisons/${c.id}/flamegraph?stage=${big}&minFraction=${f}`;
    const diffPath = (f) =>
      `/api/comparisons/${c.id}/diff?base=${small}&target=${big}&mode=absolute&minFraction=${f}&limit=200`;
    const flame = srv.base + flamePath(0.0005);
    const diff = srv.base + diffPath(0.0005);
    const fg = await timedGet(flame);
    results.server.firstFlamegraphMs = fg.ms;
    results.server.flamegraphBytes = fg.bytes;
    const df = await timedGet(diff);
    results.server.firstDiffMs = df.ms;
    results.server.diffBytes = df.bytes;
    const n = quick ? 3 : reps;
    const cachedF = [];
    const cachedD = [];
    for (let i = 0; i < n; i++) {
      cachedF.push((await timedGet(flame)).ms);
      cachedD.push((await timedGet(diff)).ms);
    }
    results.server.cachedFlamegraphMs = median(cachedF);
    results.server.cachedDiffMs = median(cachedD);
    results.server.peakRssAfterUploadAndViews = peak.stop();
    await stop(srv.child);

    // Cold: a restarted server has no model in memory and no memoised result; other views of the
    // same files (a different minFraction) are computed from the stored bytes.
    srv = await startServer(dataDir, webDist);
    peak = watchPeak(srv.child.pid);
    results.server.coldFlamegraphMs = (await timedGet(srv.base + flamePath(0.001))).ms;
    results.server.coldDiffMs = (await timedGet(srv.base + diffPath(0.001))).ms;
    results.server.peakRssCold = peak.stop();
    await stop(srv.child);

    // Re-derived: the store's cache emptied (as after an eviction or a model-version bump), so the
    // views parse the raw bytes again — the worst case a view can meet.
    const db = new Database(join(dataDir, 'stagediff.db'));
    db.prepare('DELETE FROM cache').run();
    db.close();
    srv = await startServer(dataDir, webDist);
    peak = watchPeak(srv.child.pid);
    results.server.reparseFlamegraphMs = (await timedGet(srv.base + flamePath(0.002))).ms;
    results.server.reparseDiffMs = (await timedGet(srv.base + diffPath(0.002))).ms;
    results.server.peakRssReparse = peak.stop();
    await stop(srv.child);

    const goTop = await timeCommand(GO, ['tool', 'pprof', '-top', '-nodecount=20', bigPath]);
    results.reference.goPprofTopMs = goTop.ms;
    results.reference.goPprofPeakRss = goTop.peakRss;
    results.ratios = {
      firstFlamegraphVsGoTop: results.server.firstFlamegraphMs / goTop.ms,
      coldFlamegraphVsGoTop: results.server.coldFlamegraphMs / goTop.ms,
      uploadPlusFirstFlamegraphVsGoTop: (results.server.uploadBigMs + results.server.firstFlamegraphMs) / goTop.ms,
      reparseFlamegraphVsGoTop: results.server.reparseFlamegraphMs / goTop.ms,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const s = results.server;
  printTable(
    ['step', 'time', 'target'],
    [
      ['upload run B, 8M samples (parse on a worker)', fmtMs(s.uploadSmallMs), ''],
      ['upload run A, 8M samples (parse on a worker)', fmtMs(s.uploadBigMs), ''],
      ['first flamegraph (after upload)', fmtMs(s.firstFlamegraphMs), '≤ 8 s'],
      ['first diff B → A', fmtMs(s.firstDiffMs), '≤ 12 s'],
      ['cached flamegraph (median)', fmtMs(s.cachedFlamegraphMs), '≤ 50 ms'],
      ['cached diff (median)', fmtMs(s.cachedDiffMs), '≤ 50 ms'],
      ['restarted server: flamegraph (compact form from the store)', fmtMs(s.coldFlamegraphMs), ''],
      ['restarted server: diff (compact forms)', fmtMs(s.coldDiffMs), ''],
      ['emptied cache: flamegraph (parse the raw bytes)', fmtMs(s.reparseFlamegraphMs), ''],
      ['emptied cache: diff (parse run B too)', fmtMs(s.reparseDiffMs), ''],
      ['server peak RSS, main + workers (upload + views)', rss(s.peakRssAfterUploadAndViews), '≤ 2.5 GB'],
      ['server peak RSS, main + workers (restarted)', rss(s.peakRssCold), '≤ 2.5 GB'],
      ['server peak RSS, main + workers (re-parse)', rss(s.peakRssReparse), '≤ 2.5 GB'],
      ['go tool pprof -top, same file', fmtMs(results.reference.goPprofTopMs), ''],
      ['go tool pprof -top peak RSS', fmtMB(results.reference.goPprofPeakRss), ''],
      ['upload + first flamegraph / go tool pprof -top', ratio3(results.ratios.uploadPlusFirstFlamegraphVsGoTop), ''],
      ['first flamegraph / go tool pprof -top', ratio3(results.ratios.firstFlamegraphVsGoTop), ''],
      ['restarted flamegraph / go tool pprof -top', ratio3(results.ratios.coldFlamegraphVsGoTop), ''],
      ['re-parsing flamegraph / go tool pprof -top', ratio3(results.ratios.reparseFlamegraphVsGoTop), ''],
    ],
  );
  return results;
}
