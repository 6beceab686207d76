/**
 * Share links never come from a Host header a client sent directly: PUBLIC_URL, else the host a
 * proxy TRUST_PROXY names forwards, else a relative link (the web client and CLI resolve it).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { trustedPeer } from '../../src/services/origin.ts';
import { testApp } from '../helpers/app.ts';

let app: StagediffApp | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** Creates a comparison with these headers; its share link as created and as GET answers it. */
async function links(env: Record<string, string>, headers: Record<string, string>): Promise<string[]> {
  app = await testApp(env);
  const created = await app.inject({ method: 'POST', url: '/api/comparisons', payload: { title: 't' }, headers });
  expect(created.statusCode).toBe(201);
  const { id, url } = created.json() as { id: string; url: string };
  const got = await app.inject({ url: `/api/comparisons/${id}`, headers });
  return [url, (got.json() as { url: string }).url].map((u) => u.replace(id, 'ID'));
}

const hostile = { host: 'evil.example', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' };

describe('share links', () => {
  it('are relative without PUBLIC_URL or a trusted proxy, whatever Host and X-Forwarded-Host say', async () => {
    expect(await links({}, hostile)).toEqual(['/c/ID', '/c/ID']);
  });

  it('are relative when the forwarding peer is not a proxy TRUST_PROXY names', async () => {
    // app.inject's peer is 127.0.0.1; the configured proxy is another address.
    expect(await links({ TRUST_PROXY: '10.0.0.5, 192.168.0.0/16' }, hostile)).toEqual(['/c/ID', '/c/ID']);
  });

  it('take the forwarded host and scheme of a trusted proxy', async () => {
    const fwd = { host: 'internal:8080', 'x-forwarded-host': 'perf.example.com', 'x-forwarded-proto': 'https' };
    expect(await links({ TRUST_PROXY: '127.0.0.1' }, fwd)).toEqual([
      'https://perf.example.com/c/ID',
      'https://perf.example.com/c/ID',
    ]);
    await app?.close();
    // A forwarded "host" that is no host name is not built on.
    expect(await links({ TRUST_PROXY: '1' }, { 'x-forwarded-host': 'a.example/<x>' })).toEqual(['/c/ID', '/c/ID']);
  });

  it('take PUBLIC_URL first', async () => {
    expect(await links({ PUBLIC_URL: 'https://stagediff.example.org/' }, hostile)).toEqual([
      'https://stagediff.example.org/c/ID',
      'https://stagediff.example.org/c/ID',
    ]);
  });

  it('trust the proxies TRUST_PROXY names, IPv4-mapped addresses and ranges included', () => {
    expect(trustedPeer(false, '127.0.0.1')).toBe(false);
    expect(trustedPeer(true, '203.0.113.9')).toBe(true);
    expect(trustedPeer(1, '203.0.113.9')).toBe(true);
    expect(trustedPeer(0, '203.0.113.9')).toBe(false);
    const list = '10.0.0.5, 192.168.0.0/16, fd00::/8';
    expect(trustedPeer(list, '10.0.0.5')).toBe(true);
    expect(trustedPeer(list, '::ffff:10.0.0.5')).toBe(true);
    expect(trustedPeer(list, '10.0.0.6')).toBe(false);
    expect(trustedPeer(list, '192.168.44.1')).toBe(true);
    expect(trustedPeer(list, 'fd12::1')).toBe(true);
    expect(trustedPeer(list, '2001:db8::1')).toBe(false);
  });
});
