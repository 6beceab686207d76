/**
 * Killing the server (SIGKILL) in the middle of an upload leaves the store consistent: after a
 * restart on the same data the half-sent file is nowhere, and the next upload works.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.ts';
import { repoRoot, samplePath } from '../helpers/paths.ts';
import '../helpers/app.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-crash-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

async function startServer(): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, [`${repoRoot}server/bin/stagediff.mjs`, 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: '',
      PORT: '0',
      DATA_DIR: dataDir,
      STAGEDIFF_SEED_DEMO: '0',
      LOG_LEVEL: 'info',
      WEB_DIST: '/nonexistent',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const base = await new Promise<string>((resolve, reject) => {
    let out = '';
    const t = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /(?:Server listening|stagediff is running) at (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(t);
        resolve(m[1]!);
      }
    });
  });
  return { child, base };
}

describe('SIGKILL during an upload', () => {
  it('leaves no half artifact, and the store works after a restart', async () => {
    const { child, base } = await startServer();
    const c = await (
      await fetch(`${base}/api/comparisons`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'crash' }),
      })
    ).json();
    const auth = { authorization: `Bearer ${c.editToken}` };
    const st = await (
      await fetch(`${base}/api/comparisons/${c.id}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name: 's' }),
      })
    ).json();
    // Send half of a large body, then kill the server while it is receiving.
    const url = new URL(`${base}/api/comparisons/${c.id}/stages/${st.id}/artifacts?filename=big.pb.gz`);
    const req = request({
      host: url.hostname,
      port: url.port,
      path: url.pathname + url.search,
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream', 'content-length': 8 * 1024 * 1024 },
    });
    req.on('error', () => undefined);
    const chunk = Buffer.alloc(256 * 1024, 7);
    for (let i = 0; i < 16; i++) req.write(chunk);
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    req.destroy();

    // Reopening (which sweeps) finds a consistent store: the comparison, its stage, no artifact.
    const store = await openStore({ dataDir });
    const tree = await store.getComparisonTree(c.id);
    expect(tree!.stages[0]!.artifacts).toHaveLength(0);
    const stats = await store.stats();
    expect(stats.artifacts).toBe(0);
    expect(stats.tempFiles).toBe(0);
    expect(stats.blobObjects).toBe(stats.blobs);
    await store.close();
    // The half-written spool file of the killed process is still there…
    expect(readdirSync(join(dataDir, 'spool'))).toHaveLength(1);

    const again = await startServer();
    // …until a server starts: the process that wrote it is gone, so it goes too.
    expect(readdirSync(join(dataDir, 'spool'))).toEqual([]);
    const up = await fetch(`${again.base}/api/comparisons/${c.id}/stages/${st.id}/artifacts?filename=cpu.pb.gz`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: readFileSync(samplePath('pprof/go_httpserver_before_cpu.pb.gz')),
    });
    expect(up.status).toBe(200);
    again.child.kill('SIGTERM');
    await new Promise((r) => again.child.once('exit', r));
  }, 90_000);
});
