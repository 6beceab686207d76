/**
 * OpenTelemetry profiles (fixtures/otlp): the demo's CPU, heap and mutex profiles written as OTLP by
 * the Collector's own pdata/pprofile (v0.165.0, protocol 1.10 layout), in protobuf and in OTLP JSON.
 * Read back, every sample type gives what `go tool pprof -top` printed for the pprof file each came
 * from: the same functions, flat and cum, and the same total. Then the rules: labels from attributes,
 * links, timestamp-only samples, gzip, a payload of an earlier release, several windows in one file.
 */
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type protobuf from 'protobufjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flatCum, total } from '../../../src/analysis/flat-cum.ts';
import type { StagediffApp } from '../../../src/app.ts';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import { detect, parseOtlp } from '../../../src/ingest/otlp/index.ts';
import { profilesDataType } from '../../../src/ingest/otlp/schema.ts';
import { parsePprof } from '../../../src/ingest/pprof/index.ts';
import type { Profile } from '../../../src/model/profile.ts';
import { addStage, createComparison, testApp, upload } from '../../helpers/app.ts';
import { fixturesDir } from '../../helpers/paths.ts';
import { parseTopAll, parseTopShown } from '../../helpers/pprof-text.ts';

const dir = `${fixturesDir}otlp/`;
const TYPES: Record<string, string[]> = {
  cpu: ['samples', 'cpu'],
  heap: ['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space'],
  mutex: ['contentions', 'delay'],
};

function refusal(bytes: Uint8Array): IngestError {
  try {
    parseOtlp(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(IngestError);
    return err as IngestError;
  }
  throw new Error('the payload was read');
}

describe('OTLP profiles equal go tool pprof on the pprof files they were written from', () => {
  for (const [name, types] of Object.entries(TYPES)) {
    for (const ext of ['pb', 'json']) {
      const p = parseOtlp(readFileSync(`${dir}${name}.otlp.${ext}`));
      it(`${name}.otlp.${ext}: sample types ${types.join(', ')}, each as go tool pprof -top prints it`, () => {
        expect(p.format).toBe('otlp');
        expect(p.sampleTypes.map((t) => t.type)).toEqual(types);
        for (const [i, type] of types.entries()) {
          const text = readFileSync(`${dir}expected/${name}.${type}.pprof-top.txt`, 'utf8');
          const ours = new Map(flatCum(p, i).map((r) => [r.name, [r.flat, r.cum] as [number, number]]));
          expect(ours, type).toEqual(parseTopAll(text));
          expect(total(p, i), type).toBe(parseTopShown(text));
        }
      });
    }
  }

  it('keeps the window, the period and the labels of the source profile', () => {
    for (const name of Object.keys(TYPES)) {
      const o = parseOtlp(readFileSync(`${dir}${name}.otlp.pb`));
      const src = parsePprof(readFileSync(`${dir}src/${name}.pb.gz`));
      expect([o.timeNanos, o.durationNanos, o.period, o.periodType, o.defaultSampleType]).toEqual([
        src.timeNanos,
        src.durationNanos,
        src.period,
        src.periodType,
        src.defaultSampleType,
      ]);
      const labels = (p: Profile) => new Set(p.labelSets.map((s) => JSON.stringify(s)));
      expect(labels(o)).toEqual(labels(src));
    }
    const cpu = parseOtlp(readFileSync(`${dir}cpu.otlp.pb`));
    expect(cpu.labelSets.flat().some((l) => l.key === 'endpoint' && l.str === 'GET /api/orders')).toBe(true);
    expect(cpu.comments).toContain('resource: service.name=demo-orders');
  });

  it('is recognised by content through ingest: plain, gzip’d, JSON gzip’d, under any name', async () => {
    const pb = readFileSync(`${dir}heap.otlp.pb`);
    const json = readFileSync(`${dir}mutex.otlp.json`);
    for (const [n, b] of [
      ['heap.otlp.pb', pb],
      ['upload.bin', pb],
      ['heap.pb.gz', gzipSync(pb)],
      ['profiles.json.gz', gzipSync(json)],
      ['mutex.json', json],
    ] as const) {
      const r = await ingest({ name: n, bytes: Buffer.from(b) });
      expect(r.kind, n).toBe('profile');
      expect(r.kind === 'profile' && r.profile.format, n).toBe('otlp');
    }
    // and a pprof file is still a pprof file
    const r = await ingest({ name: 'cpu.pb.gz', bytes: readFileSync(`${dir}src/cpu.pb.gz`) });
    expect(r.kind === 'profile' && r.profile.format).toBe('pprof');
    expect(detect(readFileSync(`${dir}src/cpu.pb.gz`).subarray(0, 0))).toBe(0);
  });
});

describe('what is refused, and why', () => {
  it('a payload of protocol release 1.9 (pdata/pprofile v0.140.0) is named as such', () => {
    const e = refusal(readFileSync(`${dir}proto1.9/cpu.otlp.pb`));
    expect(e.code).toBe('unsupported');
    expect(e.message).toContain('protocol release 1.8 or 1.9');
    expect(e.message).toContain('1.10 or 1.11');
  });

  it('a file of several windows names each (resource, time, sample types)', () => {
    const e = refusal(readFileSync(`${dir}all.otlp.pb`));
    expect(e.message).toContain('holds 3 profiles that do not share one resource, start time and duration');
    expect(e.message).toContain('stagediff.fixture.source=heap');
    expect(e.message).toContain('alloc_objects/count, alloc_space/bytes, inuse_objects/count, inuse_space/bytes');
  });

  it('JSON of an earlier draft (a Profile with `sample`) names the field', () => {
    const doc = JSON.parse(readFileSync(`${dir}mutex.otlp.json`, 'utf8'));
    const prof = doc.resourceProfiles[0].scopeProfiles[0].profiles[0];
    prof.sample = prof.samples;
    delete prof.samples;
    const e = refusal(Buffer.from(JSON.stringify(doc)));
    expect(e.message).toContain('`sample`');
    expect(e.message).toContain('1.10 or 1.11');
  });

  it('a payload over MAX_DECOMPRESSED_BYTES / 16 once inflated is refused naming the setting', () => {
    const pb = readFileSync(`${dir}cpu.otlp.pb`);
    try {
      parseOtlp(gzipSync(pb), { maxDecompressedBytes: 16 * 1024 });
      throw new Error('read');
    } catch (e) {
      expect((e as IngestError).code).toBe('too-large');
      expect((e as Error).message).toContain('MAX_DECOMPRESSED_BYTES / 16');
    }
  });

  it('damaged bytes are a clear error, not a crash', () => {
    const pb = readFileSync(`${dir}cpu.otlp.pb`);
    const e = refusal(pb.subarray(0, pb.length - 7));
    expect(e.code).toBe('malformed');
    expect(e.message).toMatch(/OTLP/);
  });
});

describe('the format’s own rules, on a payload built with the schema', () => {
  // One stack (main.work ← main.main) sampled three ways the format allows, and one link.
  function payload(): Uint8Array {
    const strings = ['', 'samples', 'count', 'main.work', 'main.main', 'main.go', 'thread.name', 'worker'];
    const msg = profilesDataType().fromObject({
      dictionary: {
        mappingTable: [{}],
        locationTable: [{}, { lines: [{ functionIndex: 1, line: 10 }] }, { lines: [{ functionIndex: 2, line: 20 }] }],
        functionTable: [{}, { nameStrindex: 3, filenameStrindex: 5 }, { nameStrindex: 4, filenameStrindex: 5 }],
        linkTable: [
          {},
          { traceId: Buffer.alloc(16, 0xab).toString('base64'), spanId: Buffer.alloc(8, 0xcd).toString('base64') },
        ],
        stringTable: strings,
        attributeTable: [{}, { keyStrindex: 6, value: { stringValueStrindex: 7 } }],
        stackTable: [{}, { locationIndices: [1, 2] }, { locationIndices: [2] }],
      },
      resourceProfiles: [
        {
          scopeProfiles: [
            {
              profiles: [
                {
                  sampleType: { typeStrindex: 1, unitStrindex: 2 },
                  timeUnixNano: '1795875096307575256',
                  durationNano: '5000000000',
                  samples: [
                    // timestamps only: one each
                    { stackIndex: 1, timestampsUnixNano: ['1795875096307575300', '1795875096307575400'] },
                    // one aggregated value
                    { stackIndex: 1, attributeIndices: [1], values: ['10'] },
                    // a value per timestamp, and a link
                    { stackIndex: 2, linkIndex: 1, values: ['2', '3'], timestampsUnixNano: ['1', '2'] },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    return profilesDataType().encode(msg).finish();
  }

  it('counts timestamps as one each, sums values, keeps attributes and links as labels', () => {
    const p = parseOtlp(payload());
    const rows = new Map(flatCum(p, 0).map((r) => [r.name, [r.flat, r.cum]]));
    expect(rows.get('main.work')).toEqual([12, 12]);
    expect(rows.get('main.main')).toEqual([5, 17]);
    expect(total(p, 0)).toBe(17);
    const labels = p.labelSets.flat();
    expect(labels).toContainEqual({ key: 'thread.name', str: 'worker' });
    expect(labels).toContainEqual({ key: 'trace_id', str: 'ab'.repeat(16) });
    expect(labels).toContainEqual({ key: 'span_id', str: 'cd'.repeat(8) });
  });

  it('refuses a sample with more values than timestamps', () => {
    const msg = profilesDataType().decode(payload()) as unknown as {
      resourceProfiles: { scopeProfiles: { profiles: { samples: { values: unknown[] }[] }[] }[] }[];
    };
    msg.resourceProfiles[0]!.scopeProfiles[0]!.profiles[0]!.samples[2]!.values.push(4);
    const e = refusal(
      profilesDataType()
        .encode(msg as unknown as protobuf.Message)
        .finish(),
    );
    expect(e.message).toContain('3 values and 2 timestamps');
  });
});

describe('over the API', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => {
    await app.close();
  });

  it('an uploaded OTLP file is a profile of the stage, with the same top as go tool pprof on its pprof', async () => {
    const { id, auth } = await createComparison(app, 'otlp');
    const stage = await addStage(app, id, auth, 'from otlp');
    const r = await upload(app, id, stage, auth, [`${dir}cpu.otlp.pb`]);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json() as { results: { ok: boolean; artifact: { kind: string; format: string } }[] };
    expect(body.results[0]).toMatchObject({ ok: true, artifact: { kind: 'profile', format: 'otlp' } });
    const top = await app.inject({ url: `/api/comparisons/${id}/top?stage=${stage}&sampleType=cpu` });
    expect(top.statusCode, top.body).toBe(200);
    const ref = parseTopAll(readFileSync(`${dir}expected/cpu.cpu.pprof-top.txt`, 'utf8'));
    const rows = (top.json() as { rows: { name: string; flat: number; cum: number }[] }).rows;
    expect(new Map(rows.map((x) => [x.name, [x.flat, x.cum]]))).toEqual(ref);
  });
});
