/**
 * Reading one file as several runs of one tool: a report appended to with `>>`, or a terminal log of
 * a loop, holds each run's output in turn. The importer names the line each run opens with
 * (`runStart`); each part is parsed as a report of its own, in the file's order, and each run says
 * which of the file's runs it is (`meta.fileRun`).
 */
import type { LoadTestRun } from '../../model/loadtest.ts';
import { IngestError } from '../errors.ts';
import { bufferSource, type ByteSource } from '../source.ts';
import { splitRuns, withoutTrailingPrompt } from './common/text.ts';
import { type LoadTestImporter, MAX_RUNS_PER_FILE } from './types.ts';

/**
 * Bytes of a file looked at for several runs: text reports are a few KiB a run; a larger file (a
 * per-request log, a CSV of an importer that also reads text) is one run, streamed as usual.
 */
export const SEVERAL_RUNS_SCAN_BYTES = 8 * 1024 * 1024;

/** The whole file when it is at most `limit` bytes, else null (reading stops there). */
async function smallFile(src: ByteSource, limit: number): Promise<Buffer | null> {
  const parts: Buffer[] = [];
  let n = 0;
  for await (const c of src) {
    n += c.length;
    if (n > limit) return null;
    parts.push(Buffer.from(c.buffer, c.byteOffset, c.byteLength));
  }
  return Buffer.concat(parts, n);
}

/** Every run a file holds (one, unless the importer's `runStart` opens several). */
export async function readRuns(
  imp: LoadTestImporter,
  open: () => ByteSource,
  fileName?: string,
): Promise<LoadTestRun[]> {
  if (!imp.runStart) return [await imp.parse(open(), fileName)];
  const bytes = await smallFile(open(), SEVERAL_RUNS_SCAN_BYTES);
  if (bytes === null) return [await imp.parse(open(), fileName)];
  // a terminal paste ends at the next prompt: that line is no part of the report
  const text = bytes.toString('utf8');
  const trimmed = withoutTrailingPrompt(text);
  const parts = splitRuns(trimmed, imp.runStart);
  if (parts.length === 1)
    return [await imp.parse(bufferSource(trimmed === text ? bytes : Buffer.from(trimmed, 'utf8')), fileName)];
  if (parts.length > MAX_RUNS_PER_FILE)
    throw new IngestError(
      'too-large',
      `the file holds ${parts.length} runs, more than the ${MAX_RUNS_PER_FILE} read from one file: split it`,
    );
  const runs: LoadTestRun[] = [];
  for (const [i, part] of parts.entries()) {
    let run: LoadTestRun;
    try {
      run = await imp.parse(bufferSource(Buffer.from(part.text, 'utf8')), fileName);
    } catch (e) {
      if (!(e instanceof IngestError)) throw e;
      const line = e.line === undefined ? part.line : part.line + e.line - 1;
      throw new IngestError(e.code, `run ${i + 1} of ${parts.length} (from line ${part.line}): ${e.message}`, line);
    }
    if (runs.length > 0 && run.format !== runs[0]!.format)
      throw new IngestError(
        'concatenated',
        `run ${i + 1} (from line ${part.line}) is ${run.format} output, run 1 ${runs[0]!.format}: upload each tool's output as its own file`,
        part.line,
      );
    run.summary.meta.fileRun = { index: i + 1, count: parts.length, line: part.line };
    runs.push(run);
  }
  return runs;
}
