/**
 * The source view under hostile input, over a real socket: a profile of a few hundred bytes naming
 * lines 1 and 1,000,000 of a function, and a source archive of a few kilobytes whose file has a million
 * lines (one of them 1.6 MB long). The view answers like `go tool pprof -list`: the sampled lines with a
 * few lines of context, each stretch between them one counted `elided` row, texts cut at
 * SOURCE_VIEW_MAX_LINE_CHARS, the alignment of the two versions made over the shown lines only; a
 * function with more sampled lines than SOURCE_VIEW_MAX_ROWS is cut there, said so.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { addStage, createComparison, testApp } from '../helpers/app.ts';
import { encodePprof } from '../helpers/pprof-encode.ts';

const tmp = mkdtempSync(join(tmpdir(), 'stagediff-source-bounds-'));
const FILE = '/build/app/main.go';
const LONG = `var long = "${'x'.repeat(1_600_000)}"`;
let app: StagediffApp;
let url: string;
let c: { id: string; auth: Record<string, string> };

/** A CPU profile of main.hot with one sample on each of `lines` (10 ms each, 20 ms on the last). */
function profile(lines: number[]): Uint8Array {
  return encodePprof({
    sampleTypes: [
      ['samples', 'count'],
      ['cpu', 'nanoseconds'],
    ],
    locations: lines.map((line) => ({ lines: [{ fn: 'main.hot', file: FILE, line }] })),
    samples: lines.map((_, i) => ({ stack: [i], values: [1, i === lines.length - 1 ? 20_000_000 : 10_000_000] })),
  });
}

/** A tar.gz of go.mod and main.go of `n` lines: `package main`, the long line, then empty lines (`extra` after line 2). */
function archive(name: string, n: number, extra = 0): Buffer {
  const dir = mkdtempSync(join(tmp, `${name}-`));
  writeFileSync(join(dir, 'go.mod'), 'module example.com/app\n\ngo 1.26\n');
  const text = `package main\n${LONG}\n${'//\n'.repeat(extra)}${'\n'.repeat(n - 2)}`;
  writeFileSync(join(dir, 'main.go'), text);
  execFileSync('tar', ['-czf', join(dir, 'src.tar.gz'), '-C', dir, 'go.mod', 'main.go']);
  return readFileSync(join(dir, 'src.tar.gz'));
}

async function call(method: string, path: string, body?: Uint8Array, type?: string) {
  return fetch(`${url}${path}`, {
    method,
    headers: { ...c.auth, ...(type ? { 'content-type': type } : {}) },
    ...(body ? { body: new Blob([body as Uint8Array<ArrayBuffer>]) } : {}),
  });
}

async function stage(name: string, prof: Uint8Array, src: Buffer | null): Promise<string> {
  const id = await addStage(app, c.id, c.auth, name);
  const form = new FormData();
  form.append('file', new Blob([prof as Uint8Array<ArrayBuffer>]), 'cpu.pb');
  const up = await fetch(`${url}/api/comparisons/${c.id}/stages/${id}/artifacts`, {
    method: 'POST',
    headers: c.auth,
    body: form,
  });
  expect(up.status, await up.text()).toBe(200);
  if (src) {
    const r = await call(
      'PUT',
      `/api/comparisons/${c.id}/stages/${id}/sources?filename=src.tar.gz`,
      src,
      'application/octet-stream',
    );
    expect(r.status, await r.text()).toBe(200);
  }
  return id;
}

beforeAll(async () => {
  app = await testApp({ MAX_SOURCE_FILE_BYTES: String(4 * 1024 * 1024), SOURCE_VIEW_MAX_ROWS: '50' });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  c = await createComparison(app, 'source bounds');
  const hostile = profile([1, 2, 1_000_000]);
  expect(hostile.length).toBeLessThan(400);
  const small = archive('v1', 1_000_000);
  expect(small.length).toBeLessThan(16 * 1024);
  await stage('v1', hostile, small);
  // v2: 50,000 lines inserted below line 2, so its line 1,000,000 is v1's line 950,000 (and v1's
  // 1,000,000 is gone): a changed middle far larger than SOURCE_VIEW_MAX_ALIGN_LINES.
  await stage('v2', hostile, archive('v2', 1_000_000, 50_000));
  await stage('many', profile(Array.from({ length: 200 }, (_, i) => 10 + 2 * i)), null);
});
afterAll(async () => {
  await app.close();
  rmSync(tmp, { recursive: true, force: true });
});

type Row = {
  change: string;
  base: { line: number; flat: number; cum: number } | null;
  target: { line: number; flat: number; cum: number } | null;
  baseText: string | null;
  targetText: string | null;
  elided?: { base: number; target: number };
  clipped?: boolean;
};

async function view(base: string, target: string) {
  const t0 = performance.now();
  const r = await fetch(
    `${url}/api/comparisons/${c.id}/source?base=${base}&target=${target}&fn=main.hot&mode=absolute&sampleType=cpu`,
  );
  const body = await r.text();
  return { status: r.status, body, ms: performance.now() - t0, v: r.status === 200 ? JSON.parse(body) : null };
}

describe('the source view of a million-line file', () => {
  it('answers the sampled lines with context and one counted gap, bounded, quickly', async () => {
    const { status, body, ms, v } = await view('v1', 'v1');
    expect(status, body).toBe(200);
    // Unbounded, this answer was 13.8 MB after 70 s; a hang would run into the analysis deadline.
    expect(body.length).toBeLessThan(64 * 1024);
    expect(ms).toBeLessThan(20_000);
    const rows = v.rows as Row[];
    expect(v.aligned).toBe(true);
    expect(rows.map((r) => (r.change === 'elided' ? `…${r.elided!.base}` : r.base!.line))).toEqual([
      1,
      2,
      3,
      4,
      5,
      `…${999_991}`,
      999_997,
      999_998,
      999_999,
      1_000_000,
    ]);
    const at = (line: number) => rows.find((r) => r.base?.line === line)!;
    expect(at(1).base).toEqual({ line: 1, flat: 10_000_000, cum: 10_000_000 });
    expect(at(1_000_000).target).toEqual({ line: 1_000_000, flat: 20_000_000, cum: 20_000_000 });
    expect(at(3).base).toEqual({ line: 3, flat: 0, cum: 0 });
    // The 1.6 MB line is cut at SOURCE_VIEW_MAX_LINE_CHARS (400), said so.
    expect(at(2).baseText).toBe(LONG.slice(0, 400));
    expect(at(2).clipped).toBe(true);
    expect(v.highlightChars).toBe(400);
    expect(v.limited).toBeNull();
  });

  it('aligns two versions over the shown lines only: a 50,000-line change between them is counted, not walked', async () => {
    const { status, body, v } = await view('v1', 'v2');
    expect(status, body).toBe(200);
    expect(body.length).toBeLessThan(64 * 1024);
    const rows = v.rows as Row[];
    // Rows keep the order of both files, and each version's lines add up: shown + elided = the file.
    let a = 0;
    let b = 0;
    for (const r of rows) {
      if (r.change === 'elided') {
        a += r.elided!.base;
        b += r.elided!.target;
        continue;
      }
      if (r.base) expect(r.base.line).toBe(++a);
      if (r.target) expect(r.target.line).toBe(++b);
    }
    expect(a).toBe(1_000_000);
    expect(b).toBe(1_050_000);
    // The head pairs up; each version keeps its own sampled last line with its own figure.
    expect(rows[0]).toMatchObject({ change: 'same', base: { line: 1, flat: 10_000_000 }, target: { line: 1 } });
    const last = rows.filter((r) => r.target?.line === 1_000_000);
    expect(last).toHaveLength(1);
    expect(last[0]!.target).toEqual({ line: 1_000_000, flat: 20_000_000, cum: 20_000_000 });
    expect(rows.find((r) => r.base?.line === 1_000_000)!.base).toEqual({
      line: 1_000_000,
      flat: 20_000_000,
      cum: 20_000_000,
    });
    expect(rows.filter((r) => r.change !== 'elided').length).toBeLessThan(40);
  });

  it('a function with more sampled lines than SOURCE_VIEW_MAX_ROWS: the first rows, the rest counted, said so', async () => {
    const { status, body, v } = await view('many', 'many');
    expect(status, body).toBe(200);
    expect(v.aligned).toBe(false);
    const rows = v.rows as Row[];
    expect(rows).toHaveLength(51);
    expect(rows.slice(0, 50).map((r) => r.base!.line)).toEqual(Array.from({ length: 50 }, (_, i) => 10 + 2 * i));
    for (const r of rows.slice(0, 50)) expect(r.base!.flat).toBe(10_000_000);
    expect(rows[50]).toMatchObject({ change: 'elided', elided: { base: 150, target: 150 } });
    expect(v.limited).toMatch(/^150 sampled lines left out: .*SOURCE_VIEW_MAX_ROWS \(50\)/);
  });
});
