/**
 * Differential test against the installed `go tool pprof` itself (not stored answers): exact
 * flat/cum of every function, for -top, -diff_base and -normalize, on real profiles of the corpus
 * and of our own fixtures. Skipped, loudly, only when `go` is not installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { flatCum } from '../../src/analysis/flat-cum.ts';
import { diffProfiles } from '../../src/analysis/diff.ts';
import { findGo, fixturesDir, samplePath } from '../helpers/paths.ts';
import { syntheticProfilePath } from '../../../scripts/testdata/index.ts';
import { parseTopAll } from '../helpers/pprof-text.ts';

const go = findGo();
const haveGo = go !== null;
if (!haveGo) console.warn('\n*** go is not installed: the live go tool pprof comparison is SKIPPED ***\n');

function pprofTop(args: string[]): Map<string, [number, number]> {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-symbolize=none', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...args],
    {
      encoding: 'utf8',
      env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' },
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return parseTopAll(r.stdout);
}

function demoProfiles(): string[] {
  const dir = `${fixturesDir}demo/`;
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const stage of readdirSync(dir, { withFileTypes: true })) {
    if (!stage.isDirectory()) continue;
    for (const f of readdirSync(dir + stage.name)) if (f.endsWith('.pb.gz')) out.push(`${dir}${stage.name}/${f}`);
  }
  return out;
}

const files = [
  samplePath('pprof/go_httpserver_before_cpu.pb.gz'),
  samplePath('pprof/go_httpserver_after_allocs.pb.gz'),
  samplePath('pprof/go_bench_net_http_mutex.pb.gz'),
  samplePath('pprof/nodejs_wall.pb.gz'),
  samplePath('pprof/large/go_types_tests_cpu.pb.gz'),
  ...(haveGo ? [syntheticProfilePath()] : []),
  ...demoProfiles(),
];

describe.skipIf(!haveGo)('go tool pprof agrees with us, live', () => {
  for (const file of files) {
    it(`-top on ${file.split('/').slice(-2).join('/')}, every sample type`, () => {
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
