/**
 * The Pyroscope importer's files read by go tool pprof itself: each file of a one-run import from the
 * stand-in querier (helpers/pyroscope-stand-in.ts: answers built with Pyroscope's API types from the
 * demo's pooled run-1..3 files) prints, for every sample type it holds, the rows and total go tool
 * pprof -top prints on the demo's own files (all three runs merged for the delta kinds, run-3's alone
 * for the heap and goroutine snapshots).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePprof } from '../../../src/ingest/pprof/index.ts';
import type { Fetcher } from '../../../src/services/profilers/guarded-fetch.ts';
import { importFromPyroscope } from '../../../src/services/profilers/import-pyroscope.ts';
import { findGo } from '../../helpers/paths.ts';
import { parseTopRows } from '../../helpers/pprof-text.ts';
import { DEMO_SELECTOR, PYROSCOPE_DIR, type StandIn, startPyroscopeStandIn } from '../../helpers/pyroscope-stand-in.ts';

const go = findGo();
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-pyroscope-'));
let pyro: StandIn;

/** A plain fetcher (the stand-in is the only host): POST with the Connect body, bytes back. */
const fetcher: Fetcher = async (url, post) => {
  const r = await fetch(url, {
    method: post ? 'POST' : 'GET',
    body: post?.body,
    headers: post ? { 'content-type': post.contentType } : {},
  });
  return { status: r.status, body: Buffer.from(await r.arrayBuffer()) };
};

beforeAll(async () => {
  pyro = await startPyroscopeStandIn();
});
afterAll(async () => {
  await pyro.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** [file kind, sample type, pprof flags, expected file] */
const CASES: [string, string, string[], string][] = [
  ['cpu', 'cpu', ['-unit=ns'], 'cpu.pprof-top.txt'],
  ['cpu', 'samples', [], 'samples.pprof-top.txt'],
  ['allocs', 'alloc_objects', [], 'alloc_objects.pprof-top.txt'],
  ['allocs', 'alloc_space', ['-unit=B'], 'alloc_space.pprof-top.txt'],
  ['mutex', 'contentions', [], 'mutex-contentions.pprof-top.txt'],
  ['mutex', 'delay', ['-unit=ns'], 'mutex-delay.pprof-top.txt'],
  ['block', 'contentions', [], 'block-contentions.pprof-top.txt'],
  ['block', 'delay', ['-unit=ns'], 'block-delay.pprof-top.txt'],
  ['heap', 'inuse_objects', [], 'inuse_objects.run-3.pprof-top.txt'],
  ['heap', 'inuse_space', ['-unit=B'], 'inuse_space.run-3.pprof-top.txt'],
  ['goroutine', 'goroutine', [], 'goroutine.run-3.pprof-top.txt'],
];

/** Rows sorted by name (functions of equal flat may print in either order), and the kept total. */
function table(text: string): { total: string; rows: [string, number, number][] } {
  const m = /^Showing nodes accounting for (.*)$/m.exec(text);
  return { total: m?.[1] ?? '', rows: parseTopRows(text).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)) };
}

describe('importFromPyroscope', () => {
  it('writes files go tool pprof reads as it reads the demo files, for every sample type', async () => {
    const out = await importFromPyroscope(fetcher, {
      url: new URL(`http://127.0.0.1:${pyro.port}`),
      selector: DEMO_SELECTOR,
      fromMs: Date.parse('2026-11-29T03:40:00Z'),
      toMs: Date.parse('2026-11-29T04:05:00Z'),
      runs: 1,
    });
    expect(out.files.map((f) => f.filename)).toEqual([
      'run-1-cpu.pb.gz',
      'run-1-allocs.pb.gz',
      'run-1-heap.pb.gz',
      'run-1-mutex.pb.gz',
      'run-1-block.pb.gz',
      'run-1-goroutine.pb.gz',
    ]);
    for (const f of out.files) writeFileSync(join(tmp, f.filename), f.bytes);
    // each file says what it is: its kind, Pyroscope's types joined into it, and how the window was read
    const file = (name: string) => parsePprof(gunzipSync(out.files.find((f) => f.filename === name)!.bytes), {});
    const allocs = file('run-1-allocs.pb.gz');
    expect(allocs.comments).toHaveLength(1);
    expect(allocs.comments[0]).toContain(
      'allocs (memory:alloc_objects:count:space:bytes + memory:alloc_space:bytes:space:bytes){service_name="demo-orders"}',
    );
    expect(allocs.comments[0]).toContain('stored as deltas');
    expect(allocs.durationNanos).toBe(25 * 60 * 1e9);
    const heap = file('run-1-heap.pb.gz');
    expect(heap.comments[0]).toContain('not merged: a snapshot');
    expect(heap.durationNanos).toBe(0);
    expect(heap.sampleTypes.map((t) => t.type)).toEqual(['inuse_objects', 'inuse_space']);
    if (!go) return;
    for (const [kind, type, flags, expectedFile] of CASES) {
      const r = spawnSync(
        go,
        [
          'tool',
          'pprof',
          '-top',
          '-nodecount=0',
          '-nodefraction=0',
          '-edgefraction=0',
          `-sample_index=${type}`,
          ...flags,
          join(tmp, `run-1-${kind}.pb.gz`),
        ],
        { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent', TZ: 'UTC' }, maxBuffer: 1 << 26 },
      );
      expect(r.status, r.stderr).toBe(0);
      const want = table(readFileSync(`${PYROSCOPE_DIR}expected/${expectedFile}`, 'utf8'));
      const got = table(r.stdout);
      expect(want.rows.length, expectedFile).toBeGreaterThan(0);
      expect(got.total, `${kind} ${type}`).toBe(want.total);
      expect(got.rows, `${kind} ${type}`).toEqual(want.rows);
    }
  });
});
