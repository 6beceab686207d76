/**
 * The flood scenario of the fair-share tests: one client floods distinct uncached views from many
 * connections while a teammate opens new views of another comparison every 2 s and a load balancer
 * polls /healthz. Each client is its own local address (127.0.0.1, .2, .3); the flood runs in a
 * process of its own (flood-client.ts), so its loops never delay the others' measurements.
 */
import { spawn } from 'node:child_process';
import { Agent, request } from 'node:http';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fixturesDir } from './paths.ts';
import { createStory, type ServerProcess } from './server-process.ts';

export const FLOOD_SECONDS = 30;
export const FLOOD_CONNECTIONS = 40;
const FLOOD_CLIENT = fileURLToPath(new URL('./flood-client.ts', import.meta.url));

/** A GET from one local address (each address is one client), with its status and time. */
function get(
  agent: Agent,
  base: string,
  path: string,
  keep = 300,
): Promise<{ status: number; ms: number; body: string }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(`${base}${path}`, { agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          ms: performance.now() - t0,
          body: Buffer.concat(chunks).toString('utf8').slice(0, keep),
        }),
      );
      res.on('error', () => resolve({ status: -1, ms: performance.now() - t0, body: 'response error' }));
    });
    req.on('error', (e) => resolve({ status: -1, ms: performance.now() - t0, body: e.message }));
    req.end();
  });
}

const client = (address: string, sockets: number) =>
  new Agent({ keepAlive: true, maxSockets: sockets, localAddress: address });

const demo = (stage: string, files: string[]) => files.map((f) => join(fixturesDir, 'demo', stage, f));

export async function floodScenario(srv: ServerProcess) {
  const flooded = await createStory(srv.base, 'flooded', [
    ['baseline', demo('baseline/run-1', ['cpu.pb.gz', 'allocs.pb.gz', 'wrk.txt'])],
    ['pooled', demo('pooled/run-1', ['cpu.pb.gz', 'allocs.pb.gz', 'wrk.txt'])],
  ]);
  const team = await createStory(srv.base, 'team', [
    ['fast-json', demo('fast-json/run-2', ['cpu.pb.gz', 'allocs.pb.gz', 'wrk.txt'])],
    ['async-log', demo('async-log/run-2', ['cpu.pb.gz', 'allocs.pb.gz', 'wrk.txt'])],
  ]);
  const [fb, ft] = flooded.stages;
  const [tb, tt] = team.stages;
  const t = `/api/comparisons/${team.id}`;
  const teamPath = (n: number): string => {
    const frac = (1 + n) / 1e6;
    switch (n % 3) {
      case 0:
        return `${t}/flamegraph?stage=${tb}&minFraction=${frac}`;
      case 1:
        return `${t}/diff?base=${tb}&target=${tt}&minFraction=${frac}`;
      default:
        return `${t}/diff.svg?base=${tb}&target=${tt}&minFraction=${frac}`;
    }
  };

  const rssBefore = srv.rss();
  const teammate = client('127.0.0.2', 4);
  const balancer = client('127.0.0.3', 1);
  const teamResults: { status: number; ms: number; body: string }[] = [];
  const health: { status: number; ms: number }[] = [];
  const flood = spawn(
    process.execPath,
    ['--import', 'tsx', FLOOD_CLIENT, srv.base, flooded.id, fb!, ft!, String(FLOOD_SECONDS), String(FLOOD_CONNECTIONS)],
    // A session of its own (a visitor's machine is not the server's).
    { stdio: ['ignore', 'pipe', 'inherit'], detached: true },
  );
  // The visitor's CPU is not the server's: on this one machine its process yields to everyone else's.
  setPriority(flood.pid!, 10);
  let floodOut = '';
  flood.stdout.on('data', (d: Buffer) => {
    floodOut += d.toString();
  });
  const floodDone = new Promise<void>((resolve, reject) =>
    flood.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`flood client exited with ${code}`)))),
  );
  // The flood client starts (node and tsx) before the clock of the others does.
  await new Promise((r) => setTimeout(r, 1500));
  const end = Date.now() + (FLOOD_SECONDS - 2) * 1000;
  const teamLoop = async () => {
    const pending: Promise<void>[] = [];
    for (let n = 0; Date.now() < end; n++) {
      pending.push(get(teammate, srv.base, teamPath(n)).then((r) => void teamResults.push(r)));
      await new Promise((r) => setTimeout(r, 2000));
    }
    await Promise.all(pending);
  };
  const healthLoop = async () => {
    while (Date.now() < end) {
      health.push(await get(balancer, srv.base, '/healthz'));
      await new Promise((r) => setTimeout(r, 250));
    }
  };
  await Promise.all([teamLoop(), healthLoop(), floodDone]);
  const { mix: counts, samples: firsts } = JSON.parse(floodOut) as {
    mix: Record<string, number>;
    samples: Record<string, string>;
  };
  const mix = new Map(Object.entries(counts).map(([k, v]) => [Number(k), v]));
  const samples = new Map(Object.entries(firsts).map(([k, v]) => [Number(k), v]));
  const rssAfter = srv.rss();
  for (const a of [teammate, balancer]) a.destroy();
  const metrics = (await get(client('127.0.0.1', 1), srv.base, '/metrics', Number.POSITIVE_INFINITY)).body;
  return { mix, samples, teamResults, health, rssBefore, rssAfter, metrics };
}

export type FloodResult = Awaited<ReturnType<typeof floodScenario>>;

export function report(dialect: string, r: FloodResult): void {
  const statuses = [...r.mix].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`);
  console.log(
    `[flood ${dialect}] flood statuses ${statuses.join(', ')}; teammate ${r.teamResults.length} requests, ` +
      `statuses ${[...new Set(r.teamResults.map((x) => x.status))].join('/')}, worst ${Math.max(...r.teamResults.map((x) => x.ms)).toFixed(0)} ms; ` +
      `health checks ${r.health.length}, slowest ${r.health
        .map((x) => x.ms)
        .sort((a, b) => b - a)
        .slice(0, 5)
        .map((x) => x.toFixed(0))
        .join(', ')} ms; ` +
      `server RSS ${(r.rssBefore / 2 ** 20).toFixed(0)} → ${(r.rssAfter / 2 ** 20).toFixed(0)} MiB`,
  );
}
