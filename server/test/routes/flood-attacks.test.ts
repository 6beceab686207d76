/**
 * Each of the four floods that once took the analysis workers from everyone, run by one address for
 * FLOOD_SECONDS while another address opens a not-yet-cached view every second:
 *
 *  1. gzip'd Go 1.21 traces, which the trace reader refuses after their first bytes;
 *  2. the source view of a million-line file (a profile of a few hundred bytes naming lines 1 and
 *     1,000,000 and a source archive of about a kilobyte), every request a view not yet cached;
 *  3. source views of dependency files while SOURCE_GOPROXY is a proxy that never answers in time,
 *     each naming another module version the stage's go.mod requires;
 *  4. source archives of 2.1 million pax headers.
 *
 * The server runs in its own process as `stagediff serve` runs it, with the default 60 s analysis
 * deadline, so a worker held to it would show. Each attack comes from its own address (127.0.0.11…14),
 * the victim from 127.0.0.2. The victim is always served, each view measured; the flood gets answers
 * (refusals naming the problem, or bounded views), never a 5xx.
 *
 * The suite runs each flood for 10 s; `STAGEDIFF_FLOOD_SECONDS=30 npx vitest run
 * server/test/routes/flood-attacks.test.ts` runs the 30 s the issue asks for (figures in
 * docs/benchmarks.md).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../helpers/paths.ts';
import { paxFlood } from '../helpers/pax-flood.ts';
import { encodePprof } from '../helpers/pprof-encode.ts';
import { createStory, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const FLOOD_SECONDS = Number(process.env.STAGEDIFF_FLOOD_SECONDS ?? 10);
const FLOOD_CONNECTIONS = 4;
/**
 * The victim's worst view, asserted generously: the issue's bound is 2 s (measured and printed, and
 * recorded in docs/benchmarks.md); the assertion guards against a worker held by the flood (the
 * deadline is 60 s, a proxy fetch 20 s) on a loaded 2-core machine, not a measurement.
 */
const VICTIM_BOUND_MS = 6000;
/** Module versions the proxy attack's stage requires (one fetch, one proxy slot, each). */
const VERSIONS = 16;
/** How long the slow proxy holds every request: past SOURCE_GOPROXY_TIMEOUT_MS (20 s by default). */
const PROXY_HOLD_MS = 25_000;

/** An answer: its status, time, size and text (the start of it past 64 KiB). */
type Answer = { status: number; ms: number; body: string; bytes: number };

/** One request from the address `agent` is bound to, with its status, time and the start of its body. */
function send(
  agent: Agent,
  url: string,
  method: string,
  headers: Record<string, string> = {},
  body?: Buffer,
): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(url, { agent, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (bytes <= 64 * 1024) chunks.push(c);
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - t0,
          body: Buffer.concat(chunks).toString('utf8'),
          bytes,
        }),
      );
      res.on('error', () => resolve({ status: -1, ms: performance.now() - t0, body: 'response error', bytes }));
    });
    // The server answers a refused body before reading all of it, and may close: the answer still counts.
    req.on('error', (e) => resolve({ status: -1, ms: performance.now() - t0, body: e.message, bytes: 0 }));
    req.end(body);
  });
}

function multipart(name: string, bytes: Buffer): { body: Buffer; type: string } {
  const boundary = `----flood${Math.random().toString(16).slice(2)}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${boundary}` };
}

const tmp = mkdtempSync(join(tmpdir(), 'stagediff-flood-attacks-'));
let srv: ServerProcess | undefined;
let proxy: Server | undefined;
const proxyAsked: string[] = [];
let base = '';
let team: { id: string; stages: string[] };
/** The victim's views so far (every one a new, uncached view). */
let viewSeq = 0;

/** A file of `bytes` in the test's folder, for createStory. */
function file(name: string, bytes: Uint8Array): string {
  const p = join(tmp, name);
  writeFileSync(p, bytes);
  return p;
}

/** A tar.gz of `files` (name → text) made by tar. */
function tarGz(name: string, files: Record<string, string>): Buffer {
  const dir = mkdtempSync(join(tmp, `${name}-`));
  for (const [f, text] of Object.entries(files)) writeFileSync(join(dir, f), text);
  execFileSync('tar', ['-czf', join(dir, 'src.tar.gz'), '-C', dir, ...Object.keys(files)]);
  return readFileSync(join(dir, 'src.tar.gz'));
}

async function putSources(c: { id: string; auth: Record<string, string> }, stage: string, archive: Buffer) {
  const r = await fetch(`${base}/api/comparisons/${c.id}/stages/${stage}/sources?filename=src.tar.gz`, {
    method: 'PUT',
    headers: { ...c.auth, 'content-type': 'application/octet-stream' },
    body: new Blob([archive as Uint8Array<ArrayBuffer>]),
  });
  expect(r.status, await r.text()).toBe(200);
}

beforeAll(async () => {
  // A module proxy that takes every request and never answers in time.
  proxy = createServer((req, res) => {
    proxyAsked.push(req.url ?? '');
    const t = setTimeout(() => res.writeHead(404, { 'content-type': 'text/plain' }).end('not here'), PROXY_HOLD_MS);
    res.on('close', () => clearTimeout(t));
  });
  await new Promise<void>((r) => proxy!.listen(0, '127.0.0.1', r));
  srv = await startServerProcess({
    DATA_DIR: mkdtempSync(join(tmp, 'data-')),
    SOURCE_GOPROXY: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    MAX_SOURCE_FILE_BYTES: String(4 * 1024 * 1024),
    // No bound on uploads per minute: the parse floods (1, 4) run for the whole time, not into 429s.
    RATE_LIMIT_WRITES: '0',
  });
  base = srv.base;
  const demo = (stage: string, f: string) => join(fixturesDir, 'demo', stage, 'run-1', f);
  team = await createStory(base, 'team', [
    ['baseline', [demo('baseline', 'cpu.pb.gz'), demo('baseline', 'allocs.pb.gz')]],
    ['pooled', [demo('pooled', 'cpu.pb.gz'), demo('pooled', 'allocs.pb.gz')]],
  ]);
  // The victim's profiles parsed once before any flood, as a comparison in use has
  // them: what is measured is each new view, not the first parse of its files.
  const [tb, tt] = team.stages;
  for (const path of [
    `flamegraph?stage=${tb}&minFraction=0.5`,
    `diff?base=${tb}&target=${tt}&minFraction=0.5`,
    `flamegraph?stage=${tt}&minFraction=0.5`,
  ]) {
    const r = await fetch(`${base}/api/comparisons/${team.id}/${path}`);
    expect(r.status, await r.text()).toBe(200);
  }
}, 120_000);

afterAll(async () => {
  await srv?.stop();
  proxy?.closeAllConnections();
  await new Promise((r) => proxy?.close(r));
  rmSync(tmp, { recursive: true, force: true });
});

/**
 * Runs `attack` from FLOOD_CONNECTIONS connections of `address` for FLOOD_SECONDS while the victim
 * (127.0.0.2) opens a new view of the team's comparison every second; checks the victim was served
 * and prints the figures.
 */
async function flood(
  label: string,
  address: string,
  attack: (agent: Agent, n: number) => Promise<Answer>,
): Promise<Answer[]> {
  const attacker = new Agent({ keepAlive: true, maxSockets: FLOOD_CONNECTIONS, localAddress: address });
  const victim = new Agent({ keepAlive: true, maxSockets: 2, localAddress: '127.0.0.2' });
  const answers: Answer[] = [];
  const views: Answer[] = [];
  const end = Date.now() + FLOOD_SECONDS * 1000;
  let n = 0;
  const loop = async () => {
    while (Date.now() < end) answers.push(await attack(attacker, n++));
  };
  const [tb, tt] = team.stages;
  const t = `${base}/api/comparisons/${team.id}`;
  const look = async () => {
    // The flood starts first.
    await new Promise((r) => setTimeout(r, 1000));
    const pending: Promise<void>[] = [];
    while (Date.now() < end) {
      const k = viewSeq++;
      const frac = (1 + k) / 1e6;
      const path =
        k % 2 === 0
          ? `${t}/flamegraph?stage=${tb}&minFraction=${frac}`
          : `${t}/diff?base=${tb}&target=${tt}&minFraction=${frac}`;
      pending.push(send(victim, path, 'GET').then((r) => void views.push(r)));
      await new Promise((r) => setTimeout(r, 1000));
    }
    await Promise.all(pending);
  };
  await Promise.all([...Array.from({ length: FLOOD_CONNECTIONS }, loop), look()]);
  attacker.destroy();
  victim.destroy();

  const mix = new Map<number, number>();
  for (const r of answers) mix.set(r.status, (mix.get(r.status) ?? 0) + 1);
  const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]?.toFixed(0);
  const ms = views.map((v) => v.ms).sort((a, b) => a - b);
  const worst = ms.length > 0 ? ms[ms.length - 1]! : Number.NaN;
  const statuses = [...mix].map(([s, c]) => `${s}: ${c}`).join(', ');
  const floodMs = median(answers.map((r) => r.ms).sort((a, b) => a - b));
  const victimStatuses = [...new Set(views.map((v) => v.status))].join('/');
  console.log(
    `[flood ${label}] ${FLOOD_SECONDS} s from ${address}: ${answers.length} requests (${statuses}; median ${floodMs} ms); ` +
      `victim ${views.length} uncached views (${victimStatuses}), worst ${worst.toFixed(0)} ms, median ${median(ms)} ms`,
  );
  // The victim: a view every second, each served, none held behind the flood.
  expect(views.length).toBeGreaterThanOrEqual(FLOOD_SECONDS - 3);
  for (const v of views) expect(v.status, v.body.slice(0, 600)).toBe(200);
  expect(worst).toBeLessThan(VICTIM_BOUND_MS);
  // The flood never gets a 5xx.
  expect(
    answers.filter((r) => r.status >= 500),
    answers.find((r) => r.status >= 500)?.body.slice(0, 600),
  ).toEqual([]);
  return answers;
}

describe('one address floods, another is served', () => {
  it('1: gzip-compressed Go 1.21 traces, refused after their first bytes', async () => {
    const hostile = await createStory(base, 'traces', [['one', []]]);
    const url = `${base}/api/comparisons/${hostile.id}/stages/${hostile.stages[0]}/artifacts`;
    const trace = gzipSync(readFileSync(join(fixturesDir, 'traces', 'xsync-semaphore-go1.21.trace')));
    const answers = await flood('1, old traces', '127.0.0.11', (agent, i) => {
      const m = multipart(`old-${i}.trace.gz`, trace);
      return send(agent, url, 'POST', { ...hostile.auth, 'content-type': m.type }, m.body);
    });
    expect(answers.filter((r) => r.status === 422).length).toBeGreaterThan(0);
    for (const r of answers) expect([422, 429, -1], r.body.slice(0, 600)).toContain(r.status);
    expect(answers.find((r) => r.status === 422)?.body).toMatch(/Go 1\.2[12]|older|version/i);
  }, 180_000);

  it('2: the source view of a million-line file, a new view every time', async () => {
    const FILE = '/build/app/main.go';
    const lines = [1, 2, 1_000_000];
    const prof = encodePprof({
      sampleTypes: [
        ['samples', 'count'],
        ['cpu', 'nanoseconds'],
      ],
      locations: lines.map((line) => ({ lines: [{ fn: 'main.hot', file: FILE, line }] })),
      samples: lines.map((_, i) => ({ stack: [i], values: [1, 10_000_000] })),
    });
    expect(prof.length).toBeLessThan(400);
    const hostile = await createStory(base, 'million', [['v1', [file('million.pb', prof)]]]);
    const archive = tarGz('million', {
      'go.mod': 'module example.com/app\n\ngo 1.26\n',
      'main.go': `package main\n${'\n'.repeat(999_999)}`,
    });
    expect(archive.length).toBeLessThan(16 * 1024);
    await putSources(hostile, hostile.stages[0]!, archive);
    const s = hostile.stages[0];
    const answers = await flood('2, million-line source view', '127.0.0.12', (agent, i) =>
      send(agent, `${base}/api/comparisons/${hostile.id}/source?base=${s}&target=${s}&fn=main.hot&hide=zz${i}`, 'GET'),
    );
    const served = answers.filter((r) => r.status === 200);
    expect(served.length).toBeGreaterThan(0);
    for (const r of answers) expect([200, 429, 503], r.body.slice(0, 600)).toContain(r.status);
    // Each answer bounded: the sampled lines with context, the gap one counted row.
    for (const r of served) expect(r.bytes).toBeLessThan(1024 * 1024);
    expect(served[0]!.body).toContain('"elided"');
  }, 180_000);

  it('3: dependency source views through a module proxy that never answers in time', async () => {
    const DEP = 'github.com/BurntSushi/toml';
    const versions = Array.from({ length: VERSIONS }, (_, i) => `v1.0.${i}`);
    // One function per version, each in that version's lex.go as a module-cache build names it.
    const prof = encodePprof({
      sampleTypes: [
        ['samples', 'count'],
        ['cpu', 'nanoseconds'],
      ],
      locations: versions.map((v, i) => ({
        lines: [{ fn: `${DEP}.f${i}`, file: `/root/go/pkg/mod/github.com/!burnt!sushi/toml@${v}/lex.go`, line: 10 }],
      })),
      samples: versions.map((_, i) => ({ stack: [i], values: [1, 10_000_000] })),
    });
    const hostile = await createStory(base, 'proxy', [['deps', [file('deps.pb', prof)]]]);
    await putSources(
      hostile,
      hostile.stages[0]!,
      tarGz('deps', {
        'go.mod': `module example.com/app\n\ngo 1.26\n\nrequire (\n${versions.map((v) => `\t${DEP} ${v}\n`).join('')})\n`,
        'main.go': 'package main\n\nfunc main() {}\n',
      }),
    );
    const s = hostile.stages[0];
    const answers = await flood('3, slow module proxy', '127.0.0.13', (agent, i) =>
      send(
        agent,
        `${base}/api/comparisons/${hostile.id}/source?base=${s}&target=${s}&fn=${encodeURIComponent(`${DEP}.f${i % VERSIONS}`)}&hide=zz${i}`,
        'GET',
      ),
    );
    for (const r of answers) expect([200, 429, 503], r.body.slice(0, 600)).toContain(r.status);
    const served = answers.filter((r) => r.status === 200);
    expect(served.length).toBeGreaterThan(0);
    // The proxy was asked, and the visitor learns only that the source is unavailable, never where from.
    expect(proxyAsked.length).toBeGreaterThan(0);
    for (const r of served) {
      expect(r.body).toContain('source unavailable');
      expect(r.body).not.toContain('127.0.0.1:');
    }
  }, 180_000);

  it('4: source archives of 2.1 million pax headers', async () => {
    const hostile = await createStory(base, 'pax', [['one', []]]);
    const url = `${base}/api/comparisons/${hostile.id}/stages/${hostile.stages[0]}/sources`;
    const pax = paxFlood(1026);
    const answers = await flood('4, pax-header archives', '127.0.0.14', (agent, i) =>
      send(
        agent,
        `${url}?filename=pax-${i}.tar.gz`,
        'PUT',
        { ...hostile.auth, 'content-type': 'application/octet-stream' },
        pax,
      ),
    );
    expect(answers.filter((r) => r.status === 413).length).toBeGreaterThan(0);
    for (const r of answers) expect([413, 429, -1], r.body.slice(0, 600)).toContain(r.status);
    expect(answers.find((r) => r.status === 413)?.body).toContain('MAX_SOURCE_ARCHIVE_ENTRIES');
  }, 180_000);
});
