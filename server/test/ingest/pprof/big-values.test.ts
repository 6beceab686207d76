/**
 * Sample values past 2^53 (fixtures/profiles/bigvalues, written by google/pprof's profile package):
 * read exactly when a double holds them and every sum of them, with the figures `go tool pprof -top`
 * printed for the file; refused, naming the problem, where a total could not be exact.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../../src/app.ts';
import { addStage, createComparison, testApp, upload } from '../../helpers/app.ts';
import { parsePprof } from '../../../src/ingest/pprof/index.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import { flatCum, total } from '../../../src/analysis/flat-cum.ts';
import { diffProfiles } from '../../../src/analysis/diff.ts';
import { commonPowerOfTwo, exactSums } from '../../../src/model/exact-sums.ts';
import { fixturesDir } from '../../helpers/paths.ts';
import { parseTopAll, parseTopShown } from '../../helpers/pprof-text.ts';

const dir = `${fixturesDir}profiles/bigvalues/`;
const read = (f: string) => parsePprof(readFileSync(dir + f));

function refusal(f: string): IngestError {
  try {
    read(f);
  } catch (err) {
    expect(err).toBeInstanceOf(IngestError);
    return err as IngestError;
  }
  throw new Error(`${f} was read`);
}

describe('values past 2^53', () => {
  const p = read('big-values.pb.gz');

  for (const type of ['cpu', 'samples']) {
    it(`${type}: every function's flat and cum and the total equal go tool pprof -top's`, () => {
      const i = p.sampleTypes.findIndex((t) => t.type === type);
      const text = readFileSync(`${dir}big-values.${type}.pprof-top.txt`, 'utf8');
      const ours = new Map(flatCum(p, i).map((r) => [r.name, [r.flat, r.cum] as [number, number]]));
      expect(ours).toEqual(parseTopAll(text));
      expect(total(p, i)).toBe(parseTopShown(text));
    });
  }

  it('holds the sample of 2^60 ns exactly, and the total 1585407806328012800 ns', () => {
    const cpu = p.sampleTypes.findIndex((t) => t.type === 'cpu');
    expect(Array.from(p.values[cpu]!)).toContain(2 ** 60);
    expect(BigInt(total(p, cpu))).toBe(2n ** 60n + 3n * 2n ** 57n + 2n ** 47n + 5n * 2n ** 20n);
    expect(String(total(p, cpu))).toBe('1585407806328012800');
  });

  it('a diff of the profile against itself nets every function to zero, totals exact', () => {
    const cpu = p.sampleTypes.findIndex((t) => t.type === 'cpu');
    const d = diffProfiles(p, p, { mode: 'absolute', sampleType: 'cpu' });
    expect(d.baseTotal).toBe(total(p, cpu));
    expect(d.targetTotal).toBe(total(p, cpu));
    const ref = parseTopAll(readFileSync(`${dir}big-values.cpu.pprof-top.txt`, 'utf8'));
    for (const r of d.rows) {
      expect([r.name, r.deltaFlat, r.deltaCum, r.base.flat, r.target.cum]).toEqual([r.name, 0, 0, ...ref.get(r.name)!]);
    }
    expect(d.rows.length).toBe(ref.size);
  });

  it('a value a double cannot hold (2^60 + 1) is refused, its exact digits named', () => {
    const e = refusal('big-values-odd.pb.gz');
    expect(e.code).toBe('value-out-of-range');
    expect(e.message).toContain('1152921504606846977');
  });

  it('values whose sum a double would round (2^60 ns and a 10 ms sample) are refused', () => {
    const e = refusal('big-values-oversum.pb.gz');
    expect(e.code).toBe('value-out-of-range');
    expect(e.message).toContain('the cpu values add up to more than a double holds exactly');
  });
});

describe('exactSums', () => {
  it('takes the common power of two into account', () => {
    expect(commonPowerOfTwo(new Float64Array([0, 2 ** 60, 3 * 2 ** 57]))).toBe(2 ** 57);
    expect(commonPowerOfTwo(new Float64Array([0, 0]))).toBe(1);
    expect(commonPowerOfTwo(new Float64Array([-(2 ** 63)]))).toBe(2 ** 63);
    expect(exactSums(new Float64Array([2 ** 60, 3 * 2 ** 57, -(2 ** 47)]))).toBe(true);
    expect(exactSums(new Float64Array([2 ** 60, 10_000_000]))).toBe(false);
    expect(exactSums(new Float64Array([2 ** 52, 2 ** 52 - 1]))).toBe(true);
    expect(exactSums(new Float64Array([2 ** 52, 2 ** 52]))).toBe(true);
    expect(exactSums(new Float64Array([2 ** 53, 1]))).toBe(false);
    expect(exactSums(new Float64Array([0.5]))).toBe(false);
  });
});

describe('values past 2^53 through the server', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => app.close());

  it('an upload is stored, and its top view has go tool pprof’s figures', async () => {
    const { id, auth } = await createComparison(app, 'fleet');
    const st = await addStage(app, id, auth, 'fleet');
    expect((await upload(app, id, st, auth, [`${dir}big-values.pb.gz`])).statusCode).toBe(200);
    const r = await app.inject({ url: `/api/comparisons/${id}/top?stage=${st}&sampleType=cpu` });
    expect(r.statusCode).toBe(200);
    // JSON prints a double by its shortest decimal (2^60 as 1152921504606847000); read back as a
    // double it is 2^60 exactly
    const encode = (r.json().rows as { name: string; flat: number }[]).find((x) => x.name === 'main.encode')!;
    expect(BigInt(encode.flat)).toBe(2n ** 60n);
    const ref = parseTopAll(readFileSync(`${dir}big-values.cpu.pprof-top.txt`, 'utf8'));
    const ours = new Map(
      (r.json().rows as { name: string; flat: number; cum: number }[]).map((x) => [x.name, [x.flat, x.cum]]),
    );
    expect(ours).toEqual(ref);
    const odd = await upload(app, id, st, auth, [`${dir}big-values-odd.pb.gz`]);
    expect(odd.statusCode).toBe(422);
    expect(odd.body).toContain('1152921504606846977');
  });
});
