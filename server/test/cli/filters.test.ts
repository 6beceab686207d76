/**
 * `stagediff inspect|diff --focus --ignore --hide --show`, run as a user runs them, against
 * `go tool pprof` with the same flags on the demo's profiles (the comparison is skipped, loudly,
 * only when `go` is not installed).
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCliSync } from '../helpers/cli.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseTopAll } from '../helpers/pprof-text.ts';

const go = findGo();
const haveGo = go !== null;
if (!haveGo) console.warn('\n*** go is not installed: the CLI filter comparison with go tool pprof is SKIPPED ***\n');

function pprofTop(args: string[]): Map<string, [number, number]> {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...args],
    { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' } },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return parseTopAll(r.stdout);
}

/** What a filtered `go tool pprof -top -nodefraction=0` keeps: its "Showing nodes accounting for N" figure. */
function pprofKept(args: string[]): number {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...args],
    { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' } },
  );
  const m = /Showing nodes accounting for (-?\d+)ns/.exec(r.stdout);
  if (r.status !== 0 || !m) throw new Error(`go tool pprof failed: ${r.stderr}${r.stdout.slice(0, 400)}`);
  return Number(m[1]);
}

const baseline = `${fixturesDir}demo/baseline/run-1/cpu.pb.gz`;
const fastJson = `${fixturesDir}demo/fast-json/run-1/cpu.pb.gz`;
type Row = { name: string; flat: number; cum: number };
type DiffRow = { name: string; deltaFlat: number; deltaCum: number };

describe('stagediff inspect/diff with pprof filters', () => {
  it('inspect --focus on a file name keeps what go tool pprof -focus keeps (encoding/json in the demo baseline)', () => {
    const r = runCliSync('inspect', baseline, '--focus', String.raw`encode\.go`, '--json', '--top', '0');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    const all = JSON.parse(runCliSync('inspect', baseline, '--json').stdout);
    // encoding/json's encode.go is a real share of the baseline's CPU: neither nothing nor everything
    expect(o.totals.cpu).toBeGreaterThan(0.05 * all.totals.cpu);
    expect(o.totals.cpu).toBeLessThan(all.totals.cpu);
    expect(o.filters).toEqual({ focus: String.raw`encode\.go` });
    if (!haveGo) return;
    expect(o.totals.cpu).toBe(pprofKept(['-unit=nanoseconds', String.raw`-focus=encode\.go`, baseline]));
    const ref = pprofTop(['-unit=nanoseconds', String.raw`-focus=encode\.go`, baseline]);
    expect(new Map((o.top as Row[]).map((x) => [x.name, [x.flat, x.cum]]))).toEqual(ref);
  });

  it('a repeated flag is its values joined with |', () => {
    const a = JSON.parse(runCliSync('inspect', baseline, '--json', '--show', '^main', '--show', 'net/http').stdout);
    const b = JSON.parse(runCliSync('inspect', baseline, '--json', '--show', '^main|net/http').stdout);
    expect(a.filters).toEqual({ show: '^main|net/http' });
    expect(a.top).toEqual(b.top);
    expect(a.totals).toEqual(b.totals);
  });

  it.skipIf(!haveGo)('diff --hide --ignore equals go tool pprof -diff_base with the same filters', () => {
    const r = runCliSync(
      'diff',
      baseline,
      fastJson,
      '--hide',
      String.raw`^runtime\.`,
      '--ignore',
      'gcBgMark',
      '--json',
      '--top',
      '0',
    );
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    const ref = pprofTop([
      '-unit=nanoseconds',
      `-diff_base=${baseline}`,
      String.raw`-hide=^runtime\.`,
      '-ignore=gcBgMark',
      fastJson,
    ]);
    expect(ref.size).toBeGreaterThan(10);
    expect(new Map((o.top as DiffRow[]).map((x) => [x.name, [x.deltaFlat, x.deltaCum]]))).toEqual(ref);
  });

  it('syntax Go rejects is a usage error naming the flag and the problem', () => {
    for (const [flag, re, problem] of [
      ['--focus', '(?=json)', 'invalid or unsupported Perl syntax: `(?=`'],
      ['--hide', String.raw`(a)\1`, 'invalid escape sequence: `\\1`'],
      ['--show', 'a++', 'invalid nested repetition operator: `++`'],
    ] as const) {
      const r = runCliSync('inspect', baseline, flag, re);
      expect(r.status).toBe(2);
      expect(r.stderr.split('\n')[0]).toBe(
        `stagediff: ${flag} is not a valid Go regular expression: error parsing regexp: ${problem}`,
      );
    }
  });
});
