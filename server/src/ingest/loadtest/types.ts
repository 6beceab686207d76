import type { LoadTestFormat, LoadTestRun } from '../../model/loadtest.ts';
import type { ByteSource } from '../source.ts';

/** A load tool, named by the first word of its formats (`vegeta-json`, `vegeta-csv` → vegeta). */
export type LoadTool = LoadTestFormat extends infer F ? (F extends `${infer T}-${string}` ? T : F) : never;

/** The tool that writes a format. */
export function toolOf(format: LoadTestFormat): LoadTool {
  const dash = format.indexOf('-');
  return (dash < 0 ? format : format.slice(0, dash)) as LoadTool;
}

/**
 * One load-test importer. `detect` looks only at the head of the file (the first 64 KiB) and, as a
 * hint, its name; it returns a confidence in 0..1 (0 = not this format). `parse` returns the run or
 * throws an IngestError (never anything else for bad input).
 */
export interface LoadTestImporter {
  /** The formats this importer can return (one importer may cover a tool's several outputs). */
  formats: readonly LoadTestFormat[];
  detect(head: Buffer, fileName?: string): number;
  parse(src: ByteSource, fileName?: string): Promise<LoadTestRun>;
  /**
   * For a text report: the line each run's output opens with (wrk's `Running … test @`, ab's banner,
   * …). A file where it opens several runs is read as that many runs, each part parsed on its own
   * (see readRuns); without it, a file is one run.
   */
  runStart?: RegExp;
}

/** Runs read from one file at most (a log of a long loop beyond it is refused, naming the limit). */
export const MAX_RUNS_PER_FILE = 100;

/** Bytes of a file's head that detectors see. */
export const HEAD_BYTES = 64 * 1024;
