/**
 * OTLP profiles from another language's profiler (fixtures/otlp/java): async-profiler 4.2 profiling a
 * small Java program. Its agent and its jfr-converter write the layout of OTLP protocol release 1.7;
 * stagediff reads it into the same profile a 1.10 payload gives. Each OTLP file is checked against a
 * second output of the same recording from the same tool: collapsed stacks with sample counts and
 * with totals. Per stack, per function (flat and cum) and in total, stagediff's reading equals them.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flatCum, total } from '../../../src/analysis/flat-cum.ts';
import { describeProfile, profileKind } from '../../../src/analysis/sample-types.ts';
import type { StagediffApp } from '../../../src/app.ts';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import { distinctTypeNames, parseOtlp } from '../../../src/ingest/otlp/index.ts';
import { detectRelease17, release17Type } from '../../../src/ingest/otlp/release-1-7.ts';
import type { Profile } from '../../../src/model/profile.ts';
import { addStage, createComparison, testApp, upload } from '../../helpers/app.ts';
import { runCliSync } from '../../helpers/cli.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const dir = `${fixturesDir}otlp/java/`;

/**
 * jfr-converter's collapsed output marks a frame's kind after its name (`_[k]` kernel, `_[j]` JIT
 * compiled, `_[i]` inlined, `_[0]`/`_[1]` interpreted/C1) where its OTLP output names the function
 * alone: for that pair, the marks are taken off before comparing. The agent writes the same names
 * in both, so its pairs are compared as written.
 */
const JFR_MARK = /_\[[a-z0-9]\]$/;

interface Case {
  otlp: string;
  collapsed: string;
  /** The sample type (column) of the OTLP profile the collapsed file gives. */
  type: string;
  unmark?: boolean;
}

const CASES: Case[] = [
  { otlp: 'agent/cpu.otlp.pb', collapsed: 'agent/cpu.collapsed.txt', type: 'samples' },
  { otlp: 'agent/cpu.otlp.pb', collapsed: 'agent/cpu.total.collapsed.txt', type: 'perf_events' },
  { otlp: 'agent/alloc.otlp.pb', collapsed: 'agent/alloc.collapsed.txt', type: 'samples' },
  { otlp: 'agent/alloc.otlp.pb', collapsed: 'agent/alloc.total.collapsed.txt', type: 'noop' },
  { otlp: 'jfr/cpu.otlp.pb', collapsed: 'jfr/cpu.collapsed.txt', type: 'samples', unmark: true },
  // jfr-converter 4.2 writes the sample count in its nanoseconds column too (its collapsed --total
  // gives the same counts): the column is read as written
  { otlp: 'jfr/cpu.otlp.pb', collapsed: 'jfr/cpu.collapsed.txt', type: 'cpu', unmark: true },
];

/** Collapsed stacks (`root;…;leaf N` per line) summed per stack. */
function readCollapsed(file: string, unmark: boolean): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(`${dir}${file}`, 'utf8').split('\n')) {
    if (line === '') continue;
    const space = line.lastIndexOf(' ');
    const frames = line.slice(0, space).split(';');
    const key = (unmark ? frames.map((f) => f.replace(JFR_MARK, '')) : frames).join(';');
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(space + 1)));
  }
  return out;
}

/** A profile's samples summed per stack of function names, root first, for one sample type. */
function stacksOf(p: Profile, column: number): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i < p.sampleStack.length; i++) {
    const s = p.sampleStack[i]!;
    const names: string[] = [];
    for (let k = p.stackOffsets[s + 1]! - 1; k >= p.stackOffsets[s]!; k--)
      names.push(p.frames[p.stackFrames[k]!]!.name);
    const key = names.join(';');
    out.set(key, (out.get(key) ?? 0) + p.values[column]![i]!);
  }
  return out;
}

/** Flat and cum per function from stacks: flat at the leaf, cum once per stack a function is on. */
function flatCumOf(stacks: Map<string, number>): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  for (const [stack, v] of stacks) {
    const frames = stack.split(';');
    for (const name of new Set(frames)) {
      const row = out.get(name) ?? [0, 0];
      row[1] += v;
      out.set(name, row);
    }
    out.get(frames[frames.length - 1]!)![0] += v;
  }
  return out;
}

describe('async-profiler 4.2 OTLP equals the collapsed stacks of the same recording', () => {
  for (const c of CASES) {
    it(`${c.otlp} ${c.type} = ${c.collapsed}${c.unmark ? ' (frame-kind marks taken off)' : ''}`, () => {
      const p = parseOtlp(readFileSync(`${dir}${c.otlp}`));
      const column = p.sampleTypes.findIndex((t) => t.type === c.type);
      expect(column, p.sampleTypes.map((t) => t.type).join(',')).toBeGreaterThanOrEqual(0);
      const ref = readCollapsed(c.collapsed, c.unmark ?? false);
      expect(ref.size).toBeGreaterThan(0);
      expect(stacksOf(p, column)).toEqual(ref);
      const ours = new Map(flatCum(p, column).map((r) => [r.name, [r.flat, r.cum]]));
      expect(ours).toEqual(flatCumOf(ref));
      let sum = 0;
      for (const v of ref.values()) sum += v;
      expect(total(p, column)).toBe(sum);
    });
  }

  it('names the sample types apart, the window and the Java frames as the profiler wrote them', () => {
    const cpu = parseOtlp(readFileSync(`${dir}agent/cpu.otlp.pb`));
    expect(cpu.format).toBe('otlp');
    expect(cpu.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'perf_events', unit: 'ns' },
    ]);
    expect(cpu.defaultSampleType).toBe('perf_events');
    // Busy.main ran for 2 s between start and stop
    expect(cpu.durationNanos).toBeGreaterThan(1.9e9);
    expect(cpu.durationNanos).toBeLessThan(10e9);
    expect(cpu.timeNanos).toBeGreaterThan(Date.UTC(2026, 0, 1) * 1e6);
    const names = new Set(cpu.frames.map((f) => f.name));
    for (const n of ['Busy.main', 'Busy.countPrimes', 'Busy.sumOfSquares', 'Busy.hashText', 'Record.main']) {
      expect(names.has(n), n).toBe(true);
    }
    // the program spends most of its CPU in countPrimes
    const top = flatCum(cpu, 1).sort((a, b) => b.flat - a.flat)[0]!;
    expect(top.name).toBe('Busy.countPrimes');

    const alloc = parseOtlp(readFileSync(`${dir}agent/alloc.otlp.pb`));
    expect(alloc.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'noop', unit: 'total' },
    ]);
    expect(alloc.frames.map((f) => f.name)).toContain('byte[]_[i]');

    const jfr = parseOtlp(readFileSync(`${dir}jfr/cpu.otlp.pb`));
    expect(jfr.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ]);
  });

  it('is recognised by content through ingest, as release 1.7 by its wire layout', async () => {
    for (const f of ['agent/cpu.otlp.pb', 'agent/alloc.otlp.pb', 'jfr/cpu.otlp.pb']) {
      const bytes = readFileSync(`${dir}${f}`);
      expect(detectRelease17(bytes), f).toBe('1.7');
      const r = await ingest({ name: 'profile.bin', bytes });
      expect(r.kind, f).toBe('profile');
      expect(r.kind === 'profile' && r.profile.format, f).toBe('otlp');
    }
    // the 1.10 payloads of pdata/pprofile and the 1.9 one are not taken for 1.7
    for (const f of ['cpu.otlp.pb', 'heap.otlp.pb', 'mutex.otlp.pb', 'all.otlp.pb', 'proto1.9/cpu.otlp.pb']) {
      expect(detectRelease17(readFileSync(`${fixturesDir}otlp/${f}`)), f).toBe('later');
    }
  });
});

describe("async-profiler's CPU engines read as CPU", () => {
  it("the agent's perf_events/ns profile is a CPU profile, as the JFR route's cpu/nanoseconds is; its allocations are not", () => {
    const cpu = parseOtlp(readFileSync(`${dir}agent/cpu.otlp.pb`));
    expect(cpu.sampleTypes.map((t) => t.type)).not.toContain('cpu');
    expect(profileKind(cpu)).toBe('cpu');
    // it opens on the engine's nanoseconds, the CPU time (1,869,126,192 ns of the collapsed totals)
    const d = describeProfile(cpu);
    expect(d.kind).toBe('cpu');
    expect(d.defaultSampleType).toBe('perf_events');
    expect(total(cpu, 1)).toBe(1_869_126_192);
    expect(profileKind(parseOtlp(readFileSync(`${dir}jfr/cpu.otlp.pb`)))).toBe('cpu');
    expect(profileKind(parseOtlp(readFileSync(`${dir}agent/alloc.otlp.pb`)))).not.toBe('cpu');
  });

  it('takes itimer and ctimer in nanoseconds as CPU, and not a hardware event counted in its own unit', () => {
    const cpu = parseOtlp(readFileSync(`${dir}agent/cpu.otlp.pb`));
    const named = (type: string, unit: string) => ({
      ...cpu,
      sampleTypes: [
        { type: 'samples', unit: 'count' },
        { type, unit },
      ],
    });
    expect(profileKind(named('itimer', 'ns'))).toBe('cpu');
    expect(profileKind(named('ctimer', 'ns'))).toBe('cpu');
    // async-profiler's perf_events for cycles, cache-misses…: a count, not time
    expect(profileKind(named('perf_events', 'total'))).toBe('other');
    expect(profileKind(named('perf_events', 'cycles'))).toBe('other');
    // wall-clock sampling is not CPU time
    expect(profileKind(named('wall', 'ns'))).toBe('wall');
  });
});

describe('inspect prints an async-profiler OTLP file', () => {
  it('with its Java frames, its sample types and the CPU in time', () => {
    const r = runCliSync('inspect', `${dir}agent/cpu.otlp.pb`, '--top', '5');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('Format: otlp');
    expect(r.stdout).toContain('sample types: samples/count, perf_events/ns*');
    expect(r.stdout).toMatch(/Type: perf_events, total: 1\.\d+ s/);
    const lines = r.stdout.split('\n');
    const header = lines.findIndex((l) => /flat%\s+cum\s+cum%\s+name$/.test(l));
    expect(header).toBeGreaterThan(0);
    const rows = lines.slice(header + 1).filter((l) => l.trim() !== '');
    expect(rows[0]).toMatch(/ Busy\.countPrimes$/);
    expect(rows.length).toBe(5);
  });

  it('as JSON, with the totals the collapsed stacks give', () => {
    const r = runCliSync('inspect', `${dir}agent/alloc.otlp.pb`, '--json');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    expect(o.format).toBe('otlp');
    let bytes = 0;
    for (const v of readCollapsed('agent/alloc.total.collapsed.txt', false).values()) bytes += v;
    expect(o.totals.noop).toBe(bytes);
    expect(o.top[0].name).toBe('byte[]_[i]');
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

  it('an uploaded async-profiler OTLP file is a profile of the stage, its top the collapsed totals', async () => {
    const { id, auth } = await createComparison(app, 'java otlp');
    const stage = await addStage(app, id, auth, 'from async-profiler');
    const r = await upload(app, id, stage, auth, [`${dir}agent/cpu.otlp.pb`]);
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json() as { results: { ok: boolean; artifact: { kind: string; format: string } }[] };
    expect(body.results[0]).toMatchObject({ ok: true, artifact: { kind: 'profile', format: 'otlp' } });
    const top = await app.inject({ url: `/api/comparisons/${id}/top?stage=${stage}&sampleType=perf_events` });
    expect(top.statusCode, top.body).toBe(200);
    const rows = (top.json() as { rows: { name: string; flat: number; cum: number }[] }).rows;
    const ref = flatCumOf(readCollapsed('agent/cpu.total.collapsed.txt', false));
    expect(new Map(rows.map((x) => [x.name, [x.flat, x.cum]]))).toEqual(ref);
  });
});

describe('release 1.7 payloads: what is refused', () => {
  /** A 1.7 payload of one Profile whose one sample slices `start`…`start+length` of two location indices. */
  function payload(start: number, length: number, values: string[]): Uint8Array {
    const msg = release17Type().fromObject({
      dictionary: {
        stringTable: ['', 'cpu', 'count', 'nanoseconds', 'A.run', 'A.main', 'thread.name'],
        functionTable: [{}, { nameStrindex: 4 }, { nameStrindex: 5 }],
        locationTable: [{}, { line: [{ functionIndex: 1 }] }, { line: [{ functionIndex: 2 }] }],
        attributeTable: [{}, { key: 'thread.name', value: { stringValue: 'main' } }],
      },
      resourceProfiles: [
        {
          scopeProfiles: [
            {
              profiles: [
                {
                  sampleType: [
                    { typeStrindex: 1, unitStrindex: 2 },
                    { typeStrindex: 1, unitStrindex: 3 },
                  ],
                  locationIndices: [1, 2],
                  timeNanos: '1795935835953587000',
                  durationNanos: '2000000000',
                  sample: [
                    { locationsStartIndex: start, locationsLength: length, value: values, attributeIndices: [1] },
                  ],
                },
              ],
            },
          ],
        },
      ],
    });
    return release17Type().encode(msg).finish();
  }

  function refusal(bytes: Uint8Array, limits: { maxDecompressedBytes?: number } = {}): IngestError {
    try {
      parseOtlp(bytes, limits);
    } catch (err) {
      expect(err).toBeInstanceOf(IngestError);
      return err as IngestError;
    }
    throw new Error('the payload was read');
  }

  it('a well-formed one reads: a value per type, its slice as the stack, its attribute as a label', () => {
    const p = parseOtlp(payload(0, 2, ['3', '3000']));
    expect(p.sampleTypes.map((t) => t.type)).toEqual(['samples', 'cpu']);
    expect(stacksOf(p, 1)).toEqual(new Map([['A.main;A.run', 3000]]));
    expect(p.labelSets.flat()).toContainEqual({ key: 'thread.name', str: 'main' });
    expect(p.timeNanosExact ?? String(p.timeNanos)).toBe('1795935835953587000');
  });

  it('a slice past the Profile’s location indices', () => {
    const e = refusal(payload(1, 2, ['1', '1']));
    expect(e.code).toBe('malformed');
    expect(e.message).toContain("a sample's locations 1…3 lie outside its Profile's 2 location indices");
  });

  it('a sample with a value count other than its types', () => {
    const e = refusal(payload(0, 2, ['1', '2', '3']));
    expect(e.message).toContain('3 values for 2 sample types');
  });

  /**
   * One Profile of 2,000 location indices (all one frame) and 1,000 samples of 1,000 frames each: at
   * 1,000 distinct starts, or all at the start with an attribute each (so none merge).
   */
  function wide(distinct: 'slices' | 'attributes'): Uint8Array {
    const msg = release17Type().fromObject({
      dictionary: {
        stringTable: ['', 'cpu', 'count', 'A.run'],
        functionTable: [{}, { nameStrindex: 3 }],
        locationTable: [{}, { line: [{ functionIndex: 1 }] }],
        attributeTable: Array.from({ length: 1001 }, (_, i) => ({ key: 'n', value: { intValue: i } })),
      },
      resourceProfiles: [
        {
          scopeProfiles: [
            {
              profiles: [
                {
                  sampleType: [{ typeStrindex: 1, unitStrindex: 2 }],
                  locationIndices: new Array(2000).fill(1),
                  timeNanos: '1',
                  durationNanos: '1',
                  sample: Array.from({ length: 1000 }, (_, i) =>
                    distinct === 'slices'
                      ? { locationsStartIndex: i, locationsLength: 1000, value: ['1'] }
                      : { locationsStartIndex: 0, locationsLength: 1000, value: ['1'], attributeIndices: [i + 1] },
                  ),
                },
              ],
            },
          ],
        },
      ],
    });
    return release17Type().encode(msg).finish();
  }

  it('stacks reaching more locations in all than MAX_DECOMPRESSED_BYTES allows (1,000,000 here)', () => {
    for (const distinct of ['slices', 'attributes'] as const) {
      const bytes = wide(distinct);
      // small enough for the payload limit (MAX_DECOMPRESSED_BYTES / 16 = 32 KiB)
      expect(bytes.length).toBeLessThan(32 * 1024);
      const e = refusal(bytes, { maxDecompressedBytes: 512 * 1024 });
      expect(e.code, distinct).toBe('too-large');
      expect(e.message, distinct).toContain('more than 524288 locations in all, over MAX_DECOMPRESSED_BYTES');
      // under the default setting the same payload reads: 1,000 samples of 1,000 frames
      const p = parseOtlp(bytes);
      expect(total(p, 0), distinct).toBe(1000);
      expect(p.stackOffsets[1]! - p.stackOffsets[0]!, distinct).toBe(1000);
    }
  });

  it('a 1.7-like Profile with no dictionary is named as a release before 1.7', () => {
    const full = payload(0, 2, ['1', '1']);
    // keep only ProfilesData field 1 (resource_profiles): release 1.6 and earlier had no dictionary
    const r = release17Type().decode(full) as unknown as { dictionary?: unknown };
    delete r.dictionary;
    const e = refusal(
      release17Type()
        .encode(r as never)
        .finish(),
    );
    expect(e.code).toBe('unsupported');
    expect(e.message).toContain('protocol release 1.6 or earlier');
  });
});

describe('sample type names', () => {
  it('are kept when distinct, and told apart when a name is shared', () => {
    expect(
      distinctTypeNames([
        ['samples', 'count'],
        ['cpu', 'nanoseconds'],
      ]),
    ).toEqual(['samples', 'cpu']);
    expect(
      distinctTypeNames([
        ['cpu', 'count'],
        ['cpu', 'nanoseconds'],
      ]),
    ).toEqual(['samples', 'cpu']);
    // more than one type besides the count, or a `samples` already there: name and unit
    expect(
      distinctTypeNames([
        ['e', 'count'],
        ['e', 'ns'],
        ['e', 'ms'],
      ]),
    ).toEqual(['samples', 'e_ns', 'e_ms']);
    expect(
      distinctTypeNames([
        ['samples', 'count'],
        ['e', 'count'],
        ['e', 'ns'],
      ]),
    ).toEqual(['samples', 'e_count', 'e_ns']);
  });
});
