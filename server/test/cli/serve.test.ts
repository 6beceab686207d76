/**
 * `stagediff serve` as a person starts it: on a terminal (a real pseudo-terminal, from util-linux's
 * `script`) one line says where the server and its demo are; with the output piped (a container, a
 * log collector) every line is JSON; LOG_FORMAT chooses either way.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stagediffBin } from '../helpers/cli.ts';

const SCRIPT = '/usr/bin/script';
const children: { child: ChildProcess; dir: string }[] = [];

afterEach(() => {
  for (const { child, dir } of children.splice(0)) {
    if (child.exitCode === null && child.pid) child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => res(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** Starts `stagediff serve` (under a pseudo-terminal when `tty`), waits until it answers. */
async function serve(env: Record<string, string>, tty: boolean) {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'stagediff-serve-'));
  const fullEnv: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dir,
    WEB_DIST: join(dir, 'no-web'),
    STAGEDIFF_SEED_DEMO: '0',
    ...env,
  };
  delete fullEnv.LOG_FORMAT;
  if (env.LOG_FORMAT) fullEnv.LOG_FORMAT = env.LOG_FORMAT;
  const command = `'${process.execPath}' '${stagediffBin}' serve`;
  const child = tty
    ? spawn(SCRIPT, ['-qfec', command, '/dev/null'], { env: fullEnv, stdio: ['pipe', 'pipe', 'pipe'] })
    : spawn(process.execPath, [stagediffBin, 'serve'], { env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push({ child, dir });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`serve exited:\n${out}`);
    const ok = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`serve did not answer within 90 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const lines = async () => {
    await new Promise((r) => setTimeout(r, 300));
    return out.replaceAll('\r', '').split('\n').filter(Boolean);
  };
  return { url, lines };
}

describe('stagediff serve’s output', () => {
  it.skipIf(!existsSync(SCRIPT))(
    'says on a terminal, in one line for a person, where the server and the demo are',
    async () => {
      const { url, lines } = await serve({ STAGEDIFF_SEED_DEMO: '1' }, true);
      await fetch(`${url}/api/comparisons/demo`);
      await fetch(`${url}/healthz`);
      const out = await lines();
      expect(out.filter((l) => l.includes('running at'))).toEqual([
        expect.stringMatching(
          new RegExp(
            `^\\d\\d:\\d\\d:\\d\\d stagediff is running at ${url} — the demo: ${url}/c/demo \\(Ctrl-C stops it\\)$`,
          ),
        ),
      ]);
      // One line per request, no JSON, no health check at the default level.
      expect(out.filter((l) => l.includes('/api/comparisons/demo'))).toEqual([
        expect.stringMatching(/^\d\d:\d\d:\d\d GET \/api\/comparisons\/demo 200 [\d.]+ ms$/),
      ]);
      expect(out.filter((l) => l.startsWith('{'))).toEqual([]);
      expect(out.filter((l) => l.includes('/healthz'))).toEqual([]);
    },
    150_000,
  );

  it.skipIf(!existsSync(SCRIPT))(
    'writes JSON on a terminal too when LOG_FORMAT=json',
    async () => {
      const { url, lines } = await serve({ LOG_FORMAT: 'json' }, true);
      const out = await lines();
      const running = out.map((l) => JSON.parse(l) as { msg: string }).filter((r) => r.msg.includes('running at'));
      expect(running.map((r) => r.msg)).toEqual([`stagediff is running at ${url} (Ctrl-C stops it)`]);
    },
    150_000,
  );

  it('writes JSON lines when its output is not a terminal, and lines for a person when asked', async () => {
    const piped = await serve({}, false);
    await fetch(`${piped.url}/api/comparisons/nope`);
    const records = (await piped.lines()).map((l) => JSON.parse(l) as { level: number; msg: string });
    expect(records.map((r) => r.msg.replace(/[\d.]+ ms$/, 'N ms'))).toEqual([
      expect.stringMatching(/^no web client/),
      `stagediff is running at ${piped.url} (Ctrl-C stops it)`,
      'GET /api/comparisons/nope 404 N ms',
    ]);
    const asked = await serve({ LOG_FORMAT: 'pretty' }, false);
    expect((await asked.lines()).filter((l) => l.includes('running at'))).toEqual([
      expect.stringMatching(/^\d\d:\d\d:\d\d stagediff is running at http/),
    ]);
  }, 150_000);

  it('refuses an unknown LOG_FORMAT, naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-serve-'));
    try {
      const child = spawn(process.execPath, [stagediffBin, 'serve'], {
        env: { ...process.env, DATA_DIR: dir, LOG_FORMAT: 'xml' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await new Promise<number | null>((r) => child.on('close', r));
      expect(code).not.toBe(0);
      expect(err).toContain('LOG_FORMAT must be one of auto, json, pretty, got "xml"');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
