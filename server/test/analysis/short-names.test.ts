/**
 * pprof's default names (analysis/short-names.ts) against `go tool pprof` itself, on a real CPU profile
 * of generic Go code (fixtures/profiles/generics): with our short names as the keys, every row of
 * pprof's default -top (names included) comes out; with the names as written, every row of
 * -symbolize=none's. Checked live when Go is installed.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { flatCum } from '../../src/analysis/flat-cum.ts';
import type { FrameKeys } from '../../src/analysis/frame-keys.ts';
import { pprofShortName } from '../../src/analysis/short-names.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import type { Profile } from '../../src/model/profile.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseTopAll } from '../helpers/pprof-text.ts';

const dir = `${fixturesDir}profiles/generics/`;
const go = findGo();

/** Function keys by pprof's short name (Go's runtime/pprof writes system_name equal to name). */
function shortKeys(p: Profile): FrameKeys {
  const ids = new Map<string, number>();
  const keys: string[] = [];
  const frameKey = new Uint32Array(p.frames.length);
  p.frames.forEach((f, i) => {
    const k = pprofShortName(f.name, f.name);
    let id = ids.get(k);
    if (id === undefined) {
      id = keys.length;
      keys.push(k);
      ids.set(k, id);
    }
    frameKey[i] = id;
  });
  return { keys, frameKey };
}

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

  it('short names give go tool pprof’s default -top, row for row, names included', () => {
    const ref = parseTopAll(readFileSync(`${dir}cpu.default.pprof-top.txt`, 'utf8'));
    expect(ref.has('main.Total[go.shape.interface { Name ; Size int }]')).toBe(true);
    expect(rows(shortKeys(p))).toEqual(ref);
    if (go) expect(parseTopAll(pprofTop(false))).toEqual(ref);
  });

  it('the names as written give -symbolize=none’s', () => {
    const ref = parseTopAll(readFileSync(`${dir}cpu.none.pprof-top.txt`, 'utf8'));
    expect(ref.has('main.Total[go.shape.interface { Name() (string, error); Size() int }]')).toBe(true);
    expect(rows()).toEqual(ref);
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
});
