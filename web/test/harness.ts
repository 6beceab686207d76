// Shared by the e2e test and the flamegraph bench: build the web client if needed, start the real
// server on a free port with a throwaway data dir, launch Debian's Chromium through playwright-core.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';

export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const ARTIFACTS = join(REPO, 'test-artifacts');
/** The reference corpus the repository carries (fixtures/reference). */
export const SAMPLES = join(REPO, 'fixtures', 'reference');

/**
 * Build the web client into a fresh temporary directory (served through WEB_DIST), so a test never runs
 * against a stale web/dist and never races another checkout user's build of it.
 */
export function buildWeb(): string {
  const outDir = mkdtempSync(join(tmpdir(), 'stagediff-web-dist-'));
  // The production build (scripts/build.mjs), precompressed assets included.
  const r = spawnSync(process.execPath, [join(REPO, 'scripts/build.mjs'), '--web-only', '--web-out', outDir], {
    cwd: REPO,
    stdio: 'inherit',
  });
  if (r.status !== 0 || !existsSync(join(outDir, 'index.html'))) throw new Error('web build failed');
  return outDir;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => res(port));
    });
  });
}

export interface RunningServer {
  url: string;
  /** The server's DATA_DIR (its SQLite database is stagediff.db there). */
  dataDir: string;
  stop: () => Promise<void>;
  log: () => string;
}

export interface ServerOptions {
  /** Seed the read-only demo comparison (/c/demo) from fixtures/demo on start (default: off). */
  seedDemo?: boolean;
  /** More settings of the server (e.g. SOURCE_GOPROXY). */
  env?: Record<string, string>;
}

export async function startServer(webDist: string, options: ServerOptions = {}): Promise<RunningServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-web-'));
  let out = '';
  const child: ChildProcess = spawn(process.execPath, [join(REPO, 'server/bin/stagediff.mjs'), 'serve'], {
    cwd: REPO,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      STAGEDIFF_SEED_DEMO: options.seedDemo ? '1' : '0',
      WEB_DIST: webDist,
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited early:\n${out}`);
    try {
      const r = await fetch(`${url}/healthz`);
      if (r.status === 200) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`server not healthy within 60 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    dataDir,
    log: () => out,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(webDist, { recursive: true, force: true });
    },
  };
}

export const CHROMIUM = '/usr/bin/chromium';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      '--disable-sync',
    ],
  });
}
