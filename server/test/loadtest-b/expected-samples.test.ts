/**
 * Every sample of vegeta, k6, Locust, JMeter and ghz in ../shared/samples/loadtests against its
 * reference figures in expected.json: detected by content (no file name), then parsed from a
 * streamed file source and checked field by field.
 */
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../src/ingest/errors.ts';
import { checkRun, detectB, loadExpected, parseFile, samplePath } from './harness.ts';

const TOOLS = ['vegeta', 'k6', 'locust', 'jmeter', 'ghz'];
const expected = loadExpected();
const keys = Object.keys(expected).filter((k) => TOOLS.includes(k.split('/')[0]!));

describe('group-B samples against expected.json', () => {
  it('covers every file of the five tools', () => {
    expect(keys.length).toBe(132);
  });

  for (const key of keys) {
    const exp = expected[key]!;
    it(key, async () => {
      const path = samplePath(key);
      if (exp.expectError) {
        // must be recognised and refused with a typed error, not silently turned into a run
        expect(detectB(path), `${key} should be recognised`).not.toBeNull();
        await expect(parseFile(path)).rejects.toBeInstanceOf(IngestError);
        return;
      }
      if (exp.mayBeUnsupported || exp.acceptError) {
        const d = detectB(path);
        expect(d, `${key} should be recognised (parsed or refused with a typed error)`).not.toBeNull();
        let run;
        try {
          run = await parseFile(path);
        } catch (e) {
          expect(e).toBeInstanceOf(IngestError);
          expect(['unsupported', 'no-run', 'empty']).toContain((e as IngestError).code);
          return;
        }
        checkRun(key, run, exp);
        return;
      }
      const run = await parseFile(path);
      checkRun(key, run, exp);
    });
  }
});
