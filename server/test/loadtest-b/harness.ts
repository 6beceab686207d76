/** The group-B importer tests' view of the shared load-test harness (../helpers/loadtest-expected.ts). */
import { importersB } from '../../src/ingest/loadtest/group-b.ts';
import type { LoadTestImporter } from '../../src/ingest/loadtest/types.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';
import { bestImporter, parseWith } from '../helpers/loadtest-expected.ts';

/** The group-B importer with the highest confidence for a file, judged by content only. */
export function detectB(path: string): { importer: LoadTestImporter; score: number } | null {
  const { importer, confidence } = bestImporter(importersB, path);
  return importer ? { importer, score: confidence } : null;
}

export function parseFile(path: string): Promise<LoadTestRun> {
  return parseWith(importersB, path);
}
