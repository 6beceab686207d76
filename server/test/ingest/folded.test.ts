import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/detect.ts';
import { fixturesDir } from '../helpers/paths.ts';
import { flatCum, sortByFlat, total } from '../../src/analysis/flat-cum.ts';
import { detect as detectCpuprofile } from '../../src/ingest/cpuprofile.ts';
import { detect, FOLDED_LIMITS, parse } from '../../src/ingest/folded.ts';
import { detect as detectGc } from '../../src/ingest/gctrace.ts';
import { detect as detectBench } from '../../src/ingest/gobench.ts';
import { stackCount, type Profile } from '../../src/model/profile.ts';
import { gobenchSamples as samples, ingestError, read, readExpectedJson } from '../helpers/parser-tests.ts';

/** Writes a profile back as folded lines (root first), one per sample. */
function toFolded(p: Profile): string[] {
  const out: string[] = [];
  for (let s = 0; s < p.sampleStack.length; s++) {
    const st = p.sampleStack[s]!;
    const names: string[] = [];
    for (let i = p.stackOffsets[st + 1]! - 1; i >= p.stackOffsets[st]!; i--)
      names.push(p.frames[p.stackFrames[i]!]!.name);
    out.push(`${names.join(';')} ${p.values[0]![s]}`);
  }
  return out;
}

describe.each([
  ['go_httpserver_before_cpu.folded', 'go_httpserver_before_cpu.folded.json'],
  ['go_httpserver_after_cpu.folded', 'go_httpserver_after_cpu.folded.json'],
])('folded stacks %s against expected/%s', (file, expectedFile) => {
  const bytes = read(samples, file);
  const expected = readExpectedJson(expectedFile);
  const profile = parse(bytes);

  it('is detected from its content alone, and by no other importer', () => {
    const head = bytes.subarray(0, 4096);
    expect(detect(head)).toBeGreaterThanOrEqual(0.9);
    expect([detectBench(head), detectGc(head), detectCpuprofile(head)]).toEqual([0, 0, 0]);
  });

  it('has the reference total, stacks, depth and leaf functions', () => {
    expect(profile.format).toBe('folded');
    expect(profile.sampleTypes).toEqual([{ type: 'samples', unit: 'count' }]);
    expect(total(profile, 0)).toBe(expected.total);
    expect(stackCount(profile)).toBe(expected.distinct_stacks);
    let depth = 0;
    for (let s = 0; s < stackCount(profile); s++)
      depth = Math.max(depth, profile.stackOffsets[s + 1]! - profile.stackOffsets[s]!);
    expect(depth).toBe(expected.max_depth);
    expect(flatCum(profile, 0).filter((r) => r.flat > 0)).toHaveLength(expected.leaf_functions);
  });

  it('has the reference top-10 leaf functions (flat) with their percentages', () => {
    const top = sortByFlat(flatCum(profile, 0)).slice(0, 10);
    expect(
      top.map((r) => ({ name: r.name, value: r.flat, percent: Math.round((10000 * r.flat) / expected.total) / 100 })),
    ).toEqual(expected.top10_leaf);
  });

  it('keeps names with spaces and the producer\'s "," for ";" in generic shapes', () => {
    const names = new Set(profile.frames.map((f) => f.name));
    for (const n of expected.functions_with_semicolon_in_name as string[])
      expect(names).toContain(n.replaceAll(';', ','));
  });

  it("round-trips: writing the profile back gives the file's lines", () => {
    const lines = bytes
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '');
    expect(toFolded(profile)).toEqual(lines);
  });
});

describe('folded stacks semantics and errors', () => {
  it('recursion never double-counts (A;B;A;B 1 → A.cum 1, B.cum 1, B.flat 1)', () => {
    const p = parse(Buffer.from('A;B;A;B 1\n'));
    const rows = Object.fromEntries(flatCum(p, 0).map((r) => [r.name, r]));
    expect(rows).toEqual({ A: { name: 'A', flat: 0, cum: 1 }, B: { name: 'B', flat: 1, cum: 1 } });
  });

  it('takes the count after the last space and accepts CRLF', () => {
    const p = parse(Buffer.from('main;pkg.(*T).Do func1 12\r\nmain 3\r\n'));
    expect(toFolded(p)).toEqual(['main;pkg.(*T).Do func1 12', 'main 3']);
  });

  it('reports bad input as typed errors with the line number', () => {
    expect(ingestError(() => parse(Buffer.from('\n\n'))).code).toBe('empty');
    expect(ingestError(() => parse(Buffer.from('a;b\nc;d -4\n')))).toMatchObject({ code: 'malformed', line: 1 });
    const deep = `${Array.from({ length: FOLDED_LIMITS.maxDepth + 1 }, (_, i) => `f${i}`).join(';')} 1\n`;
    expect(ingestError(() => parse(Buffer.from(`a 1\n${deep}`)))).toMatchObject({ code: 'too-large', line: 2 });
  });

  it('reads the valid lines of a file with bad ones, and says how many it skipped', () => {
    const p = parse(Buffer.from('a;b 1\na;b\nc 2\na;b -4\n'));
    expect(toFolded(p)).toEqual(['a;b 1', 'c 2']);
    expect(p.comments).toEqual(['2 lines not of the form "frame;frame;… COUNT" skipped: lines 2, 4']);
    const many = Array.from({ length: 30 }, (_, i) => `bad${i}`).join('\n');
    expect(parse(Buffer.from(`a;b 1\n${many}\n`)).comments).toEqual([
      '30 lines not of the form "frame;frame;… COUNT" skipped: lines 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21 and 10 more',
    ]);
  });

  it('a small file with a comment line and a line cut short is detected and read, the note naming the line', async () => {
    // fixtures/profiles/pyspy-wordcount-noted.folded: the first eight stacks of py-spy's raw output
    // with a comment on top and the fourth stack cut inside its frames (the command is in the
    // folder's README): one bad line of eight, too many for a guess by share alone
    const dir = `${fixturesDir}profiles/`;
    const bytes = readFileSync(`${dir}pyspy-wordcount-noted.folded`);
    expect(detect(bytes)).toBe(0.5);
    const parsed = await ingest({ name: 'upload', bytes });
    if (parsed.kind !== 'profile') throw new Error(`read as ${parsed.kind}`);
    const p = parsed.profile;
    expect(p.format).toBe('folded');
    expect(p.comments).toEqual(['1 line not of the form "frame;frame;… COUNT" skipped: line 5']);
    // every other stack of py-spy's file, as it wrote it
    const source = readFileSync(`${dir}pyspy-wordcount-raw.folded`, 'utf8')
      .split('\n')
      .filter((l) => l !== '');
    expect(toFolded(p)).toEqual(source.slice(0, 8).filter((_, i) => i !== 3));
  });

  it('reads files as FlameGraph does: comments, empty frames, frameless samples', () => {
    const p = parse(Buffer.from('# perf stacks\n// collapsed\njava;;Thread.run 5\n 3\njava;main 2\n'));
    expect(toFolded(p)).toEqual(['java;;Thread.run 5', ' 3', 'java;main 2']);
    expect(p.comments).toEqual([]);
    expect(detect(Buffer.from('# perf stacks\njava;;Thread.run 5\n 3\njava;main 2\n'))).toBeGreaterThan(0.5);
  });

  it('does not claim Go benchmark or GC-trace text', () => {
    for (const f of ['json-encode-before.txt', 'render-before-gctrace.txt', 'multi-pkg-metric-after.txt']) {
      expect(detect(read(samples, f).subarray(0, 4096))).toBe(0);
    }
  });
});
