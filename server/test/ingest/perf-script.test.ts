/**
 * `perf script` output of a real `perf record -g -e cpu-clock` (fixtures/profiles/perf-script-hey.txt),
 * folded and checked against perf's own stackcollapse script run on the same perf.data.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import '../../src/ingest/registry.ts';
import { ingest } from '../../src/ingest/detect.ts';
import { IngestError } from '../../src/ingest/errors.ts';
import { parse } from '../../src/ingest/perf-script.ts';
import type { Profile } from '../../src/model/profile.ts';
import { fixturesDir } from '../helpers/paths.ts';

const file = (f: string) => readFileSync(`${fixturesDir}profiles/${f}`);

/** Stacks root first joined by ";", summed per stack for sample type `t`. */
function folded(p: Profile, t = 0): Map<string, number> {
  const out = new Map<string, number>();
  for (let s = 0; s < p.sampleStack.length; s++) {
    const st = p.sampleStack[s]!;
    const names: string[] = [];
    for (let i = p.stackOffsets[st + 1]! - 1; i >= p.stackOffsets[st]!; i--)
      names.push(p.frames[p.stackFrames[i]!]!.name);
    const k = names.join(';');
    out.set(k, (out.get(k) ?? 0) + p.values[t]![s]!);
  }
  return out;
}

describe('perf script', () => {
  it('is detected by content and gives the stacks perf’s own stackcollapse gives for the same perf.data', async () => {
    const parsed = await ingest({ name: 'upload', bytes: file('perf-script-hey.txt') });
    expect(parsed.kind).toBe('profile');
    if (parsed.kind !== 'profile') return;
    const p = parsed.profile;
    expect(p.format).toBe('perf-script');
    expect(p.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'cpu', unit: 'nanoseconds' },
    ]);
    const want = new Map<string, number>();
    for (const l of file('perf-script-hey.stackcollapse.txt').toString().trim().split('\n')) {
      const i = l.lastIndexOf(' ');
      want.set(l.slice(0, i), Number(l.slice(i + 1)));
    }
    expect(folded(p)).toEqual(want);
    // "perf record: … (119 samples)"
    expect(p.values[0]!.reduce((a, b) => a + b, 0)).toBe(119);
  });

  it('cpu-clock periods are the cpu/nanoseconds values', () => {
    const text = file('perf-script-hey.txt').toString();
    const periods = [...text.matchAll(/^\S.*?\s+\d+\s+[\d.]+:\s+(\d+)\s+cpu-clock:/gm)].map((m) => Number(m[1]));
    expect(periods.length).toBe(119);
    const p = parse(file('perf-script-hey.txt'));
    expect(p.values[1]!.reduce((a, b) => a + b, 0)).toBe(periods.reduce((a, b) => a + b, 0));
  });

  it('tidies names as stackcollapse-perf does', () => {
    const text = [
      'java 1234/1240 [001] 100.000001:     250000 cycles: ',
      '\t    7f0a1 std::vector<int>::push_back(int const&)+0x11 (/usr/lib/libfoo.so)',
      '\t    7f0a2 [unknown] (/usr/lib/libbar.so.1)',
      '\t    7f0a3 (anonymous namespace)::run(int)+0x3 (/usr/bin/app)',
      '\t    7f0a4 net/http.(*Client).Do+0x40 (/usr/bin/app)',
      '\t    7f0a5 RegExp:[&<>"\'] (/tmp/perf-7539.map)',
      '',
      'Web Content 99 100.000002:     250000 cycles: ',
      '',
      '',
    ].join('\n');
    const p = parse(Buffer.from(text));
    expect([...folded(p).keys()]).toEqual([
      // a symbol that starts with "(" is taken for a process name and skipped, as the script does
      'java;RegExp:[&<>];net/http.(*Client).Do;[libbar.so.1];std::vector<int>::push_back',
      'Web_Content',
    ]);
    expect(p.sampleTypes[1]).toEqual({ type: 'cycles', unit: 'count' });
  });

  it('a cut file leaves the cut sample out and says so; any cut is a profile or a typed error', () => {
    const bytes = file('perf-script-hey.txt');
    // cut after the header and first frame of a sample
    const at = bytes.indexOf('\n\n', 2000) + 2;
    const frameEnd = bytes.indexOf('\n', bytes.indexOf('\n', at) + 1) + 1;
    const whole = parse(bytes.subarray(0, at));
    const cut = parse(bytes.subarray(0, frameEnd));
    expect(cut.comments).toEqual([
      ...whole.comments,
      'the file ends inside a sample (cut off?): that last sample is left out',
    ]);
    expect(cut.stats.numSamples).toBe(whole.stats.numSamples);
    for (let n = 1; n < 6000; n += 3) {
      try {
        parse(bytes.subarray(0, n));
      } catch (e) {
        expect(e).toBeInstanceOf(IngestError);
      }
    }
  });
});
