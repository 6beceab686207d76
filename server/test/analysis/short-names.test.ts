/**
 * pprof's default names (analysis/short-names.ts) against `go tool pprof` itself, on a real CPU profile
 * of generic Go code (fixtures/profiles/generics): the profile as read gives every row of pprof's
 * default -top (names included); keyed by the names as written (each frame's fullName), every row of
 * -symbolize=none's. Checked live when Go is installed.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flatCum } from '../../src/analysis/flat-cum.ts';
import type { FrameKeys } from '../../src/analysis/frame-keys.ts';
import { keyIdOf, pprofShortName, writtenNameKeys } from '../../src/analysis/short-names.ts';
import { decodeProfile, encodeProfile } from '../../src/model/profile-codec.ts';
import { encodePprof } from '../../src/ingest/pprof/encode.ts';
import { sandwich } from '../../src/analysis/sandwich.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseTopAll } from '../helpers/pprof-text.ts';

const dir = `${fixturesDir}profiles/generics/`;
const go = findGo();

function pprofTop(symbolizeNone: boolean): string {
  const r = spawnSync(
    go!,
    [
      'tool',
      'pprof',
      ...(symbolizeNone ? ['-symbolize=none'] : []),
      '-top',
      '-nodecount=0',
      '-nodefraction=0',
      '-edgefraction=0',
      '-unit=ns',
      `${dir}cpu.pb.gz`,
    ],
    { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' } },
  );
  if (r.status !== 0) throw new Error(r.stderr);
  return r.stdout;
}

describe('pprof’s default (short) names of Go generics', () => {
  const p = parsePprof(readFileSync(`${dir}cpu.pb.gz`));
  const cpu = p.sampleTypes.findIndex((t) => t.type === 'cpu');
  const rows = (keys?: FrameKeys) =>
    new Map(flatCum(p, cpu, undefined, keys).map((r) => [r.name, [r.flat, r.cum] as [number, number]]));

  it('the profile as read gives go tool pprof’s default -top, row for row, names included', () => {
    const ref = parseTopAll(readFileSync(`${dir}cpu.default.pprof-top.txt`, 'utf8'));
    expect(ref.has('main.Total[go.shape.interface { Name ; Size int }]')).toBe(true);
    expect(rows()).toEqual(ref);
    if (go) expect(parseTopAll(pprofTop(false))).toEqual(ref);
  });

  it('the names as written give -symbolize=none’s', () => {
    const ref = parseTopAll(readFileSync(`${dir}cpu.none.pprof-top.txt`, 'utf8'));
    expect(ref.has('main.Total[go.shape.interface { Name() (string, error); Size() int }]')).toBe(true);
    expect(rows(writtenNameKeys(p))).toEqual(ref);
    if (go) expect(parseTopAll(pprofTop(true))).toEqual(ref);
  });

  it('the rule, case by case', () => {
    const s = (n: string) => pprofShortName(n, n);
    expect(
      s('encoding/json.typeEncoder.OnceValue[go.shape.func(*encoding/json.encodeState, reflect.Value)].func3'),
    ).toBe('encoding/json.typeEncoder.OnceValue[go.shape.func].func3');
    // a method of a generic type, Java's <init>, a name without brackets: as written
    expect(s('main.(*Stack[go.shape.func(int) (string, error)]).Churn')).toBe(
      'main.(*Stack[go.shape.func(int) (string, error)]).Churn',
    );
    expect(s('java.lang.Object.<init>(int)')).toBe('java.lang.Object.<init>(int)');
    expect(s('net/http.(*conn).serve')).toBe('net/http.(*conn).serve');
    // C++ as demangled: argument lists, then template arguments
    expect(s('std::vector<int, std::allocator<int> >::push_back(int const&)')).toBe('std::vector::push_back');
    // a symbol name of its own (already demangled by the producer): untouched
    expect(pprofShortName('a::b(int)', '_ZN1a1bEi')).toBe('a::b(int)');
    // a close without its open stops the removal where it is
    expect(s('x::f(a)) (b)')).toBe('x::f) (b)');
  });

  it('each shortened frame keeps its full name, through the cache codec and into a pprof download', () => {
    const full = 'main.Total[go.shape.interface { Name() (string, error); Size() int }]';
    const short = 'main.Total[go.shape.interface { Name ; Size int }]';
    const f = p.frames.find((x) => x.name === short);
    expect(f?.fullName).toBe(full);
    expect(p.frames.some((x) => x.name === full)).toBe(false);
    const back = decodeProfile(encodeProfile(p))!;
    expect(back.frames).toEqual(p.frames);
    // the download writes the name as written (and as its symbol name): pprof shortens it again
    const again = parsePprof(encodePprof(back));
    expect(again.frames.find((x) => x.name === short)?.fullName).toBe(full);
    expect(new TextDecoder().decode(encodePprof(back)).includes(full)).toBe(true);
  });

  it('a full name typed where the short one is the key finds it (sandwich focus, tree roots)', () => {
    const keys = [...new Set(p.frames.map((f) => f.name))];
    const full = 'main.Total[go.shape.interface { Name() (string, error); Size() int }]';
    const short = 'main.Total[go.shape.interface { Name ; Size int }]';
    expect(keyIdOf(keys, full)).toBe(keys.indexOf(short));
    expect(keyIdOf(keys, short)).toBe(keys.indexOf(short));
    expect(keyIdOf(keys, 'main.Nope[go.shape.func()]')).toBe(-1);
    const byFull = sandwich(p, cpu, full);
    const byShort = sandwich(p, cpu, short);
    expect(byFull.cum).toBeGreaterThan(0);
    expect(byFull).toEqual(byShort);
  });
});
