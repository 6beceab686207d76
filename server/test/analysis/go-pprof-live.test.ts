/**
 * Differential test against the installed `go tool pprof` itself (not stored answers): exact
 * flat/cum of every function, for -top, -diff_base and -normalize, on real profiles of the corpus
 * and of our own fixtures. Skipped, loudly, only when `go` is not installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { flatCum, total } from '../../src/analysis/flat-cum.ts';
import { diffProfiles } from '../../src/analysis/diff.ts';
import { findGo, fixturesDir, samplePath } from '../helpers/paths.ts';
import { syntheticProfilePath } from '../../../scripts/testdata/index.ts';
import { parseTopAll, parseTopShown } from '../helpers/pprof-text.ts';
import { type FrameFilters, filterProfile } from '../../src/analysis/filter.ts';
import { compileGoRegexp } from '../../src/analysis/go-regexp.ts';
import type { Profile } from '../../src/model/profile.ts';

const go = findGo();
const haveGo = go !== null;
if (!haveGo) console.warn('\n*** go is not installed: the live go tool pprof comparison is SKIPPED ***\n');

function pprofTop(args: string[]): Map<string, [number, number]> {
  return parseTopAll(pprofText(args));
}

function pprofText(args: string[]): string {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return r.stdout;
}

/** Every profile of the demo's first wrk run per stage (fixtures/demo/<stage>/run-1/, the stages of its manifest). */
function demoProfiles(): string[] {
  const dir = `${fixturesDir}demo/`;
  if (!existsSync(`${dir}manifest.json`)) return [];
  const out: string[] = [];
  const manifest = JSON.parse(readFileSync(`${dir}manifest.json`, 'utf8')) as { stages: { name: string }[] };
  for (const stage of manifest.stages) {
    const run = `${dir}${stage.name}/run-1/`;
    for (const f of readdirSync(run)) if (f.endsWith('.pb.gz')) out.push(run + f);
  }
  return out;
}

const files = [
  samplePath('pprof/go_httpserver_before_cpu.pb.gz'),
  samplePath('pprof/go_httpserver_after_allocs.pb.gz'),
  samplePath('pprof/go_bench_net_http_mutex.pb.gz'),
  samplePath('pprof/nodejs_wall.pb.gz'),
  samplePath('pprof/large/go_types_tests_cpu.pb.gz'),
  `${fixturesDir}profiles/bigvalues/big-values.pb.gz`,
  ...(haveGo ? [syntheticProfilePath()] : []),
  ...demoProfiles(),
];

describe.skipIf(!haveGo)('go tool pprof agrees with us, live', () => {
  for (const file of files) {
    it(`-top on ${file.split('/').slice(-3).join('/')}, every sample type`, () => {
      const p = parsePprof(readFileSync(file));
      p.sampleTypes.forEach((t, i) => {
        const ref = pprofTop([`-sample_index=${t.type}`, `-unit=${t.unit === 'count' ? 'minimum' : t.unit}`, file]);
        const ours = new Map(flatCum(p, i).map((r) => [r.name, [r.flat, r.cum] as [number, number]]));
        if (t.unit !== 'count') {
          expect(new Map([...ours].sort())).toEqual(new Map([...ref].sort()));
        } else {
          // count-valued types print without a unit suffix; same exact integers
          for (const [name, v] of ref) expect([name, ours.get(name)]).toEqual([name, v]);
        }
      });
      // go tool pprof reads the 1M-sample profile in about 10 s per sample type on an idle machine
    }, 600_000);
  }

  const pairs: [string, string][] = [
    ['go_httpserver_before_cpu', 'go_httpserver_after_cpu'],
    ['go_httpserver_before_allocs', 'go_httpserver_after_allocs'],
    ['go_httpserver_before_mutex', 'go_httpserver_after_mutex'],
  ];
  for (const [b, a] of pairs) {
    for (const normalize of [false, true]) {
      it(`${normalize ? '-normalize ' : ''}-diff_base ${b} → ${a}`, () => {
        const bf = samplePath(`pprof/${b}.pb.gz`);
        const af = samplePath(`pprof/${a}.pb.gz`);
        const base = parsePprof(readFileSync(bf));
        const after = parsePprof(readFileSync(af));
        const type = after.sampleTypes.find((t) => t.type === after.defaultSampleType)!;
        const ref = pprofTop([...(normalize ? ['-normalize'] : []), `-diff_base=${bf}`, `-unit=${type.unit}`, af]);
        const d = diffProfiles(base, after, { sampleType: type.type, mode: normalize ? 'normalize' : 'absolute' });
        const ours = new Map(
          d.rows
            .filter((r) => r.deltaFlat !== 0 || r.deltaCum !== 0)
            .map((r) => [r.name, [r.deltaFlat, r.deltaCum] as [number, number]]),
        );
        expect(new Map([...ours].sort())).toEqual(new Map([...ref].sort()));
      }, 120_000);
    }
  }
});

type FilterSpec = Partial<Record<keyof FrameFilters, string>>;

function compile(spec: FilterSpec): FrameFilters {
  const f: FrameFilters = {};
  for (const [k, v] of Object.entries(spec)) f[k as 'focus'] = compileGoRegexp(v);
  return f;
}

const flagsOf = (spec: FilterSpec) => Object.entries(spec).map(([k, v]) => `-${k}=${v}`);
const label = (spec: FilterSpec) => flagsOf(spec).join(' ');
const unitFlag = (p: Profile, i: number) =>
  `-unit=${p.sampleTypes[i]!.unit === 'count' ? 'minimum' : p.sampleTypes[i]!.unit}`;
const sumFlat = (rows: Map<string, [number, number]>) => [...rows.values()].reduce((a, [f]) => a + f, 0);

/**
 * Filters: every case names what its expression matches — a function name, a source file name, or
 * the file of a location's mapping (the binary) — the three things pprof matches a regex against.
 */
const demoCpu = `${fixturesDir}demo/baseline/run-1/cpu.pb.gz`;
const beforeCpu = samplePath('pprof/go_httpserver_before_cpu.pb.gz');
const afterAllocs = samplePath('pprof/go_httpserver_after_allocs.pb.gz');
const mutex = samplePath('pprof/go_bench_net_http_mutex.pb.gz');
const nodeWall = samplePath('pprof/nodejs_wall.pb.gz');
const filterCases: [string, FilterSpec][] = [
  [demoCpu, { focus: String.raw`encode\.go` }], // a file name (encoding/json's encode.go)
  [demoCpu, { focus: 'demo-service$' }], // the mapping's file: every sample
  [demoCpu, { focus: String.raw`^encoding/json\.Marshal$` }], // a function name
  [demoCpu, { ignore: String.raw`encode\.go` }],
  [demoCpu, { ignore: String.raw`^runtime\.(mallocgc|gcBgMarkWorker)$` }],
  [demoCpu, { hide: String.raw`^encoding/json\.` }], // flat moves to the callers
  [demoCpu, { hide: '/src/runtime/' }], // files of the runtime package
  [demoCpu, { hide: '^/tmp/.*demo-service$' }], // the mapping: every frame hidden, no sample left
  [demoCpu, { show: String.raw`^main\.|^net/http\.` }],
  [demoCpu, { show: String.raw`/server\.go$` }],
  [demoCpu, { show: 'demo-service' }], // the mapping: every frame stays
  [demoCpu, { focus: '(?i)HANDLER', hide: String.raw`^runtime\.` }], // Go's flag syntax
  [demoCpu, { focus: 'json', ignore: 'Marshal', show: 'json|main' }],
  [demoCpu, { focus: String.raw`\pL+\.go$`, hide: String.raw`\(\*` }],
  [demoCpu, { focus: '(a+)+b' }], // pathological for a backtracking engine
  [demoCpu, { hide: '([^/]*)*^z$' }],
  [beforeCpu, { focus: '^/opt/sample/' }], // the mapping
  [beforeCpu, { hide: String.raw`^runtime\.`, show: 'net/http|main' }],
  [beforeCpu, { ignore: 'syscall', hide: String.raw`\.s$` }], // assembly files
  [afterAllocs, { focus: 'json' }],
  [afterAllocs, { hide: 'runtime/malloc' }],
  [afterAllocs, { show: String.raw`\.go$` }],
  [mutex, { focus: String.raw`sync\.`, hide: 'runtime' }],
  [nodeWall, { focus: '^$' }], // the mapping's file is empty: every location matches
  [nodeWall, { show: 'node:' }],
  [nodeWall, { hide: String.raw`^\(anonymous\)$` }],
];

describe.skipIf(!haveGo)('filters agree with go tool pprof -focus/-ignore/-hide/-show, live', () => {
  const parsed = new Map<string, Profile>();
  const load = (f: string) => {
    const hit = parsed.get(f);
    if (hit) return hit;
    const p = parsePprof(readFileSync(f));
    parsed.set(f, p);
    return p;
  };
  for (const [file, spec] of filterCases) {
    it(`-top ${label(spec)} on ${file.split('/').slice(-2).join('/')}`, () => {
      const p = load(file);
      const i = p.sampleTypes.findIndex((t) => t.type === p.defaultSampleType);
      const text = pprofText([unitFlag(p, i), ...flagsOf(spec), file]);
      const ref = parseTopAll(text);
      const kept = filterProfile(p, compile(spec));
      const ours = new Map(flatCum(kept, i).map((r) => [r.name, [r.flat, r.cum] as [number, number]]));
      expect(total(kept, i)).toBe(parseTopShown(text));
      expect(total(kept, i)).toBe(sumFlat(ref));
      expect(new Map([...ours].sort())).toEqual(new Map([...ref].sort()));
    }, 120_000);
  }
  it("focus=encode\\.go keeps encoding/json's share of the demo baseline (a file-name match), not nothing", () => {
    const p = load(demoCpu);
    const cpu = p.sampleTypes.findIndex((t) => t.type === 'cpu');
    const kept = total(filterProfile(p, compile({ focus: String.raw`encode\.go` })), cpu);
    // the exact figure is held to go tool pprof's in the cases above; here: a real share
    expect(kept).toBeGreaterThan(0.05 * total(p, cpu));
    expect(kept).toBeLessThan(total(p, cpu));
  });

  const diffCases: [string, string, FilterSpec, boolean][] = [
    ['go_httpserver_before_cpu', 'go_httpserver_after_cpu', { focus: 'ServeHTTP' }, false],
    ['go_httpserver_before_cpu', 'go_httpserver_after_cpu', { hide: String.raw`^runtime\.` }, false],
    ['go_httpserver_before_cpu', 'go_httpserver_after_cpu', { show: String.raw`^main\.|server\.go$` }, false],
    ['go_httpserver_before_cpu', 'go_httpserver_after_cpu', { ignore: 'json', focus: '^/opt/' }, false],
    ['go_httpserver_before_cpu', 'go_httpserver_after_cpu', { focus: String.raw`^main\.` }, true],
    ['go_httpserver_before_allocs', 'go_httpserver_after_allocs', { hide: 'runtime/malloc' }, true],
  ];
  for (const [b, a, spec, normalize] of diffCases) {
    it(`${normalize ? '-normalize ' : ''}-diff_base ${b} → ${a} ${label(spec)}`, () => {
      const bf = samplePath(`pprof/${b}.pb.gz`);
      const af = samplePath(`pprof/${a}.pb.gz`);
      const base = load(bf);
      const after = load(af);
      const type = after.sampleTypes.find((t) => t.type === after.defaultSampleType)!;
      const text = pprofText([
        ...(normalize ? ['-normalize'] : []),
        `-diff_base=${bf}`,
        `-unit=${type.unit}`,
        ...flagsOf(spec),
        af,
      ]);
      const ref = parseTopAll(text);
      const f = compile(spec);
      const bi = base.sampleTypes.findIndex((t) => t.type === type.type);
      const ai = after.sampleTypes.findIndex((t) => t.type === type.type);
      const d = diffProfiles(filterProfile(base, f), filterProfile(after, f), {
        sampleType: type.type,
        mode: normalize ? 'normalize' : 'absolute',
        scaleTotals: { base: total(base, bi), target: total(after, ai) },
      });
      const ours = new Map(
        d.rows
          .filter((r) => r.deltaFlat !== 0 || r.deltaCum !== 0)
          .map((r) => [r.name, [r.deltaFlat, r.deltaCum] as [number, number]]),
      );
      expect(new Map([...ours].sort())).toEqual(new Map([...ref].sort()));
      expect(d.targetTotal - d.baseTotal).toBe(parseTopShown(text));
    }, 120_000);
  }
});
