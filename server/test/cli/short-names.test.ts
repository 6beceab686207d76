/**
 * The CLI names functions as `go tool pprof` prints them by default (a Go generic's `go.shape`
 * argument lists dropped) and keeps the names as written in its JSON (`fullNames`), on a real profile
 * of generic code (fixtures/profiles/generics, with pprof's recorded default -top).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runCliSync } from '../helpers/cli.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { spawnSync } from 'node:child_process';
import { parseTopAll } from '../helpers/pprof-text.ts';

const dir = `${fixturesDir}profiles/generics/`;
const go = findGo();
const short = 'main.Total[go.shape.interface { Name ; Size int }]';
const full = 'main.Total[go.shape.interface { Name() (string, error); Size() int }]';

describe('stagediff inspect/diff name functions as go tool pprof does by default', () => {
  it('inspect --json: every row of pprof’s default -top, names included, and the full names beside', () => {
    const r = runCliSync('inspect', `${dir}cpu.pb.gz`, '--json', '--top', '0', '--sample-type', 'cpu');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout) as {
      top: { name: string; flat: number; cum: number }[];
      fullNames?: Record<string, string[]>;
    };
    const ref = parseTopAll(readFileSync(`${dir}cpu.default.pprof-top.txt`, 'utf8'));
    expect(new Map(o.top.map((x) => [x.name, [x.flat, x.cum]]))).toEqual(ref);
    expect(o.fullNames?.[short]).toEqual([full]);
    // only shortened names are listed
    for (const [k, v] of Object.entries(o.fullNames ?? {})) expect(v).not.toContain(k);
  });

  it('inspect prints the short name; --focus matches it as pprof’s -focus does', () => {
    const text = runCliSync('inspect', `${dir}cpu.pb.gz`, '--top', '3');
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain(short);
    expect(text.stdout).not.toContain(full);
    // pprof matches -focus against the name it shows: "Name\(\)" is in the full name only
    const none = runCliSync('inspect', `${dir}cpu.pb.gz`, '--json', '--focus', String.raw`Name\(\)`);
    expect(none.status, none.stderr).toBe(0);
    expect((JSON.parse(none.stdout) as { top: unknown[] }).top).toEqual([]);
    const some = runCliSync('inspect', `${dir}cpu.pb.gz`, '--json', '--focus', String.raw`Name ; Size`);
    expect((JSON.parse(some.stdout) as { top: unknown[] }).top.length).toBeGreaterThan(0);
    if (go) {
      const pprof = (focus: string) =>
        spawnSync(go, ['tool', 'pprof', '-top', '-nodecount=0', '-unit=ns', `-focus=${focus}`, `${dir}cpu.pb.gz`], {
          encoding: 'utf8',
          env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' },
        });
      expect(parseTopAll(pprof(String.raw`Name\(\)`).stdout).size).toBe(0);
      expect(parseTopAll(pprof(String.raw`Name ; Size`).stdout).size).toBe(
        (
          JSON.parse(
            runCliSync('inspect', `${dir}cpu.pb.gz`, '--json', '--top', '0', '--focus', 'Name ; Size').stdout,
          ) as { top: unknown[] }
        ).top.length,
      );
    }
  });

  it('diff --json lists the full names of its shortened rows (two demo runs of generic JSON code)', () => {
    const run = (k: number) => `${fixturesDir}demo/baseline/run-${k}/cpu.pb.gz`;
    const r = runCliSync('diff', run(2), run(3), '--json', '--top', '0');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout) as { top: { name: string }[]; fullNames?: Record<string, string[]> };
    const names = new Set(o.top.map((x) => x.name));
    const listed = Object.keys(o.fullNames ?? {});
    expect(listed.length).toBeGreaterThan(0);
    for (const n of listed) {
      expect(names.has(n)).toBe(true);
      expect(n).not.toContain('(');
      expect(o.fullNames![n]!.every((f) => f.includes('('))).toBe(true);
    }
  });
});
