/**
 * `perf script` output of real `perf record -g` runs: fixtures/profiles/perf-script-hey.txt, checked
 * against perf's own stackcollapse script run on the same perf.data, and fixtures/profiles/perf/: one
 * recording printed with every header layout perf has used (with and without time, cpu, period, event
 * name), page-fault and two-event recordings, and a file FlameGraph publishes, each checked against
 * what FlameGraph's stackcollapse-perf.pl printed for it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
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

const perfDir = (f: string) => readFileSync(`${fixturesDir}profiles/perf/${f}`);

/** stackcollapse-perf.pl's output: stack → weight. */
function collapsed(f: string): Map<string, number> {
  const want = new Map<string, number>();
  for (const l of perfDir(f).toString().trim().split('\n')) {
    const i = l.lastIndexOf(' ');
    want.set(l.slice(0, i), Number(l.slice(i + 1)));
  }
  return want;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** The leaf (last frame) with the largest weight. */
function hottestLeaf(m: Map<string, number>): [string, number] {
  const leaves = new Map<string, number>();
  for (const [k, v] of m) {
    const leaf = k.slice(k.lastIndexOf(';') + 1);
    leaves.set(leaf, (leaves.get(leaf) ?? 0) + v);
  }
  return [...leaves].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
}

async function read(f: string): Promise<Profile> {
  const parsed = await ingest({ name: 'upload', bytes: perfDir(f) });
  expect(parsed.kind).toBe('profile');
  if (parsed.kind !== 'profile') throw new Error('not a profile');
  expect(parsed.profile.format).toBe('perf-script');
  return parsed.profile;
}

describe('perf script: weights and header layouts, against stackcollapse-perf.pl', () => {
  it('weighs by the period by default, as perf report and FlameGraph do; the sample count stays selectable', async () => {
    const p = await read('faults-default.txt');
    expect(p.sampleTypes).toEqual([
      { type: 'samples', unit: 'count' },
      { type: 'page-faults', unit: 'count' },
    ]);
    expect(p.defaultSampleType).toBe('page-faults');
    const want = collapsed('faults-default.stackcollapse-perf.txt');
    expect(folded(p, 1)).toEqual(want);
    // "perf record: … (42 samples)": the count differs from the weight
    expect(sum(folded(p, 0))).toBe(42);
    expect(sum(folded(p, 1))).toBe(sum(want));
    expect(sum(want)).not.toBe(42);
    expect(hottestLeaf(folded(p, 1))).toEqual(hottestLeaf(want));
  });

  it('cpu-clock: the period is CPU time in nanoseconds, and the default', async () => {
    const p = await read('cpu-default.txt');
    expect(p.sampleTypes[1]).toEqual({ type: 'cpu', unit: 'nanoseconds' });
    expect(p.defaultSampleType).toBe('cpu');
    expect(folded(p, 1)).toEqual(collapsed('cpu-default.stackcollapse-perf.txt'));
    expect(sum(folded(p, 0))).toBe(78);
  });

  it('reads every header layout of one recording to the same stacks', async () => {
    const byPeriod = folded(await read('cpu-default.txt'), 1);
    const bySamples = folded(await read('cpu-default.txt'), 0);
    for (const f of ['cpu-pid-tid-no-period', 'cpu-no-time', 'cpu-no-time-no-period', 'cpu-no-event']) {
      const p = await read(`${f}.txt`);
      // FlameGraph's script sees no period in these layouts and counts samples: so do we, in samples
      expect(folded(p, 0), f).toEqual(collapsed(`${f}.stackcollapse-perf.txt`));
      expect(folded(p, 0), f).toEqual(bySamples);
    }
    // `-F comm,pid,period,event,…`: no time, but the period is printed: perf's weight is read
    const noTime = await read('cpu-no-time.txt');
    expect(noTime.defaultSampleType).toBe('cpu');
    expect(folded(noTime, 1)).toEqual(byPeriod);
    expect(noTime.comments.join('\n')).toMatch(/counts these samples instead/);
    // no period printed: the sample count is the only (and default) type
    for (const f of ['cpu-pid-tid-no-period', 'cpu-no-time-no-period', 'cpu-no-event']) {
      const p = await read(`${f}.txt`);
      expect(p.sampleTypes, f).toEqual([{ type: 'samples', unit: 'count' }]);
      expect(p.defaultSampleType, f).toBe('samples');
    }
  });

  it('frames without their indent (a paste that trimmed the lines) read as stackcollapse-perf.pl reads them', async () => {
    for (const [f, type] of [
      ['cpu-default', 'cpu'],
      ['faults-default', 'page-faults'],
    ] as const) {
      const text = perfDir(`${f}-unindented.txt`).toString();
      expect(text, f).not.toMatch(/^[ \t]/m);
      const p = await read(`${f}-unindented.txt`);
      expect(p.defaultSampleType, f).toBe(type);
      const want = collapsed(`${f}-unindented.stackcollapse-perf.txt`);
      expect(folded(p, 1), f).toEqual(want);
      expect(sum(folded(p, 1)), f).toBe(sum(want));
      // the same stacks as the recording perf printed, indented
      expect(folded(p, 1), f).toEqual(folded(await read(`${f}.txt`), 1));
      expect(p.comments.join('\n'), f).not.toMatch(/unreadable/);
    }
  });

  it('keeps the samples of the first event only, as the script does, and says how many it left out', async () => {
    const p = await read('mixed-events.txt');
    expect(folded(p, 1)).toEqual(collapsed('mixed-events.stackcollapse-perf.txt'));
    const text = perfDir('mixed-events.txt').toString();
    const first = /^\S.*?:\s+\d+\s+(\S+):\s*$/m.exec(text)![1]!;
    const headers = [...text.matchAll(/^\S.*?:\s+\d+\s+(\S+):\s*$/gm)].map((m) => m[1]);
    const others = headers.filter((e) => e !== first).length;
    expect(others).toBeGreaterThan(0);
    expect(p.comments).toContain(`${others} sample(s) of other events than ${first} left out`);
    expect(sum(folded(p, 0))).toBe(headers.length - others);
  });

  it('a file FlameGraph publishes (Java page faults): period weights and Java names as the script gives them', async () => {
    const p = await read('published/perf-java-faults-01.txt');
    const want = collapsed('published/perf-java-faults-01.stackcollapse-perf.txt');
    expect(folded(p, 1)).toEqual(want);
    expect(sum(want)).toBe(200);
    expect(sum(folded(p, 0))).toBe(23);
    expect(hottestLeaf(folded(p, 1))).toEqual(hottestLeaf(want));
  });

  it('a Go file inferno publishes (cpu-clock:uhH, the last sample without its closing empty line)', async () => {
    const p = await read('published/inferno-go-stacks.txt');
    const want = collapsed('published/inferno-go-stacks.stackcollapse-perf.txt');
    expect(p.sampleTypes[1]).toEqual({ type: 'cpu', unit: 'nanoseconds' });
    expect(folded(p, 1)).toEqual(want);
    // five headers; the script, like us, leaves out the last sample (no empty line closes it)
    expect(sum(want)).toBe(4 * 250000);
    expect(p.comments).toContain('the file ends inside a sample (cut off?): that last sample is left out');
  });

  it('inlined frames (a->b) are two frames, the inner one marked as the script marks it', () => {
    const text = [
      'app 7 1.000000: 10 cycles: ',
      '\t    1 outer->inner+0x4 (/usr/bin/app)',
      '\t    2 main (/usr/bin/app)',
      '',
      '',
    ].join('\n');
    expect([...folded(parse(Buffer.from(text)), 1)]).toEqual([['app;main;outer;inner_[i]', 10]]);
  });
});
