/** The group-A importer tests' view of the shared load-test harness (../helpers/loadtest-expected.ts). */
import { importersA } from '../../src/ingest/loadtest/group-a.ts';
import type { LoadTestImporter } from '../../src/ingest/loadtest/types.ts';
import type { LoadTestRun } from '../../src/model/loadtest.ts';
import { bestImporter, parseWith } from '../helpers/loadtest-expected.ts';

export {
  close,
  LOADTEST_FIXTURES as FIXTURES,
  LOADTEST_SAMPLES as SAMPLES,
  readHead as head,
} from '../helpers/loadtest-expected.ts';

/** The most confident group-A importer for a file, judged on content (and the name, when given). */
export function best(path: string, fileName?: string): { importer: LoadTestImporter | null; confidence: number } {
  return bestImporter(importersA, path, fileName);
}

export function parseFile(path: string): Promise<LoadTestRun> {
  return parseWith(importersA, path);
}
