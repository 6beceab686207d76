// Section "server" (issue 4): cached analysis endpoints under 64 connections, against a static
// file of the same size served by the same process, and the upload throughput of a 64 MB file.
// The server runs as `npm start` runs it (its own process, SQLite in a scratch directory); the load
// comes from wrk on loopback, whose own report is read with stagediff's wrk parser.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { register } from 'tsx/esm/api';
import { ensureBuild, fmtMs, json, median, printTable, repoRoot, startServer, stop } from '../lib.mjs';

const SAMPLES = join(repoRoot, 'fixtures', 'reference');
const WRK_SECONDS = 6;

async function setUp(base) {
  const c = await json(
    await fetch(`${base}/api/comparisons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'bench' }),
    }),
  );
  const auth = { authorization: `Bearer ${c.editToken}` };
  const stages = [];
  for (const [name, files] of [
    ['before', ['pprof/go_httpserver_before_cpu.pb.gz', 'loadtests/wrk/baseline-latency.txt']],
    ['after', ['pprof/go_httpserver_after_cpu.pb.gz', 'loadtests/wrk/async-log-latency.txt']],
  ]) {
    const st = await json(
      await fetch(`${base}/api/comparisons/${c.id}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name }),
      }),
    );
    const form = new FormData();
    for (const f of files) form.append('file', new Blob([readFileSync(join(SAMPLES, f))]), f.split('/').pop());
    await json(
      await fetch(`${base}/api/comparisons/${c.id}/stages/${st.id}/artifacts`, {
        method: 'POST',
        headers: auth,
        body: form,
      }),
    );
    stages.push(st.id);
  }
  return { id: c.id, auth, stages };
}

/** Runs wrk against one URL and reads its report with stagediff's own wrk importer. */
async function wrk(url) {
  const r = spawnSync('wrk', ['-t2', '-c64', `-d${WRK_SECONDS}s`, '--latency', url], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  register(); // the parsers are TypeScript
  const { ingest } = await import(join(repoRoot, 'server/src/ingest/detect.ts'));
  const parsed = await ingest({ name: 'wrk.txt', bytes: Buffer.from(r.stdout) });
  const s = parsed.runs[0].summary;
  return { rps: s.rps, p50: s.latencyMs.p50, p99: s.latencyMs.p99, errors: s.errors, requests: s.requests };
}

export async function run({ reps, quick }) {
  if (spawnSync('wrk', ['-v']).error) {
    console.log('server: wrk is not installed (apt-get install wrk); section skipped');
    return { status: 'skipped', reason: 'wrk missing' };
  }
  ensureBuild();
  const work = mkdtempSync(join(tmpdir(), 'stagediff-bench-server-'));
  const dataDir = join(work, 'data');
  const webDist = join(work, 'web');
  spawnSync('mkdir', ['-p', webDist]);
  writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>bench</title>');
  try {
    // Pass 1: build the story and learn the sizes of the cached responses.
    let srv = await startServer(dataDir, webDist);
    const { id, stages } = await setUp(srv.base);
    const endpoints = {
      flamegraph: `/api/comparisons/${id}/flamegraph?stage=${stages[0]}&sampleType=cpu&minFraction=0.0005`,
      diff: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&sampleType=cpu&minFraction=0.0005&limit=200`,
    };
    const sizes = {};
    for (const [k, path] of Object.entries(endpoints))
      sizes[k] = (await (await fetch(srv.base + path)).arrayBuffer()).byteLength;
    await stop(srv.child);
    // Static files of the same sizes, served by the same process (registered at start-up).
    for (const [k, n] of Object.entries(sizes)) writeFileSync(join(webDist, `static-${k}.json`), Buffer.alloc(n, 32));
    srv = await startServer(dataDir, webDist);
    const rows = [];
    const results = {};
    const rounds = quick ? 1 : Math.max(1, Math.min(3, Math.floor(reps / 2)));
    for (const [k, path] of Object.entries(endpoints)) {
      await fetch(srv.base + path); // warm: the result is in the shared cache from pass 1
      const api = [];
      const stat = [];
      for (let i = 0; i < rounds; i++) {
        api.push(await wrk(srv.base + path));
        stat.push(await wrk(`${srv.base}/static-${k}.json`));
      }
      const m = (xs, f) => median(xs.map(f));
      const r = {
        bytes: sizes[k],
        api: {
          rps: m(api, (x) => x.rps),
          p50: m(api, (x) => x.p50),
          p99: m(api, (x) => x.p99),
          errors: api.reduce((a, x) => a + (x.errors ?? 0), 0),
        },
        static: { rps: m(stat, (x) => x.rps), p50: m(stat, (x) => x.p50), p99: m(stat, (x) => x.p99) },
      };
      r.throughputRatio = r.api.rps / r.static.rps;
      results[k] = r;
      rows.push([
        `${k} (cached, ${(sizes[k] / 1024).toFixed(0)} KiB)`,
        r.api.rps.toFixed(0),
        fmtMs(r.api.p50),
        `${r.api.p99.toFixed(1)} ms`,
        r.static.rps.toFixed(0),
        `${r.static.p99.toFixed(1)} ms`,
        r.throughputRatio.toFixed(2),
        r.api.p99 < 20 && r.throughputRatio >= 0.5 ? 'yes' : 'NO',
      ]);
    }
    printTable(
      ['endpoint (wrk -t2 -c64)', 'req/s', 'p50', 'p99', 'static req/s', 'static p99', 'ratio', 'target met'],
      rows,
    );
    console.log("targets: p99 < 20 ms and ≥ 0.5 × the static file's throughput");

    // Upload: a 64 MiB file, streamed into the store (hashed, fsync'd) and then parsed.
    const big = join(work, 'upload.bin');
    const fd = openSync(big, 'w');
    for (let i = 0; i < 64; i++) writeSync(fd, randomBytes(1 << 20));
    closeSync(fd);
    const c = await json(
      await fetch(`${srv.base}/api/comparisons`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'upload' }),
      }),
    );
    const auth = { authorization: `Bearer ${c.editToken}` };
    const st = await json(
      await fetch(`${srv.base}/api/comparisons/${c.id}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name: 's' }),
      }),
    );
    const body = readFileSync(big);
    const times = [];
    for (let i = 0; i < (quick ? 2 : 4); i++) {
      const t0 = performance.now();
      const res = await fetch(`${srv.base}/api/comparisons/${c.id}/stages/${st.id}/artifacts?filename=random.bin`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        body,
      });
      await res.arrayBuffer();
      times.push(performance.now() - t0);
    }
    const uploadMBps = 64 / (median(times) / 1000);
    console.log(
      `upload of a 64 MiB file (raw body; stored, hashed and fsync'd, then refused as an unknown format): median ${fmtMs(median(times))} → ${uploadMBps.toFixed(0)} MiB/s (target ≥ 100 MB/s)`,
    );
    await stop(srv.child);
    return {
      endpoints: results,
      upload: {
        bytes: body.length,
        sha256: createHash('sha256').update(body).digest('hex'),
        msMedian: median(times),
        mibPerSecond: uploadMBps,
        runs: times,
      },
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
