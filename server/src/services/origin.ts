import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';

/** A host name or address with an optional port, as a forwarded Host may name one (nothing else). */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/**
 * Whether the socket's peer is a proxy TRUST_PROXY names (as Fastify decides for X-Forwarded-*): true
 * trusts any, a hop count trusts the nearest, a list trusts those addresses and CIDR ranges.
 */
export function trustedPeer(trust: Config['trustProxy'], address: string | undefined): boolean {
  if (trust === false || !address) return false;
  if (trust === true) return true;
  if (typeof trust === 'number') return trust > 0;
  return proxyList(trust).check(...peer(address));
}

const lists = new Map<string, BlockList>();

function proxyList(spec: string): BlockList {
  let list = lists.get(spec);
  if (list) return list;
  list = new BlockList();
  for (const item of spec.split(',')) {
    const [addr, bits] = item.trim().split('/');
    const family = isIP(addr ?? '');
    if (!addr || family === 0) continue;
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (bits === undefined) list.addAddress(addr, type);
    else list.addSubnet(addr, Number(bits), type);
  }
  lists.set(spec, list);
  return list;
}

function peer(address: string): [string, 'ipv4' | 'ipv6'] {
  const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (v4) return [v4[1]!, 'ipv4'];
  return [address, isIP(address) === 6 ? 'ipv6' : 'ipv4'];
}

/**
 * The origin absolute links are built on (share links): PUBLIC_URL; else, behind a proxy TRUST_PROXY
 * names, the host and scheme it forwards (X-Forwarded-Host, X-Forwarded-Proto); else null, and links
 * stay relative. Never the Host header a client sent directly: anyone can name any host there.
 */
export function publicOrigin(config: Config, req: FastifyRequest): string | null {
  if (config.publicUrl) return config.publicUrl;
  if (!req.headers['x-forwarded-host'] || !trustedPeer(config.trustProxy, req.socket?.remoteAddress)) return null;
  const host = req.host;
  const scheme = req.protocol;
  if (!HOST.test(host) || (scheme !== 'http' && scheme !== 'https')) return null;
  return `${scheme}://${host}`;
}
