/// <reference types="node" />
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  asCaptureRecord,
  captureFiles,
  isSourceArchiveName,
  pickedRoot,
  planCapture,
  stageFileName,
} from './capture-folder.ts';

// A stage folder of the demo (fixtures/demo/baseline): six `stagediff capture --out run-K` folders of one
// wrk run each, and one of a vegeta run at a fixed rate, as a person would pick the stage's folder.
const stageDir = new URL('../../../fixtures/demo/baseline/', import.meta.url);
const have = existsSync(stageDir);

function pickFolder(): { path: string; size: number }[] {
  return readdirSync(stageDir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const rel = `${e.parentPath.slice(stageDir.pathname.length)}/${e.name}`.replace(/^\/+/, '');
      return { path: `baseline/${rel}`, size: statSync(new URL(rel, stageDir)).size };
    })
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}

function records(picked: { path: string }[]) {
  return captureFiles(picked).map(({ picked: p, dir }) => {
    const record = asCaptureRecord(
      JSON.parse(readFileSync(new URL(p.path.slice('baseline/'.length), stageDir), 'utf8')),
    );
    if (!record) throw new Error(`${p.path}: not a capture record`);
    return { dir, record };
  });
}

describe('names of picked files', () => {
  it('are paths below the folder picked, "/" as "-"', () => {
    expect(pickedRoot(['out/capture.json', 'out/run-1/cpu.pb.gz'])).toBe('out/');
    expect(pickedRoot(['capture.json', 'cpu.pb.gz'])).toBe('');
    expect(pickedRoot(['a/x', 'b/y'])).toBe('');
    expect(stageFileName('out/run-3/cpu.pb.gz', 'out/')).toBe('run-3-cpu.pb.gz');
    expect(stageFileName('cpu.pb.gz', '')).toBe('cpu.pb.gz');
  });
  it('a JSON file that is not a capture record is not taken for one', () => {
    expect(asCaptureRecord({ schema: 'stagediff-capture/2', runs: [], load: {} })).toBe(null);
    expect(asCaptureRecord({ schema: 'stagediff-capture/1', runs: [{}], load: { kind: 'command' } })).toBe(null);
    expect(asCaptureRecord([1, 2])).toBe(null);
  });
});

describe.skipIf(!have)('a folder of capture records', () => {
  it('uploads what --server would, each file labelled with its run of the same load', () => {
    const picked = pickFolder();
    const found = records(picked);
    expect(found).toHaveLength(7);
    const plan = planCapture(picked, found);
    // Every file a record lists as a load test or a profile, named as the demo seed names it.
    const wrk = plan.files.filter((f) => f.run?.startsWith('wrk '));
    expect(new Set(wrk.map((f) => f.run))).toEqual(new Set([1, 2, 3, 4, 5, 6].map((k) => `wrk run ${k} of 6`)));
    // The records were captured in folder order, so run K of the six is the folder run-K.
    for (const f of wrk) expect(f.name.startsWith(`run-${f.run?.match(/run (\d)/)?.[1]}-`)).toBe(true);
    expect(
      wrk
        .filter((f) => f.run === 'wrk run 3 of 6')
        .map((f) => f.name)
        .sort(),
    ).toEqual(
      ['allocs', 'block', 'cpu', 'goroutine', 'heap', 'mutex']
        .map((p) => `run-3-${p}.pb.gz`)
        .concat('run-3-metrics.json', 'run-3-trace.out', 'run-3-wrk.txt')
        .sort(),
    );
    expect(plan.files.filter((f) => f.run === 'vegeta run 1 of 1').map((f) => f.name)).toEqual([
      'fixed-rate-vegeta.jsonl',
    ]);
    expect(plan.files).toHaveLength(6 * 9 + 1);
    expect(new Set(plan.files.map((f) => f.name)).size).toBe(plan.files.length);
    // The stage's sources: the largest of the runs' archives (what the demo's seed stores too).
    const archives = pickFolder().filter((p) => p.path.endsWith('/sources.tar.gz'));
    expect(archives).toHaveLength(6);
    const largest = archives.reduce((a, b) => (b.size > a.size ? b : a));
    expect(plan.sources?.path).toBe(largest.path);
    // The records themselves, vegeta's binary output and the other runs' sources stay out, and are said to.
    expect(plan.left.sort()).toEqual(
      [
        'fixed-rate-capture.json',
        'fixed-rate-vegeta.bin',
        ...[1, 2, 3, 4, 5, 6].map((k) => `run-${k}-capture.json`),
        ...archives.filter((a) => a !== largest).map((a) => a.path.slice('baseline/'.length).replaceAll('/', '-')),
      ].sort(),
    );
    expect(plan.missing).toEqual([]);
  });

  it('names a file a record lists that was not picked, with its run', () => {
    const picked = pickFolder().filter((p) => p.path !== 'baseline/run-2/cpu.pb.gz');
    const plan = planCapture(picked, records(picked));
    expect(plan.missing).toEqual(['run-2-cpu.pb.gz (wrk run 2 of 6)']);
  });

  it('one capture of one load reads "run 1 of 1" without the tool', () => {
    const picked = pickFolder()
      .filter((p) => p.path.startsWith('baseline/run-4/'))
      .map((p) => ({ path: p.path.replace('baseline/', '') }));
    const found = captureFiles(picked).map(({ dir }) => {
      const record = asCaptureRecord(JSON.parse(readFileSync(new URL('run-4/capture.json', stageDir), 'utf8')));
      return { dir, record: record! };
    });
    const plan = planCapture(picked, found);
    expect(plan.files.map((f) => f.run)).toEqual(Array(9).fill('run 1 of 1'));
    expect(plan.sources?.path).toBe('run-4/sources.tar.gz');
    expect(plan.files.map((f) => f.name)).toContain('wrk.txt');
  });
});

describe('a source archive among dropped files', () => {
  it('is told by its name; profiles and load-test outputs are not archives', () => {
    // every file the demo's stage folder holds: only the sources.tar.gz of each run is an archive
    const names = have ? pickFolder().map((p) => p.path) : [];
    expect(names.filter(isSourceArchiveName).every((n) => n.endsWith('/sources.tar.gz'))).toBe(true);
    if (have) expect(names.filter(isSourceArchiveName).length).toBeGreaterThan(0);
    for (const n of ['src.zip', 'svc/sources.tar.gz', 'app.TGZ']) expect(isSourceArchiveName(n)).toBe(true);
    for (const n of ['cpu.pb.gz', 'wrk.txt', 'trace.out', 'results.bin.gz', 'zip.txt'])
      expect(isSourceArchiveName(n)).toBe(false);
  });
});
