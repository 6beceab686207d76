/**
 * "Add from a profiler" from Pyroscope, against a stand-in querier on 127.0.0.1 whose answers were
 * built with Pyroscope's published API types (fixtures/pyroscope/gen: SelectMergeProfile's
 * google.v1.Profile and SelectSeries' series from the demo's pooled CPU profiles, run-1..3): the
 * stage's CPU is what go tool pprof -top prints on the same three files, function for function.
 */
import { readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { parseTopRows } from '../helpers/pprof-text.ts';

const answers: Record<string, Buffer> = {
  '/querier.v1.QuerierService/SelectMergeProfile': readFileSync(`${fixturesDir}pyroscope/select-merge-profile.bin`),
  '/querier.v1.QuerierService/SelectSeries': readFileSync(`${fixturesDir}pyroscope/select-series.bin`),
};
const asked: { path: string; type: string; fields: Record<number, string | number> }[] = [];
let server: Server;
let port: number;
let app: StagediffApp;

/** The request's fields 1–4 (profile type, selector, start, end), as Pyroscope reads them. */
function fields(body: Buffer): Record<number, string | number> {
  const r = protobuf.Reader.create(body);
  const out: Record<number, string | number> = {};
  while (r.pos < r.len) {
    const tag = r.uint32();
    const f = tag >>> 3;
    if (f <= 2) out[f] = r.string();
    else if (f <= 4) out[f] = Number(r.int64());
    else r.skipType(tag & 7);
  }
  return out;
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = answers[req.url ?? ''];
      asked.push({
        path: req.url ?? '',
        type: req.headers['content-type'] ?? '',
        fields: fields(Buffer.concat(chunks)),
      });
      if (req.method !== 'POST' || !answer) {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end('{"code":"unimplemented","message":"no such procedure"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/proto' }).end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  app = await testApp({ ANALYSIS_WORKERS: '0', PROFILER_HOSTS: `127.0.0.1:${port}` });
});
afterAll(async () => {
  await app.close();
  await new Promise((r) => server.close(r));
});

describe('import from Pyroscope', () => {
  it('gives the stage the merged profile go tool pprof -top prints on the same files', async () => {
    const c = await createComparison(app, 'from pyroscope');
    const stage = await addStage(app, c.id, c.auth, 'pooled');
    const r = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages/${stage}/import`,
      headers: c.auth,
      payload: {
        source: 'pyroscope',
        url: `http://127.0.0.1:${port}`,
        query: '{service_name="demo-orders"}',
        from: '2026-11-29T03:40:00Z',
        to: '2026-11-29T04:05:00Z',
        runs: 1,
      },
    });
    expect(r.statusCode, r.body).toBe(200);
    const out = r.json() as {
      runs: { covered: unknown; profiles: { total: number; seriesTotal: number; scrapes: number }[] }[];
    };
    // Pyroscope's API gives no profile's own span: no covered window is claimed
    expect(out.runs[0]!.covered).toBeNull();
    expect(out.runs[0]!.profiles[0]!.total).toBe(21_510_000_000);
    // the series' points (one per file, its total) in the window add up to the same CPU
    expect(out.runs[0]!.profiles[0]!.seriesTotal).toBe(21_510_000_000);
    expect(out.runs[0]!.profiles[0]!.scrapes).toBe(3);
    const merge = asked.find((a) => a.path.endsWith('/SelectMergeProfile'))!;
    expect(merge.type).toBe('application/proto');
    expect(merge.fields).toEqual({
      1: 'process_cpu:cpu:nanoseconds:cpu:nanoseconds',
      2: '{service_name="demo-orders"}',
      3: Date.parse('2026-11-29T03:40:00Z'),
      4: Date.parse('2026-11-29T04:05:00Z'),
    });

    const top = await app.inject({ url: `/api/comparisons/${c.id}/top?stage=${stage}&sampleType=cpu` });
    expect(top.statusCode, top.body).toBe(200);
    const t = top.json() as { total: number; rows: { name: string; flat: number; cum: number }[] };
    const expected = parseTopRows(readFileSync(`${fixturesDir}pyroscope/expected/cpu.pprof-top.txt`, 'utf8'));
    expect(t.total).toBe(21_510_000_000);
    const byName = new Map(t.rows.map((x) => [x.name, [x.flat, x.cum]]));
    for (const [name, flat, cum] of expected) expect(byName.get(name), name).toEqual([flat, cum]);
    expect(t.rows.slice(0, 10).map((x) => x.name)).toEqual(expected.slice(0, 10).map((x) => x[0]));
  });
});
