/**
 * The load-test importer suites' shared harness: detection by content among a group of importers,
 * parsing a real file through the streaming source, and checking every sample of a set of tools
 * against its reference figures in fixtures/reference/loadtests/expected.json (see its README.md).
 *
 * Tolerances are relative (default 0.5 %) and an expected 0 must be exactly 0.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFileHead } from '../../src/ingest/detect.ts';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../src/ingest/errors.ts';
import { loadTestImporters } from '../../src/ingest/loadtest/index.ts';
import type { LoadTestImporter } from '../../src/ingest/loadtest/types.ts';
import { fileSource } from '../../src/ingest/source.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';
import { fixturesDir, samplesDir } from './paths.ts';

/** fixtures/reference/loadtests/, with a trailing slash. */
export const LOADTEST_SAMPLES = join(samplesDir, 'loadtests/');
/** fixtures/loadtests/ of this repository, with a trailing slash. */
export const LOADTEST_FIXTURES = join(fixturesDir, 'loadtests/');

/** One entry of expected.json. */
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

/** Every entry of expected.json, keyed by "tool/file". */
export function loadExpected(): Record<string, Expected> {
  return JSON.parse(readFileSync(join(LOADTEST_SAMPLES, 'expected.json'), 'utf8')) as Record<string, Expected>;
}

/** The first HEAD_BYTES of a file: what a detector sees (the same read detection does). */
export const readHead = readFileHead;

/**
 * The most confident of `importers` for a file (null when none claims it), judged on content and,
 * only when given, the name hint. Every confidence must lie in 0..1.
 */
export function bestImporter(
  importers: readonly LoadTestImporter[],
  path: string,
  fileName?: string,
): { importer: LoadTestImporter | null; confidence: number } {
  const head = readHead(path);
  let importer: LoadTestImporter | null = null;
  let confidence = 0;
  for (const imp of importers) {
    const c = imp.detect(head, fileName);
    expect(c).toBeGreaterThanOrEqual(0);
    expect(c).toBeLessThanOrEqual(1);
    if (c > confidence) {
      confidence = c;
      importer = imp;
    }
  }
  return { importer, confidence };
}

/** Detects a file among `importers` by content and parses it from a streamed file source. */
export async function parseWith(importers: readonly LoadTestImporter[], path: string): Promise<LoadTestRun> {
  const { importer } = bestImporter(importers, path);
  if (!importer) throw new Error(`no importer of this group detects ${path}`);
  return importer.parse(fileSource(path), path);
}

/** Relative closeness within `tol`, with an exact match required for an expected 0. */
export function close(actual: number | null | undefined, expected: number, tol: number): boolean {
  if (actual === null || actual === undefined || !Number.isFinite(actual)) return false;
  if (expected === 0) return actual === 0;
  return Math.abs(actual - expected) <= tol * Math.abs(expected);
}

function field(run: LoadTestRun, name: string): number | null {
  const s = run.summary;
  if (name.startsWith('latencyMs.')) return s.latencyMs[name.slice(10) as keyof typeof s.latencyMs];
  return (s as unknown as Record<string, number | null>)[name] ?? null;
}

/** Checks a run against its expected.json entry, then the invariants of the model's contract. */
export function checkRun(key: string, run: LoadTestRun, e: Expected): void {
  const tol = e.tolerance ?? 0.005;
  expect(run.kind).toBe('loadtest');
  if (e.format) expect(run.format, `${key} format`).toBe(e.format);
  if (e.formatAlternatives) expect(e.formatAlternatives, `${key} format ${run.format}`).toContain(run.format);
  for (const k of ['requests', 'durationSeconds', 'rps', 'errors', 'non2xx', 'transportErrors'] as const) {
    const want = e[k];
    if (want === undefined) continue;
    const got = field(run, k);
    expect(close(got, want, tol), `${key} ${k}: got ${got}, want ${want} (±${tol * 100}%)`).toBe(true);
  }
  for (const [k, want] of Object.entries(e.latencyMs ?? {})) {
    const got = field(run, `latencyMs.${k}`);
    expect(close(got, want, tol), `${key} latencyMs.${k}: got ${got}, want ${want} (±${tol * 100}%)`).toBe(true);
  }
  for (const [k, options] of Object.entries(e.alternatives ?? {})) {
    const got = field(run, k);
    expect(
      options.some((o) => close(got, o, tol)),
      `${key} ${k}: got ${got}, want one of ${options.join(', ')}`,
    ).toBe(true);
  }
  for (const [k, [lo, hi]] of Object.entries(e.bounds ?? {})) {
    const got = field(run, k);
    expect(got !== null && got >= lo && got <= hi, `${key} ${k}: got ${got}, want within [${lo}, ${hi}]`).toBe(true);
  }
  if (e.hasTimeline === true) expect(run.timeline?.length ?? 0, `${key} timeline`).toBeGreaterThan(0);
  if (e.hasTimeline === false) expect(run.timeline, `${key} timeline`).toBeNull();
  if (e.hasDistribution === true) expect(run.latencyDistribution, `${key} distribution`).not.toBeNull();
  if (e.hasDistribution === false) expect(run.latencyDistribution, `${key} distribution`).toBeNull();
  for (const pt of e.distributionPrinted ?? []) {
    const got = run.latencyDistribution?.find((d) => Math.abs(d.percentile - pt.percentile) < 1e-6);
    expect(got, `${key} distribution point ${pt.percentile}%`).toBeDefined();
    expect(close(got!.ms, pt.ms, tol), `${key} distribution ${pt.percentile}%: got ${got!.ms}, want ${pt.ms}`).toBe(
      true,
    );
  }
  // The errors contract: the sum of the parts that are known; a total the source cannot split
  // only when neither part is known.
  const s = run.summary;
  if (s.errors !== null && (s.transportErrors !== null || s.non2xx !== null)) {
    expect(s.errors, `${key} errors = transportErrors + non2xx`).toBe((s.transportErrors ?? 0) + (s.non2xx ?? 0));
  }
  if (run.timeline) {
    run.timeline.forEach((b, i) => {
      expect(b.t).toBe(i);
    });
    expect(typeof s.meta.source).toBe('string');
  }
}

export interface ExpectedSuite {
  /** The tools whose folders (and expected.json entries) this suite covers. */
  tools: readonly string[];
  /** The importers that must recognise the tools' files, by content only. */
  importers: readonly LoadTestImporter[];
  /** How many sample files the tools have, exactly (guards against files vanishing from the corpus). */
  fileCount: number;
  /** Extra check on each parsed run, beyond expected.json (e.g. a group's own invariants). */
  extraCheck?: (key: string, run: LoadTestRun) => void;
}

/**
 * One test that every file of the tools has an expected.json entry and back, then one test per
 * file: detected by content, parsed from a streamed source, checked with `checkRun`. A file
 * marked expectError must be recognised and refused with IngestError 'no-run'; one marked
 * acceptError or mayBeUnsupported may instead be refused as 'unsupported', 'no-run' or 'empty'.
 */
export function describeExpectedSamples(title: string, suite: ExpectedSuite): void {
  const all = loadExpected();
  const mine = Object.entries(all).filter(([k]) => suite.tools.includes(k.split('/')[0]!));
  describe(title, () => {
    it(`covers every file of the ${suite.tools.length} tools`, () => {
      const onDisk = suite.tools.flatMap((t) => readdirSync(join(LOADTEST_SAMPLES, t)).map((f) => `${t}/${f}`));
      expect(onDisk.length).toBe(suite.fileCount);
      expect(onDisk.filter((f) => !(f in all))).toEqual([]);
      expect(mine.map(([k]) => k).sort()).toEqual([...onDisk].sort());
    });

    for (const [key, e] of mine) {
      it(key, async () => {
        const path = join(LOADTEST_SAMPLES, key);
        if (e.expectError) {
          expect(bestImporter(suite.importers, path).importer, `${key} should be recognised`).not.toBeNull();
          const err = await parseWith(suite.importers, path).then(
            () => null,
            (x: unknown) => x,
          );
          expect(err).toBeInstanceOf(IngestError);
          expect((err as IngestError).code).toBe('no-run');
          return;
        }
        if (e.acceptError || e.mayBeUnsupported) {
          expect(
            bestImporter(suite.importers, path).importer,
            `${key} should be recognised (parsed or refused)`,
          ).not.toBeNull();
        }
        let run: LoadTestRun;
        try {
          run = await parseWith(suite.importers, path);
        } catch (x) {
          if (!(e.acceptError || e.mayBeUnsupported)) throw x;
          expect(x).toBeInstanceOf(IngestError);
          expect(['unsupported', 'no-run', 'empty']).toContain((x as IngestError).code);
          return;
        }
        checkRun(key, run, e);
        suite.extraCheck?.(key, run);
      });
    }
  });
}

/** The most confident of every registered importer for a file, judged on content (and the name, when given). */
export function best(path: string, fileName?: string): { importer: LoadTestImporter | null; confidence: number } {
  return bestImporter(loadTestImporters, path, fileName);
}

/** Parses a file with the most confident of every registered importer. */
export function parseFile(path: string): Promise<LoadTestRun> {
  return parseWith(loadTestImporters, path);
}
