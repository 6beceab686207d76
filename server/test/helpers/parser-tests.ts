/**
 * Setup shared by the parser suites of server/test/ingest and server/test/analysis (go test -bench, gctrace, folded stacks,
 * .cpuprofile, benchstat): where their sample files live, reading one, and catching the typed
 * error a parser throws.
 */
import { readFileSync } from 'node:fs';
import { IngestError } from '../../src/ingest/errors.ts';

/** fixtures/reference/gobench/: real files and, under expected/, their reference outputs. */
export const gobenchSamples = new URL('../../../fixtures/reference/gobench/', import.meta.url);

/** fixtures/<name>/ of this repository (our own files, with their references). */
export function fixtureDir(name: string): URL {
  return new URL(`../../../fixtures/${name}/`, import.meta.url);
}

/** The bytes of `file` in the folder `dir`. */
export function read(dir: URL, file: string): Buffer {
  return readFileSync(new URL(file, dir));
}

/** A reference JSON of the gobench samples' expected/ folder (untyped, as JSON.parse gives it). */
export function readExpectedJson(file: string) {
  return JSON.parse(readFileSync(new URL(`expected/${file}`, gobenchSamples), 'utf8'));
}

/** Runs `fn` and returns the IngestError it throws; fails the test when it throws nothing or anything else. */
export function ingestError(fn: () => unknown): IngestError {
  try {
    fn();
  } catch (e) {
    if (e instanceof IngestError) return e;
    throw e;
  }
  throw new Error('expected an IngestError');
}
