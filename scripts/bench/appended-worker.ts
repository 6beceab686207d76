// Child process of the "appended" section: reads one file of appended load-test runs exactly as
// `stagediff inspect` and an upload do (content detection, then the importer, run by run) and
// reports the time to the answer: the runs read, or the refusal (a file over the run limit).
import { basename } from 'node:path';
import { ingest } from '../../server/src/ingest/detect.ts';
import { IngestError } from '../../server/src/ingest/errors.ts';

const file = process.argv[2]!;
const t0 = performance.now();
let answer: { runs: number } | { refused: string };
try {
  const parsed = await ingest({ name: basename(file), path: file });
  if (parsed.kind !== 'loadtest') throw new Error(`${file}: parsed as ${parsed.kind}, not a load test`);
  answer = { runs: parsed.runs.length };
} catch (e) {
  if (!(e instanceof IngestError)) throw e;
  answer = { refused: e.message };
}
const ms = performance.now() - t0;
process.stdout.write(`${JSON.stringify({ ms, ...answer })}\n`);
