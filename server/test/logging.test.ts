/** The server's log: pino's JSON records, or the same records as lines a person reads on a terminal. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { listeningText, logStream, prettyLine, prettyLogs } from '../src/logging.ts';

describe('lines for a person', () => {
  it('is chosen on a terminal, or when asked; JSON otherwise', () => {
    expect(prettyLogs('auto', { write: () => true, isTTY: true })).toBe(true);
    expect(prettyLogs('auto', { write: () => true })).toBe(false);
    expect(prettyLogs('json', { write: () => true, isTTY: true })).toBe(false);
    expect(prettyLogs('pretty', { write: () => true })).toBe(true);
  });

  it('prints the time, the message, a level word only when it is not info, and the other fields', () => {
    const at = new Date(2026, 0, 2, 3, 4, 5).getTime();
    const rec = (o: object) => JSON.stringify({ level: 30, time: at, pid: 1, hostname: 'h', ...o });
    expect(prettyLine(rec({ msg: 'seeded the demo comparison', stages: 4, files: 172 }))).toBe(
      '03:04:05 seeded the demo comparison stages=4 files=172\n',
    );
    expect(
      prettyLine(
        rec({ level: 40, reqId: 'req-1', msg: 'slow', request: { method: 'GET' }, where: 'a b', list: [1, 2] }),
      ),
    ).toBe('03:04:05 WARN slow where="a b" list=[1,2]\n');
    const err = prettyLine(
      rec({ level: 50, msg: 'unhandled error', err: { message: 'boom', stack: 'Error: boom\n  at x' } }),
    );
    expect(err).toBe('03:04:05 ERROR unhandled error\n    Error: boom\n      at x\n');
    // Not JSON (a stray write): passed through.
    expect(prettyLine('plain text')).toBe('plain text\n');
  });

  it('names the address, and the demo when there is one, in one sentence; other interfaces after it', () => {
    const say = listeningText('/c/demo');
    expect(say('http://127.0.0.1:8080')).toBe(
      'stagediff is running at http://127.0.0.1:8080 — the demo: http://127.0.0.1:8080/c/demo (Ctrl-C stops it)',
    );
    expect(say('http://192.168.1.5:8080')).toBe('stagediff is also at http://192.168.1.5:8080');
    expect(listeningText(null)('http://127.0.0.1:9')).toBe(
      'stagediff is running at http://127.0.0.1:9 (Ctrl-C stops it)',
    );
  });
});

/** An app logging into `lines` (as a terminal would show them when `pretty`), driven with inject. */
async function appLogging(format: 'json' | 'pretty', level: string) {
  const lines: string[] = [];
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-logging-'));
  const sink = { write: (s: string) => lines.push(...s.split('\n').filter(Boolean)) };
  const config = {
    ...loadConfig({ DATA_DIR: dataDir, STAGEDIFF_SEED_DEMO: '0', ANALYSIS_WORKERS: '0' }),
    logLevel: level,
    logFormat: format,
  };
  const app = await buildApp(config, { logStream: logStream(format, sink) });
  app.addHook('onClose', async () => rmSync(dataDir, { recursive: true, force: true }));
  return { app, lines };
}

describe('one line per request', () => {
  it('writes one JSON record per request once answered, health checks and metrics at debug', async () => {
    const { app, lines } = await appLogging('json', 'info');
    try {
      for (const url of ['/healthz', '/metrics', '/api/comparisons/nope?x=1', '/healthz']) await app.inject({ url });
      const records = lines.map((l) => JSON.parse(l) as { level: number; msg: string; request?: object });
      const requests = records.filter((r) => r.request);
      expect(requests.map((r) => [r.level, r.request])).toEqual([
        [30, { method: 'GET', url: '/api/comparisons/nope?x=1', status: 404, ms: expect.any(Number) }],
      ]);
      expect(requests[0]!.msg).toMatch(/^GET \/api\/comparisons\/nope\?x=1 404 [\d.]+ ms$/);
      // Fastify's own pair of lines is gone.
      expect(records.filter((r) => /incoming request|request completed/.test(r.msg))).toEqual([]);
    } finally {
      await app.close();
    }
    const debug = await appLogging('json', 'debug');
    try {
      await debug.app.inject({ url: '/healthz' });
      const rec = debug.lines.map((l) => JSON.parse(l) as { level: number; msg: string }).filter((r) => r.level === 20);
      expect(rec.map((r) => r.msg.replace(/[\d.]+ ms$/, 'N ms'))).toEqual(['GET /healthz 200 N ms']);
    } finally {
      await debug.app.close();
    }
  });

  it('writes the same line for a person without the JSON', async () => {
    const { app, lines } = await appLogging('pretty', 'info');
    try {
      await app.inject({ method: 'POST', url: '/api/comparisons', payload: { title: 't' } });
      // (The line before it: this app has no web client to serve, and says so.)
      expect(lines.filter((l) => !/ WARN no web client/.test(l))).toEqual([
        expect.stringMatching(/^\d\d:\d\d:\d\d POST \/api\/comparisons 201 [\d.]+ ms$/),
      ]);
    } finally {
      await app.close();
    }
  });
});
