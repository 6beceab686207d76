/**
 * The guarded fetcher of profiler imports, against real sockets on 127.0.0.1: hosts PROFILER_HOSTS
 * does not name are refused before any connection; redirects are not followed; an answer past the
 * size cap, a server that does not answer, and one fetch too many each stop the import naming the
 * setting.
 */
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProfilerError, checkProfilerUrl, guardedFetcher } from '../../../src/services/profilers/guarded-fetch.ts';

let server: Server;
let port: number;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    if (req.url === '/redirect') res.writeHead(302, { location: 'http://10.0.0.1/' }).end();
    else if (req.url === '/big') res.writeHead(200).end(Buffer.alloc(64 * 1024, 'x'));
    else if (req.url === '/slow') setTimeout(() => res.writeHead(200).end('late'), 3000);
    else res.writeHead(200).end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const limits = () => ({ hosts: [`127.0.0.1:${port}`], timeoutMs: 500, maxResponseBytes: 16 * 1024, maxFetches: 5 });

async function refusal(p: Promise<unknown>): Promise<ProfilerError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ProfilerError);
    return e as ProfilerError;
  }
  throw new Error('not refused');
}

describe('guarded fetcher', () => {
  it('fetches from a listed host and port', async () => {
    const a = await guardedFetcher(limits())(new URL(`http://127.0.0.1:${port}/ok`));
    expect(a.status).toBe(200);
    expect(a.body.toString()).toBe('{"ok":true}');
  });

  it('refuses an unlisted host, port or scheme before connecting, naming PROFILER_HOSTS', async () => {
    const before = seen.length;
    for (const u of [`http://localhost:${port}/ok`, `http://127.0.0.1:${port + 1}/ok`, `http://127.0.0.2:${port}/ok`]) {
      const e = await refusal(guardedFetcher(limits())(new URL(u)));
      expect(e.status).toBe(403);
      expect(e.message).toContain('PROFILER_HOSTS');
    }
    expect(
      (await refusal(guardedFetcher({ ...limits(), hosts: [] })(new URL(`http://127.0.0.1:${port}/`)))).message,
    ).toContain('names no host');
    expect(() => checkProfilerUrl(`file:///etc/passwd`, limits().hosts)).toThrow(/only http/);
    expect(() => checkProfilerUrl(`http://u:p@127.0.0.1:${port}/`, limits().hosts)).toThrow(/user name or password/);
    expect(seen.length).toBe(before);
  });

  it('takes a listed host without a port on any port, and IPv6 in brackets', () => {
    expect(checkProfilerUrl('http://parca.internal:7070/', ['parca.internal']).host).toBe('parca.internal:7070');
    expect(checkProfilerUrl('http://[::1]:7070/', ['[::1]:7070']).hostname).toBe('[::1]');
    expect(() => checkProfilerUrl('http://[::1]:7071/', ['[::1]:7070'])).toThrow(ProfilerError);
  });

  it('does not follow a redirect', async () => {
    const e = await refusal(guardedFetcher(limits())(new URL(`http://127.0.0.1:${port}/redirect`)));
    expect(e.code).toBe('profiler-redirect');
    expect(e.message).toContain('redirects are not followed');
  });

  it('stops an answer past PROFILER_MAX_RESPONSE_BYTES and a fetch past PROFILER_FETCH_TIMEOUT_MS', async () => {
    const big = await refusal(guardedFetcher(limits())(new URL(`http://127.0.0.1:${port}/big`)));
    expect(big.message).toContain('PROFILER_MAX_RESPONSE_BYTES');
    const slow = await refusal(guardedFetcher(limits())(new URL(`http://127.0.0.1:${port}/slow`)));
    expect(slow.message).toContain('PROFILER_FETCH_TIMEOUT_MS');
  });

  it('counts the fetches of one import against PROFILER_MAX_FETCHES', async () => {
    const f = guardedFetcher({ ...limits(), maxFetches: 2 });
    await f(new URL(`http://127.0.0.1:${port}/ok`));
    await f(new URL(`http://127.0.0.1:${port}/ok`));
    const e = await refusal(f(new URL(`http://127.0.0.1:${port}/ok`)));
    expect(e.message).toContain('PROFILER_MAX_FETCHES');
  });
});
