/**
 * A full disk under a real server (its analysis workers included): reads keep answering — an uncached
 * view is computed and served though it cannot be stored — while writes are refused with 507, and the
 * server takes uploads again once there is room. The data directory is a small tmpfs made full for
 * the test (mounting one needs root; elsewhere this suite skips, saying so).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../helpers/paths.ts';
import { createStory, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const mountPoint = mkdtempSync(join(tmpdir(), 'stagediff-full-'));
let mounted = false;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', mountPoint], { stdio: 'ignore' });
  mounted = true;
} catch {
  console.warn('disk-full suite skipped: mounting a tmpfs needs root here');
}

/** Writes a file until the filesystem has no room left; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512])
      for (;;)
        try {
          writeSync(fd, Buffer.alloc(size, 1));
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
          break;
        }
  } finally {
    closeSync(fd);
  }
  return path;
}

describe.skipIf(!mounted)('a full disk', () => {
  let srv: ServerProcess;
  let s: Awaited<ReturnType<typeof createStory>>;
  beforeAll(async () => {
    srv = await startServerProcess({ DATA_DIR: join(mountPoint, 'data') });
    s = await createStory(srv.base, 'full disk', [
      ['baseline', [join(fixturesDir, 'demo/baseline/run-1/cpu.pb.gz')]],
      ['pooled', [join(fixturesDir, 'demo/pooled/run-1/cpu.pb.gz')]],
    ]);
  }, 60_000);
  afterAll(async () => {
    await srv?.stop();
    // The server's workers end a moment after it does (they leave when its channel closes).
    for (let i = 0; mounted && i < 50; i++) {
      try {
        execFileSync('umount', [mountPoint], { stdio: 'ignore' });
        mounted = false;
      } catch {
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    if (!mounted) rmSync(mountPoint, { recursive: true, force: true });
  });

  it('answers uncached views, refuses uploads with 507, and takes them again once there is room', async () => {
    const filler = fill(mountPoint);
    const views = [
      `/api/comparisons/${s.id}/top?stage=${s.stages[0]}`,
      `/api/comparisons/${s.id}/diff?base=${s.stages[0]}&target=${s.stages[1]}&minFraction=0.002`,
      `/api/comparisons/${s.id}/diff.png?base=${s.stages[0]}&target=${s.stages[1]}&width=800`,
      `/api/comparisons/${s.id}/stage-table`,
    ];
    for (const v of views) {
      const r = await fetch(srv.base + v);
      expect(r.status, `${v}: ${await r.clone().text()}`).toBe(200);
      await r.arrayBuffer();
    }
    const metrics = await (await fetch(`${srv.base}/metrics`)).text();
    const failed = [...metrics.matchAll(/^stagediff_result_cache_write_failures_total\{code="[^"]+"\} (\d+)$/gm)];
    expect(failed.reduce((n, m) => n + Number(m[1]), 0)).toBeGreaterThan(0);
    expect((await fetch(`${srv.base}/healthz`)).status).toBe(200);

    const form = () => {
      const f = new FormData();
      f.append('file', new Blob([Buffer.alloc(256 * 1024, 7)]), 'big.txt');
      return f;
    };
    const url = `${srv.base}/api/comparisons/${s.id}/stages/${s.stages[0]}/artifacts`;
    const refused = await fetch(url, { method: 'POST', headers: s.auth, body: form() });
    expect(refused.status).toBe(507);
    expect((await refused.json()).error.code).toBe('storage-full');

    rmSync(filler);
    const again = await fetch(url, { method: 'POST', headers: s.auth, body: form() });
    // Room again: the upload is taken (and, not being a known format, refused by name as such).
    expect(again.status).toBe(422);
    expect((await again.json()).error.message).toMatch(/big\.txt/);
  }, 120_000);
});
