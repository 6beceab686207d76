import { type ChildProcess, spawn } from 'node:child_process';
import { openAsBlob, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { basename } from 'node:path';
import { repoRoot } from './paths.ts';

/** A server as `stagediff serve` runs it, in its own process (so its memory can be read on its own). */
export interface ServerProcess {
  base: string;
  pid: number;
  child: ChildProcess;
  /** Resident memory of the server process now, bytes (/proc). */
  rss(): number;
  /** What the server printed (stdout and stderr), for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Starts `stagediff serve` with `env` (no demo, no web client, quiet logs unless asked) and waits until it answers. */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [`${repoRoot}server/bin/stagediff.mjs`, 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      HOST: '127.0.0.1',
      PORT: String(port),
      STAGEDIFF_SEED_DEMO: '0',
      WEB_DIST: '/nonexistent',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own session, as a service manager starts it: on a machine whose kernel shares the CPU
    // between sessions, the test's own processes are not charged to the server's share.
    detached: true,
  });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}): ${out}`);
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() - t0 > 60_000) throw new Error(`server did not start: ${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    pid: child.pid!,
    child,
    rss: () => residentBytes(child.pid!),
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await gone;
    },
  };
}

/** Resident memory of a process, bytes (VmRSS). */
export function residentBytes(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

async function ok(r: Response): Promise<Record<string, unknown>> {
  if (!r.ok) throw new Error(`${r.url}: HTTP ${r.status} ${await r.text()}`);
  return (await r.json()) as Record<string, unknown>;
}

/** Creates a comparison over HTTP with one stage per entry, each holding the given files. */
export async function createStory(
  base: string,
  title: string,
  stages: [name: string, files: string[]][],
): Promise<{ id: string; auth: Record<string, string>; stages: string[] }> {
  const c = await ok(
    await fetch(`${base}/api/comparisons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ title }),
    }),
  );
  const auth = { authorization: `Bearer ${c.editToken as string}` };
  const ids: string[] = [];
  for (const [name, files] of stages) {
    const st = await ok(
      await fetch(`${base}/api/comparisons/${c.id as string}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name }),
      }),
    );
    ids.push(st.id as string);
    if (files.length === 0) continue; // an empty stage
    const form = new FormData();
    for (const f of files) form.append('file', await openAsBlob(f), basename(f));
    await ok(
      await fetch(`${base}/api/comparisons/${c.id as string}/stages/${st.id as string}/artifacts`, {
        method: 'POST',
        headers: auth,
        body: form,
      }),
    );
  }
  return { id: c.id as string, auth, stages: ids };
}
