// A soak of mixed traffic against one stagediff server, watching the main process's memory.
//
//   node scripts/soak.mjs [--minutes 15] [--clients 8] [--server URL --pid PID]
//
// Without --server it starts its own (server/bin/stagediff.mjs serve on 127.0.0.1, a fresh DATA_DIR, the
// demo seeded) and stops it at the end. 8 clients loop over a mix of reads (the comparison, the stage
// table, what changed, flamegraphs, diffs, hot paths, SVG images, raw files, /healthz) and writes (a new
// comparison with a stage and an upload of a real file, a capture record). The main process's RSS is
// sampled every 10 s. At the end every uploaded file is read back and checked by sha256. Prints:
// requests, errors (any answer but 2xx/304, or a refused connection), files kept, the RSS samples, and
// whether RSS was flat over the last 5 minutes (growth ≤ 5 % from the window's first sample to its
// last; a shorter run judges its second half). Exit 1 on an error, a lost file or growth.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '15' },
    clients: { type: 'string', default: '8' },
    server: { type: 'string' },
    pid: { type: 'string' },
  },
});
const durationMs = Number(args.minutes) * 60_000;
const clients = Number(args.clients);
if (!(durationMs > 0) || !(clients > 0)) throw new Error('--minutes and --clients must be positive numbers');

const DEMO = join(REPO, 'fixtures/demo');
const STAGES = ['baseline', 'fast-json', 'pooled', 'async-log'];
const UPLOADS = STAGES.flatMap((s) => ['wrk.txt', 'cpu.pb.gz', 'allocs.pb.gz'].map((f) => join(DEMO, s, 'run-1', f)));
const RECORD = JSON.parse(readFileSync(join(DEMO, 'baseline/run-1/capture.json'), 'utf8'));

function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });
}

async function startServer() {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-soak-'));
  const child = spawn(process.execPath, [join(REPO, 'server/bin/stagediff.mjs'), 'serve'], {
    cwd: REPO,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      STAGEDIFF_SEED_DEMO: '1',
      WEB_DIST: '/nonexistent',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => {
    log = (log + d).slice(-10_000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited:\n${log}`);
    const demo = await fetch(`${url}/api/comparisons/demo`).catch(() => null);
    if (demo?.status === 200) break;
    if (Date.now() > deadline) throw new Error(`server not up within 120 s:\n${log}`);
    await new Promise((r) => setTimeout(r, 500));
  }
  return {
    url,
    pid: child.pid,
    stop: async () => {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null) child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

const own = args.server ? null : await startServer();
const base = (args.server ?? own.url).replace(/\/+$/, '');
const pid = Number(args.pid ?? own?.pid);
const counts = { requests: 0, errors: 0, byStatus: new Map() };
const errors = [];
/** Every file uploaded: comparison, artifact id and the sha256 of the bytes sent. */
const kept = [];

async function call(method, path, body, headers = {}) {
  counts.requests++;
  try {
    const r = await fetch(`${base}${path}`, {
      method,
      headers,
      body,
      signal: AbortSignal.timeout(120_000),
    });
    const bytes = Buffer.from(await r.arrayBuffer());
    counts.byStatus.set(r.status, (counts.byStatus.get(r.status) ?? 0) + 1);
    // 429 is the fair share working as meant (a client past its share waits), not a failure.
    if (!(r.ok || r.status === 304 || r.status === 429)) {
      counts.errors++;
      if (errors.length < 20) errors.push(`${method} ${path}: ${r.status} ${bytes.toString('utf8').slice(0, 200)}`);
    }
    return { status: r.status, bytes };
  } catch (e) {
    counts.errors++;
    if (errors.length < 20) errors.push(`${method} ${path}: ${e.message}`);
    return { status: 0, bytes: Buffer.alloc(0) };
  }
}

const json = (r) => (r.status >= 200 && r.status < 300 ? JSON.parse(r.bytes.toString('utf8')) : null);

async function newStory(client, n) {
  const created = json(
    await call('POST', '/api/comparisons', JSON.stringify({ title: `soak ${client}.${n}` }), {
      'content-type': 'application/json',
    }),
  );
  if (!created) return null;
  const auth = { authorization: `Bearer ${created.editToken}`, 'content-type': 'application/json' };
  const stage = json(
    await call('POST', `/api/comparisons/${created.id}/stages`, JSON.stringify({ name: `stage ${n}` }), auth),
  );
  if (!stage) return null;
  const file = UPLOADS[(client + n) % UPLOADS.length];
  const bytes = readFileSync(file);
  const form = new FormData();
  form.append('file', new Blob([bytes]), basename(file));
  const up = json(
    await call('POST', `/api/comparisons/${created.id}/stages/${stage.id}/artifacts`, form, {
      authorization: auth.authorization,
    }),
  );
  for (const res of up?.results ?? [])
    if (res.ok)
      kept.push({
        id: created.id,
        artifact: res.artifact.id,
        sha256: createHash('sha256').update(bytes).digest('hex'),
      });
  await call('POST', `/api/comparisons/${created.id}/stages/${stage.id}/captures`, JSON.stringify(RECORD), auth);
  return created.id;
}

const demo = json(await call('GET', '/api/comparisons/demo'));
if (!demo) throw new Error('the demo comparison is not there');
const ids = demo.stages.map((s) => s.id);
const demoFiles = demo.stages.flatMap((s) => s.artifacts.map((a) => a.id));
const started = Date.now();
const until = started + durationMs;

async function client(c) {
  let n = 0;
  const mine = [];
  while (Date.now() < until) {
    n++;
    const b = ids[n % ids.length];
    // (Never the same stage as b: the offset runs 1 … stages − 1.)
    const t = ids[(n + 1 + (c % (ids.length - 1))) % ids.length];
    const width = 600 + ((n * 37 + c * 101) % 800);
    const step = (n + c) % 10;
    if (step === 0) {
      const id = await newStory(c, n);
      if (id) mine.push(id);
    } else if (step === 1) await call('GET', '/api/comparisons/demo/stage-table');
    else if (step === 2) await call('GET', `/api/comparisons/demo/flamegraph?stage=${b}&kind=cpu`);
    else if (step === 3) await call('GET', `/api/comparisons/demo/diff?base=${b}&target=${t}&kind=cpu`);
    else if (step === 4) await call('GET', `/api/comparisons/demo/top?stage=${b}&kind=allocs`);
    else if (step === 5) await call('GET', `/api/comparisons/demo/flamegraph.svg?stage=${b}&kind=cpu&width=${width}`);
    else if (step === 6) await call('GET', `/api/comparisons/demo/changes?base=${b}&target=${t}`);
    else if (step === 7) await call('GET', `/api/artifacts/${demoFiles[n % demoFiles.length]}/raw`);
    else if (step === 8 && mine.length > 0) await call('GET', `/api/comparisons/${mine[n % mine.length]}`);
    else await call('GET', '/healthz');
  }
}

const samples = [];
const sample = () => samples.push({ t: Math.round((Date.now() - started) / 1000), rss: rssBytes(pid) });
sample();
const sampler = setInterval(sample, 10_000);
await Promise.all(Array.from({ length: clients }, (_, c) => client(c)));
clearInterval(sampler);
sample();

// Every uploaded file is still there, byte for byte.
let intact = 0;
for (const f of kept) {
  const r = await call('GET', `/api/artifacts/${f.artifact}/raw`);
  if (r.status === 200 && createHash('sha256').update(r.bytes).digest('hex') === f.sha256) intact++;
  else if (errors.length < 20) errors.push(`file ${f.artifact} of ${f.id}: ${r.status}, not as uploaded`);
}
const health = json(await call('GET', '/healthz'));
if (own) await own.stop();

const mb = (b) => (b / 1024 / 1024).toFixed(1);
const lastT = samples.at(-1).t;
const windowS = lastT >= 600 ? 300 : Math.floor(lastT / 2);
const win = samples.filter((s) => s.t >= lastT - windowS);
const growth = (win.at(-1).rss - win[0].rss) / win[0].rss;
const peak = win.reduce((m, s) => Math.max(m, s.rss), 0);
const flat = growth <= 0.05;
console.log(`soak: ${args.minutes} min, ${clients} clients, ${base}${own ? ' (own server)' : ''}`);
console.log(
  `requests ${counts.requests}, errors ${counts.errors}; by status ${[...counts.byStatus].map(([s, k]) => `${s}:${k}`).join(' ')}`,
);
console.log(`files kept ${intact}/${kept.length}`);
console.log(`main RSS every 10 s (MB): ${samples.map((s) => mb(s.rss)).join(' ')}`);
console.log(
  `last ${windowS} s: ${mb(win[0].rss)} → ${mb(win.at(-1).rss)} MB (${(growth * 100).toFixed(1)} %, peak ${mb(peak)} MB): ${flat ? 'flat' : 'GROWING'}`,
);
if (health?.resultMemo)
  console.log(
    `result memo at the end: ${mb(health.resultMemo.bytes)} of ${mb(health.resultMemo.maxBytes)} MB, ${health.resultMemo.entries} entries`,
  );
for (const e of errors) console.log(`  ${e}`);
process.exitCode = counts.errors === 0 && intact === kept.length && flat ? 0 : 1;
