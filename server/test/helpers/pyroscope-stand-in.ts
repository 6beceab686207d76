/**
 * A stand-in Pyroscope querier on 127.0.0.1, answering by procedure, profile type and window from
 * fixtures/pyroscope (answers built with Pyroscope's API types from the demo's pooled run-1..3 files;
 * manifest.json lists each type's profiles with their times):
 * - ProfileTypes: profile-types.bin as it is;
 * - SelectMergeProfile: the profiles of the type whose time lies in [start, end]: none gives an empty
 *   google.v1.Profile, one its own answer, all three the merged answer (no other subset is built:
 *   a 500 then, so a test asking for one fails loudly);
 * - SelectSeries: a SelectSeriesResponse built here as Pyroscope builds it: one series
 *   (service_name=demo-orders), a profile of time t counted in the point T = start + k·step with
 *   T − step < t ≤ T (T = start for t ≤ start), points summed, empty points left out. A selector other
 *   than the demo's has no series; TWO_INSTANCES_SELECTOR has two (the same points, two instances);
 *   CPU_ONLY_SELECTOR has the CPU types' alone.
 */
import { readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';
import { fixturesDir } from './paths.ts';

export const PYROSCOPE_DIR = `${fixturesDir}pyroscope/`;
export const DEMO_SELECTOR = '{service_name="demo-orders"}';
/** A selector whose series the stand-in answers twice, as two instances (each with the demo's points). */
export const TWO_INSTANCES_SELECTOR = '{service_name=~"demo-.*"}';
/** A selector the stand-in has only CPU profiles for (as a service whose SDK sends CPU alone). */
export const CPU_ONLY_SELECTOR = '{service_name="demo-orders",profiles="cpu"}';

export interface ManifestProfile {
  run: string;
  timeMs: number;
  file: string;
  total: number;
}
export interface ManifestType {
  id: string;
  source: string;
  profiles: ManifestProfile[];
  merged: string;
}
export const manifest = JSON.parse(readFileSync(`${PYROSCOPE_DIR}manifest.json`, 'utf8')) as {
  types: ManifestType[];
};

export function manifestType(id: string): ManifestType {
  const t = manifest.types.find((x) => x.id === id);
  if (!t) throw new Error(`no ${id} in fixtures/pyroscope/manifest.json`);
  return t;
}

export interface Asked {
  path: string;
  contentType: string;
  /** Request fields by number: strings (1, 2 of a select), int64 (start, end), double (step). */
  fields: Record<number, string | number>;
}

function readFields(path: string, body: Buffer): Record<number, string | number> {
  const r = protobuf.Reader.create(body);
  const out: Record<number, string | number> = {};
  const types = path.endsWith('/ProfileTypes');
  while (r.pos < r.len) {
    const tag = r.uint32();
    const f = tag >>> 3;
    const wire = tag & 7;
    if (types && wire === 0) out[f] = Number(r.int64());
    else if (!types && f <= 2 && wire === 2) out[f] = r.string();
    else if (!types && (f === 3 || f === 4) && wire === 0) out[f] = Number(r.int64());
    else if (!types && f === 6 && wire === 1) out[f] = r.double();
    else r.skipType(wire);
  }
  return out;
}

function seriesAnswer(t: ManifestType, start: number, end: number, stepSeconds: number, instances: string[]): Buffer {
  const stepMs = Math.round(stepSeconds * 1000);
  const points = new Map<number, number>();
  for (const p of t.profiles) {
    if (p.timeMs < start || p.timeMs > end) continue;
    const k = p.timeMs <= start ? 0 : Math.ceil((p.timeMs - start) / stepMs);
    const at = start + k * stepMs;
    points.set(at, (points.get(at) ?? 0) + p.total);
  }
  const w = protobuf.Writer.create();
  for (const instance of points.size > 0 ? instances : []) {
    const s = protobuf.Writer.create();
    const labels: [string, string][] = [['service_name', 'demo-orders']];
    if (instance !== '') labels.push(['instance', instance]);
    for (const [name, value] of labels) {
      const label = protobuf.Writer.create();
      label.uint32((1 << 3) | 2).string(name);
      label.uint32((2 << 3) | 2).string(value);
      s.uint32((1 << 3) | 2).bytes(label.finish());
    }
    for (const [at, value] of [...points].sort((a, b) => a[0] - b[0])) {
      const p = protobuf.Writer.create();
      p.uint32((1 << 3) | 1).double(value);
      p.uint32(2 << 3).int64(at);
      s.uint32((2 << 3) | 2).bytes(p.finish());
    }
    w.uint32((1 << 3) | 2).bytes(s.finish());
  }
  return Buffer.from(w.finish());
}

export interface StandIn {
  port: number;
  asked: Asked[];
  close: () => Promise<void>;
}

export async function startPyroscopeStandIn(): Promise<StandIn> {
  const asked: Asked[] = [];
  const answer = (path: string, f: Record<number, string | number>): { status: number; body: Buffer | string } => {
    if (path === '/querier.v1.QuerierService/ProfileTypes')
      return { status: 200, body: readFileSync(`${PYROSCOPE_DIR}profile-types.bin`) };
    const t = manifest.types.find((x) => x.id === f[1]);
    const two = f[2] === TWO_INSTANCES_SELECTOR;
    const ours =
      f[2] === DEMO_SELECTOR || two || (f[2] === CPU_ONLY_SELECTOR && String(f[1]).startsWith('process_cpu:'));
    const start = Number(f[3] ?? 0);
    const end = Number(f[4] ?? 0);
    if (path === '/querier.v1.QuerierService/SelectSeries')
      return {
        status: 200,
        body:
          t && ours
            ? seriesAnswer(t, start, end, Number(f[6] ?? 15), two ? ['10.0.0.1:6060', '10.0.0.2:6060'] : [''])
            : Buffer.alloc(0),
      };
    if (path === '/querier.v1.QuerierService/SelectMergeProfile') {
      const inside = t && ours ? t.profiles.filter((p) => p.timeMs >= start && p.timeMs <= end) : [];
      if (inside.length === 0) return { status: 200, body: Buffer.alloc(0) };
      if (inside.length === 1) return { status: 200, body: readFileSync(`${PYROSCOPE_DIR}${inside[0]!.file}`) };
      if (inside.length === t!.profiles.length)
        return { status: 200, body: readFileSync(`${PYROSCOPE_DIR}${t!.merged}`) };
      return {
        status: 500,
        body: `{"code":"internal","message":"the stand-in has no merge of ${inside.map((p) => p.run).join('+')}"}`,
      };
    }
    return { status: 404, body: '{"code":"unimplemented","message":"no such procedure"}' };
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const fields = readFields(path, Buffer.concat(chunks));
      asked.push({ path, contentType: req.headers['content-type'] ?? '', fields });
      const a =
        req.method === 'POST'
          ? answer(path, fields)
          : { status: 405, body: '{"code":"unimplemented","message":"POST only"}' };
      res
        .writeHead(a.status, { 'content-type': a.status === 200 ? 'application/proto' : 'application/json' })
        .end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    asked,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
