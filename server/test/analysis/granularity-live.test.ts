/**
 * Granularity against `go tool pprof` itself: `-top -lines` and `-top -files` on every profile of
 * fixtures/reference/pprof (the large ones included), every sample type, every row — and
 * `-diff_base` at both granularities on the before/after pairs. The answers are carried in
 * expected/granularity/ (made by scripts/testdata/pprof-granularity-answers.sh), so a clone without
 * Go checks them too; with Go installed, each carried answer is first checked against a live run.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { flatCum } from '../../src/analysis/flat-cum.ts';
import { diffProfiles } from '../../src/analysis/diff.ts';
import { type Granularity, granularityKeys, keysOf } from '../../src/analysis/granularity.ts';
import { findGo, fixturesDir, samplePath } from '../helpers/paths.ts';
import { parseTopRows } from '../helpers/pprof-text.ts';

const go = findGo();
if (!go) console.warn('\n*** go is not installed: -lines/-files are checked against the carried answers only ***\n');

function livePprof(args: string[]): string {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...args],
    { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' }, maxBuffer: 1 << 28 },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return r.stdout;
}

const sorted = (rows: [string, number, number][]) =>
  [...rows].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || a[2] - b[2]));

/**
 * The carried answer's rows, checked against go tool pprof when Go is installed (as rows: pprof
 * prints rows of equal flat in no fixed order, so the text itself may differ from run to run).
 */
function answer(file: string, args: string[]): [string, number, number][] {
  const rows = parseTopRows(gunzipSync(readFileSync(file)).toString('utf8'));
  if (go) expect(sorted(parseTopRows(livePprof(args))), `${file} against go tool pprof now`).toEqual(sorted(rows));
  return rows;
}

/** Our rows with what file nodes add to pprof's name dropped (pprof prints the bare file name). */
function bare(rows: { name: string; flat: number; cum: number }[], g: Granularity): [string, number, number][] {
  const name = (n: string) => (g === 'files' ? n.replace(/( \(function at line \d+\))?( \[[^\]]*\])?$/, '') : n);
  return rows.map((r) => [name(r.name), r.flat, r.cum]);
}

const dir = samplePath('pprof/');
const profiles = ['', 'large/'].flatMap((sub) =>
  readdirSync(dir + sub)
    .filter((f) => f.endsWith('.pb.gz'))
    .map((f) => ({ sub, name: f.slice(0, -'.pb.gz'.length) })),
);
const unitFlag = (unit: string) => `-unit=${unit === 'count' ? 'minimum' : unit}`;
let checkedRows = 0;

describe('-lines and -files agree with go tool pprof, every row', () => {
  it('covers every profile of the corpus', () => expect(profiles.length).toBe(36));
  for (const { sub, name } of profiles) {
    it(`${sub}${name}: every sample type, -lines and -files`, () => {
      const file = `${dir}${sub}${name}.pb.gz`;
      const p = parsePprof(readFileSync(file));
      for (const g of ['lines', 'files'] as Granularity[])
        p.sampleTypes.forEach((t, i) => {
          const ref = answer(`${dir}${sub}expected/granularity/${name}.${t.type}.${g}.txt.gz`, [
            `-sample_index=${t.type}`,
            unitFlag(t.unit),
            `-${g}`,
            file,
          ]);
          const ours = bare(flatCum(p, i, undefined, granularityKeys(p, g)), g);
          expect([g, t.type, sorted(ours)]).toEqual([g, t.type, sorted(ref)]);
          checkedRows += ref.length;
        });
    }, 600_000);
  }

  const pairs = ['cpu', 'allocs', 'heap', 'mutex', 'block', 'goroutine'];
  for (const kind of pairs)
    for (const g of ['lines', 'files'] as Granularity[])
      it(`-diff_base -${g}: go_httpserver_before_${kind} → after, every sample type`, () => {
        const bf = samplePath(`pprof/go_httpserver_before_${kind}.pb.gz`);
        const af = samplePath(`pprof/go_httpserver_after_${kind}.pb.gz`);
        const base = parsePprof(readFileSync(bf));
        const after = parsePprof(readFileSync(af));
        for (const t of after.sampleTypes) {
          const ref = answer(`${dir}expected/granularity/diff/go_httpserver_${kind}.${t.type}.${g}.diff_base.txt.gz`, [
            `-diff_base=${bf}`,
            `-sample_index=${t.type}`,
            unitFlag(t.unit),
            `-${g}`,
            af,
          ]);
          const d = diffProfiles(base, after, { sampleType: t.type, mode: 'absolute', keys: keysOf(g), tree: false });
          const ours = bare(
            d.rows
              .filter((r) => r.deltaFlat !== 0 || r.deltaCum !== 0)
              .map((r) => ({ name: r.name, flat: r.deltaFlat, cum: r.deltaCum })),
            g,
          );
          expect([g, t.type, sorted(ours)]).toEqual([g, t.type, sorted(ref)]);
          checkedRows += ref.length;
        }
      }, 120_000);

  it('-diff_base -files of two go test -cpuprofile runs whose test binaries ran from different paths: row for row', () => {
    // fixtures/profiles/files-diff: pprof keys a file node by its binary's full path, so a file of the
    // base and the same file of the target are two rows, not one netted row
    const fd = `${fixturesDir}profiles/files-diff/`;
    const base = parsePprof(readFileSync(`${fd}cpu-1.pb.gz`));
    const target = parsePprof(readFileSync(`${fd}cpu-2.pb.gz`));
    expect(base.frames.find((f) => f.mapping?.endsWith('.test'))!.mapping).not.toBe(
      target.frames.find((f) => f.mapping?.endsWith('.test'))!.mapping,
    );
    for (const t of target.sampleTypes) {
      const text = readFileSync(`${fd}${t.type}.files.diff_base.txt`, 'utf8');
      const ref = parseTopRows(text);
      if (go)
        expect(
          sorted(
            parseTopRows(
              livePprof([
                `-diff_base=${fd}cpu-1.pb.gz`,
                `-sample_index=${t.type}`,
                unitFlag(t.unit),
                '-files',
                `${fd}cpu-2.pb.gz`,
              ]),
            ),
          ),
        ).toEqual(sorted(ref));
      const d = diffProfiles(base, target, {
        sampleType: t.type,
        mode: 'absolute',
        keys: keysOf('files'),
        tree: false,
      });
      const ours = bare(
        d.rows
          .filter((r) => r.deltaFlat !== 0 || r.deltaCum !== 0)
          .map((r) => ({ name: r.name, flat: r.deltaFlat, cum: r.deltaCum })),
        'files',
      );
      expect([t.type, ours.length]).toEqual([t.type, ref.length]);
      expect([t.type, sorted(ours)]).toEqual([t.type, sorted(ref)]);
    }
  });

  it('checked rows', () => {
    expect(checkedRows).toBeGreaterThan(100_000);
    console.log(`granularity: ${checkedRows} pprof rows checked${go ? ' (answers checked live)' : ''}`);
  });
});
