/** Shared helpers for the group-A load-test importer tests. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { importersA } from '../../src/ingest/loadtest/group-a.ts';
import type { LoadTestImporter } from '../../src/ingest/loadtest/types.ts';
import { HEAD_BYTES } from '../../src/ingest/loadtest/types.ts';
import { fileSource } from '../../src/ingest/source.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';

export const SAMPLES = fileURLToPath(new URL('../../../../shared/samples/loadtests/', import.meta.url));
export const FIXTURES = fileURLToPath(new URL('../../../fixtures/loadtests/', import.meta.url));

export function head(path: string): Buffer {
  const buf = readFileSync(path);
  return buf.subarray(0, HEAD_BYTES);
}

/** The most confident group-A importer for a file, judged on content only (no name). */
export function best(path: string, fileName?: string): { importer: LoadTestImporter | null; confidence: number } {
  const h = head(path);
  let importer: LoadTestImporter | null = null;
  let confidence = 0;
  for (const imp of importersA) {
    const c = imp.detect(h, fileName);
    if (c > confidence) {
      confidence = c;
      importer = imp;
    }
  }
  return { importer, confidence };
}

export async function parseFile(path: string): Promise<LoadTestRun> {
  const { importer } = best(path);
  if (!importer) throw new Error(`no group-A importer detects ${path}`);
  return importer.parse(fileSource(path), path);
}

/** Relative closeness with an exact match required for an expected 0. */
export function close(actual: number | null | undefined, expected: number, tol: number): boolean {
  if (actual === null || actual === undefined || !Number.isFinite(actual)) return false;
  if (expected === 0) return actual === 0;
  return Math.abs(actual - expected) <= tol * Math.abs(expected);
}
