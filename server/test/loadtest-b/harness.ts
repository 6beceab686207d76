/**
 * Test helpers for the group-B importers: detection without the file name, parsing a real file
 * through the streaming source, and checking a run against an entry of
 * ../shared/samples/loadtests/expected.json (see EXPECTED.md there).
 */
import { openSync, readSync, closeSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { importersB } from '../../src/ingest/loadtest/group-b.ts';
import type { LoadTestImporter } from '../../src/ingest/loadtest/types.ts';
import { HEAD_BYTES } from '../../src/ingest/loadtest/types.ts';
import { fileSource } from '../../src/ingest/source.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';

export const SAMPLES = new URL('../../../../shared/samples/loadtests/', import.meta.url);

export function samplePath(rel: string): string {
  return fileURLToPath(new URL(rel, SAMPLES));
}

export interface Expected {
  format?: string;
  formatAlternatives?: string[];
  expectError?: boolean;
  acceptError?: boolean;
  mayBeUnsupported?: boolean;
  requests?: number;
  durationSeconds?: number;
  rps?: number;
  errors?: number;
  non2xx?: number;
  transportErrors?: number;
  latencyMs?: Record<string, number>;
  alternatives?: Record<string, number[]>;
  bounds?: Record<string, [number, number]>;
  hasTimeline?: boolean;
  hasDistribution?: boolean;
  distributionPrinted?: { percentile: number; ms: number }[];
  tolerance?: number;
}

export function loadExpected(): Record<string, Expected> {
  return JSON.parse(readFileSync(new URL('expected.json', SAMPLES), 'utf8')) as Record<string, Expected>;
}

export function readHead(path: string): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** The importer with the highest confidence for a file, judged by content only. */
export function detectB(path: string): { importer: LoadTestImporter; score: number } | null {
  const head = readHead(path);
  let best: { importer: LoadTestImporter; score: number } | null = null;
  for (const imp of importersB) {
    const score = imp.detect(head);
    expect(score).toBeGreaterThanOrEqual(0);
    expect(score).toBeLessThanOrEqual(1);
    if (score > 0 && (!best || score > best.score)) best = { importer: imp, score };
  }
  return best;
}

export async function parseFile(path: string): Promise<LoadTestRun> {
  const d = detectB(path);
  if (!d) throw new Error(`no group-B importer detects ${path}`);
  return d.importer.parse(fileSource(path));
}

function close(actual: number | null | undefined, expected: number, tol: number, what: string): void {
  expect(actual, `${what}: missing`).not.toBeNull();
  expect(actual, `${what}: missing`).not.toBeUndefined();
  if (expected === 0) {
    expect(actual, what).toBe(0);
    return;
  }
  const rel = Math.abs((actual as number) - expected) / Math.abs(expected);
  expect(rel, `${what}: got ${actual}, expected ${expected} (±${tol * 100}%)`).toBeLessThanOrEqual(tol);
}

function within(actual: number | null | undefined, expected: number, tol: number): boolean {
  if (actual === null || actual === undefined) return false;
  if (expected === 0) return actual === 0;
  return Math.abs(actual - expected) / Math.abs(expected) <= tol;
}

function field(run: LoadTestRun, name: string): number | null | undefined {
  const s = run.summary;
  if (name.startsWith('latencyMs.')) return s.latencyMs[name.slice(10) as keyof typeof s.latencyMs];
  return (s as unknown as Record<string, number | null>)[name];
}

/** Format names accepted beyond expected.json's (none at present: vegeta's JSON report is `vegeta-report`). */
const EXTRA_FORMAT_NAMES: Record<string, string[]> = {};

export function checkRun(key: string, run: LoadTestRun, exp: Expected): void {
  const tol = exp.tolerance ?? 0.005;
  expect(run.kind).toBe('loadtest');
  if (exp.format) expect(run.format, `${key} format`).toBe(exp.format);
  if (exp.formatAlternatives) {
    const ok = exp.formatAlternatives.flatMap((f) => [f, ...(EXTRA_FORMAT_NAMES[f] ?? [])]);
    expect(ok, `${key} format ${run.format}`).toContain(run.format);
  }
  for (const f of ['requests', 'durationSeconds', 'rps', 'errors', 'non2xx', 'transportErrors'] as const) {
    if (exp[f] !== undefined) close(field(run, f), exp[f]!, tol, `${key} ${f}`);
  }
  for (const [k, v] of Object.entries(exp.latencyMs ?? {})) close(field(run, `latencyMs.${k}`), v, tol, `${key} latencyMs.${k}`);
  for (const [k, vs] of Object.entries(exp.alternatives ?? {})) {
    const a = field(run, k);
    expect(vs.some((v) => within(a, v, tol)), `${key} ${k}: got ${a}, expected one of ${vs.join(', ')}`).toBe(true);
  }
  for (const [k, [lo, hi]] of Object.entries(exp.bounds ?? {})) {
    const a = field(run, k);
    expect(a, `${key} ${k} bounds`).not.toBeNull();
    expect(a as number).toBeGreaterThanOrEqual(lo);
    expect(a as number).toBeLessThanOrEqual(hi);
  }
  if (exp.hasTimeline === true) expect(run.timeline?.length ?? 0, `${key} timeline`).toBeGreaterThan(0);
  if (exp.hasTimeline === false) expect(run.timeline, `${key} timeline`).toBeNull();
  if (exp.hasDistribution === true) expect(run.latencyDistribution, `${key} distribution`).not.toBeNull();
  if (exp.hasDistribution === false) expect(run.latencyDistribution, `${key} distribution`).toBeNull();
  for (const p of exp.distributionPrinted ?? []) {
    const hit = run.latencyDistribution?.find((q) => Math.abs(q.percentile - p.percentile) < 1e-6);
    expect(hit, `${key} distribution point ${p.percentile}`).toBeDefined();
    close(hit!.ms, p.ms, tol, `${key} distribution ${p.percentile}`);
  }
  // invariants of the contract
  const s = run.summary;
  if (s.transportErrors !== null && s.non2xx !== null) expect(s.errors).toBe(s.transportErrors + s.non2xx);
  if (run.timeline) {
    run.timeline.forEach((b, i) => expect(b.t).toBe(i));
    expect(typeof s.meta.source).toBe('string');
  }
}
