/**
 * Tag filters against go tool pprof: -tagfocus/-tagignore (string regexps with and without a key,
 * number ranges with units) and -tagshow/-taghide, on a labelled CPU and goroutine profile
 * (pprof.Do labels) and on real heap profiles (the runtime's numeric "bytes" labels). Every case of
 * fixtures/profiles/labels/cases.tsv: its carried answer, checked against a live run when Go is
 * installed, and every row of it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type FrameFilters, filterProfile } from '../../src/analysis/filter.ts';
import { flatCum } from '../../src/analysis/flat-cum.ts';
import { compileGoRegexp } from '../../src/analysis/go-regexp.ts';
import { granularityKeys } from '../../src/analysis/granularity.ts';
import { TagFilterError, compileTagFilter, scaledLabel } from '../../src/analysis/tag-filter.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import type { Profile } from '../../src/model/profile.ts';
import { findGo, fixturesDir, repoRoot } from '../helpers/paths.ts';
import { parseTopRows, parseTopShown } from '../helpers/pprof-text.ts';

const go = findGo();
if (!go) console.warn('\n*** go is not installed: tag filters are checked against the carried answers only ***\n');

const dir = `${fixturesDir}profiles/labels/`;
const cases = readFileSync(`${dir}cases.tsv`, 'utf8')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))
  .map((l) => {
    const [id, file, flags] = l.split('\t') as [string, string, string];
    return { id, file, flags: flags.split(' ') };
  });

function live(file: string, flags: string[]): string {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...flags, file],
    { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' }, maxBuffer: 1 << 26 },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return r.stdout;
}

const flag = (flags: string[], name: string) => flags.find((f) => f.startsWith(`-${name}=`))?.slice(name.length + 2);

function filtersOf(flags: string[]): FrameFilters {
  const f: FrameFilters = {};
  for (const name of ['focus', 'ignore', 'hide', 'show', 'tagshow', 'taghide'] as const) {
    const v = flag(flags, name);
    if (v !== undefined) f[name] = compileGoRegexp(v);
  }
  for (const name of ['tagfocus', 'tagignore'] as const) {
    const v = flag(flags, name);
    if (v !== undefined) f[name] = compileTagFilter(v);
  }
  return f;
}

type Row = [string, number, number];
const sorted = (rows: Row[]) => [...rows].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1]));

/** pprof's -tags report as key → [total, value → total] (string labels, values in the -unit). */
function parseTags(text: string): Map<string, [number, Map<string, number>]> {
  const out = new Map<string, [number, Map<string, number>]>();
  let cur: Map<string, number> | null = null;
  for (const line of text.split('\n')) {
    const k = /^ (\S+): Total (-?\d+)[a-zA-Z]* of/.exec(line);
    if (k) {
      cur = new Map();
      out.set(k[1]!, [Number(k[2]), cur]);
      continue;
    }
    const v = /^\s+(-?\d+)[a-zA-Z]*\s+\(\s*[\d.]+%\): (.*)$/.exec(line);
    if (v && cur) cur.set(v[2]!, Number(v[1]));
    else if (line.trim() !== '') throw new Error(`unreadable pprof -tags line: ${line}`);
  }
  return out;
}

function ourTags(p: Profile, sampleIndex: number): Map<string, [number, Map<string, number>]> {
  const out = new Map<string, [number, Map<string, number>]>();
  const col = p.values[sampleIndex]!;
  for (let s = 0; s < col.length; s++) {
    for (const l of p.labelSets[p.sampleLabelSet[s]!]!) {
      if (l.str === undefined) continue;
      let e = out.get(l.key);
      if (!e) {
        e = [0, new Map()];
        out.set(l.key, e);
      }
      e[0] += col[s]!;
      e[1].set(l.str, (e[1].get(l.str) ?? 0) + col[s]!);
    }
  }
  return out;
}

describe('tag filters agree with go tool pprof', () => {
  it('covers string and numeric labels, both reports', () => {
    expect(cases.length).toBeGreaterThanOrEqual(20);
    expect(cases.some((c) => c.file.includes('reference/pprof'))).toBe(true);
  });

  for (const c of cases)
    it(`${c.id}: ${c.flags.join(' ')}`, () => {
      const text = readFileSync(`${dir}answers/${c.id}.txt`, 'utf8');
      const file = repoRoot + c.file;
      const p = parsePprof(readFileSync(file));
      const idx = p.sampleTypes.findIndex((t) => t.type === flag(c.flags, 'sample_index'));
      expect(idx).toBeGreaterThanOrEqual(0);
      const filtered = filterProfile(p, filtersOf(c.flags));
      if (c.flags[0] === '-tags') {
        const ref = parseTags(text);
        expect(ref.size).toBeGreaterThan(0);
        if (go) expect(parseTags(live(file, c.flags))).toEqual(ref);
        expect(ourTags(filtered, idx)).toEqual(ref);
        return;
      }
      const ref = parseTopRows(text);
      if (go) expect(sorted(parseTopRows(live(file, c.flags)))).toEqual(sorted(ref));
      const g = c.flags.includes('-lines') ? 'lines' : 'functions';
      const ours = flatCum(filtered, idx, undefined, granularityKeys(filtered, g)).map(
        (r): Row => [r.name, r.flat, r.cum],
      );
      expect(sorted(ours)).toEqual(sorted(ref));
      expect(ours.reduce((s, r) => s + r[1], 0)).toBe(parseTopShown(text));
    });

  it('refuses a regexp Go refuses, naming it', () => {
    expect(() => compileTagFilter('endpoint=(?=x)')).toThrow(TagFilterError);
    expect(() => compileTagFilter('endpoint=(?=x)')).toThrow(/"\(\?=x\)" is not a valid Go regular expression/);
  });

  it('scales labels as pprof prints them', () => {
    expect(scaledLabel(2048, 'bytes', 'auto')).toBe('2kB');
    expect(scaledLabel(1500, 'ms', 'auto')).toBe('1.50s');
    expect(scaledLabel(0, 'bytes', 'auto')).toBe('0');
  });
});
