// Section "cached": cached views as browsers ask for them (`Accept-Encoding: br, gzip`) against a
// static file from the same server, at 16 and 64 connections. Targets: a cached view's throughput
// ≥ 0.5 × the static file's, its p99 ≤ 2 × the static file's.
//
// The server runs as `npm start` runs it (compiled build, its own process, SQLite in a scratch
// directory). Each view is computed once; then its exact bytes — the plain answer and the brotli and
// gzip the cache keeps — are written as a static file with its .br and .gz beside it, as the web
// build precompresses its assets, and the server is restarted so @fastify/static serves them. Both
// sides then send the same bytes for the same request. wrk (-t2, 10 s, --latency) measures, after 3 s of
// warm-up of each; view and static take turns, the order rotating each repetition; ratios are medians
// of per-repetition ratios.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, median, printTable, repoRoot, startServer, stop } from '../lib.mjs';

const SAMPLES = join(repoRoot, 'fixtures', 'reference');
const SECONDS = 10;
const BROWSER = 'br, gzip';

async function setUp(base) {
  const c = await json(
    await fetch(`${base}/api/comparisons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'bench cached' }),
    }),
  );
  const auth = { authorization: `Bearer ${c.editToken}` };
  const stages = [];
  for (const [name, file] of [
    ['before', 'pprof/go_httpserver_before_cpu.pb.gz'],
    ['after', 'pprof/go_httpserver_after_cpu.pb.gz'],
  ]) {
    const st = await json(
      await fetch(`${base}/api/comparisons/${c.id}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name }),
      }),
    );
    const form = new FormData();
    form.append('file', new Blob([readFileSync(join(SAMPLES, file))]), file.split('/').pop());
    await json(
      await fetch(`${base}/api/comparisons/${c.id}/stages/${st.id}/artifacts`, {
        method: 'POST',
        headers: auth,
        body: form,
      }),
    );
    stages.push(st.id);
  }
  return { id: c.id, stages };
}

/** The bytes a client gets for `path` with the given Accept-Encoding, and their Content-Encoding. */
function fetchRaw(base, path, acceptEncoding) {
  const r = spawnSync('curl', ['-s', '-D', '-', '-H', `Accept-Encoding: ${acceptEncoding}`, base + path], {
    maxBuffer: 256 * 1024 * 1024,
  });
  if (r.status !== 0) throw new Error(`curl ${path} failed`);
  const out = r.stdout;
  const end = out.indexOf('\r\n\r\n');
  const head = out.subarray(0, end).toString('latin1');
  if (!/^HTTP\/1\.1 200/.test(head)) throw new Error(`${path}: ${head.split('\r\n')[0]}`);
  return { body: out.subarray(end + 4), encoding: /content-encoding: *(\S+)/i.exec(head)?.[1] ?? 'identity' };
}

/** One wrk run with browser headers: req/s, p50 and p99 (ms) from its own report. */
function wrk(url, connections, seconds = SECONDS) {
  const r = spawnSync(
    'wrk',
    ['-t2', `-c${connections}`, `-d${seconds}s`, '--latency', '-H', `Accept-Encoding: ${BROWSER}`, url],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`wrk failed: ${r.stderr}`);
  const ms = (v, unit) => Number(v) * { us: 0.001, ms: 1, s: 1000 }[unit];
  const pct = (p) => {
    const m = new RegExp(`^\\s*${p}%\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(r.stdout);
    return m ? ms(m[1], m[2]) : null;
  };
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(r.stdout)?.[1]);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout)?.[1] ?? 0);
  return { rps, p50: pct(50), p99: pct(99), non2xx };
}

export async function run({ reps, quick }) {
  if (spawnSync('wrk', ['-v']).error) {
    console.log('cached: wrk is not installed (apt-get install wrk); section skipped');
    return { status: 'skipped', reason: 'wrk missing' };
  }
  // The compiled server only: this section serves no web client.
  const build = spawnSync(process.execPath, [join(repoRoot, 'scripts/build.mjs'), '--server-only'], {
    cwd: repoRoot,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error('scripts/build.mjs --server-only failed');
  const work = mkdtempSync(join(tmpdir(), 'stagediff-bench-cached-'));
  const dataDir = join(work, 'data');
  const webDist = join(work, 'web');
  mkdirSync(webDist, { recursive: true });
  writeFileSync(join(webDist, 'index.html'), '<!doctype html><title>bench</title>');
  try {
    // Pass 1: compute each view once and keep its bytes in every encoding the cache holds.
    let srv = await startServer(dataDir, webDist);
    const { id, stages } = await setUp(srv.base);
    const views = {
      flamegraph: { path: `/api/comparisons/${id}/flamegraph?stage=${stages[0]}&minFraction=0.0005`, ext: 'json' },
      diff: {
        path: `/api/comparisons/${id}/diff?base=${stages[0]}&target=${stages[1]}&minFraction=0.0005&limit=200`,
        ext: 'json',
      },
      'diff.svg': { path: `/api/comparisons/${id}/diff.svg?base=${stages[0]}&target=${stages[1]}`, ext: 'svg' },
    };
    const sizes = {};
    for (const [name, v] of Object.entries(views)) {
      const plain = fetchRaw(srv.base, v.path, 'identity');
      const br = fetchRaw(srv.base, v.path, BROWSER);
      const gz = fetchRaw(srv.base, v.path, 'gzip');
      if (br.encoding !== 'br' || gz.encoding !== 'gzip') throw new Error(`${name}: not served compressed as stored`);
      const file = join(webDist, `static-${name.replace('.', '-')}.${v.ext}`);
      writeFileSync(file, plain.body);
      writeFileSync(`${file}.br`, br.body);
      writeFileSync(`${file}.gz`, gz.body);
      v.static = `/${file.slice(webDist.length + 1)}`;
      sizes[name] = { plain: plain.body.length, br: br.body.length, gzip: gz.body.length };
    }
    await stop(srv.child);
    // Pass 2: the same server on the same data, with the static files registered at start.
    srv = await startServer(dataDir, webDist);
    for (const v of Object.values(views)) {
      const check = fetchRaw(srv.base, v.static, BROWSER);
      if (check.encoding !== 'br') throw new Error(`${v.static}: the static file is not served precompressed`);
      fetchRaw(srv.base, v.path, BROWSER); // into this process's memo, as a busy server has it
    }
    const rounds = quick ? 1 : Math.max(3, Math.min(reps, 5));
    const results = {};
    const rows = [];
    for (const connections of [16, 64]) {
      for (const [name, v] of Object.entries(views)) {
        // Warm-up, not measured: both paths compiled by the JIT and their connections open.
        wrk(srv.base + v.path, connections, 3);
        wrk(srv.base + v.static, connections, 3);
        const pairs = [];
        for (let i = 0; i < rounds; i++) {
          const order = i % 2 === 0 ? ['view', 'static'] : ['static', 'view'];
          const got = {};
          for (const side of order) got[side] = wrk(srv.base + (side === 'view' ? v.path : v.static), connections);
          pairs.push(got);
        }
        const m = (f) => median(pairs.map(f));
        const r = {
          bytesBr: sizes[name].br,
          view: { rps: m((p) => p.view.rps), p50: m((p) => p.view.p50), p99: m((p) => p.view.p99) },
          static: { rps: m((p) => p.static.rps), p50: m((p) => p.static.p50), p99: m((p) => p.static.p99) },
          throughputRatio: m((p) => p.view.rps / p.static.rps),
          p99Ratio: m((p) => p.view.p99 / p.static.p99),
          errors: pairs.reduce((n, p) => n + p.view.non2xx + p.static.non2xx, 0),
          runs: pairs,
        };
        results[`${name}@${connections}`] = r;
        const met = r.throughputRatio >= 0.5 && r.p99Ratio <= 2 && r.errors === 0;
        rows.push([
          `${name} (${(sizes[name].br / 1024).toFixed(0)} KiB br) -c${connections}`,
          r.view.rps.toFixed(0),
          `${r.view.p99.toFixed(1)} ms`,
          r.static.rps.toFixed(0),
          `${r.static.p99.toFixed(1)} ms`,
          r.throughputRatio.toFixed(2),
          r.p99Ratio.toFixed(2),
          met ? 'yes' : 'NO',
        ]);
      }
    }
    printTable(
      [
        'cached view (Accept-Encoding: br, gzip)',
        'req/s',
        'p99',
        'static req/s',
        'static p99',
        'thr. ratio',
        'p99 ratio',
        'target met',
      ],
      rows,
    );
    console.log(`targets: throughput ≥ 0.5 × and p99 ≤ 2 × the static file's; medians of ${rounds} alternating pairs`);
    await stop(srv.child);
    return { sizes, results, rounds };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
