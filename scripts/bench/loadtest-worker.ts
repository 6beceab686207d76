// Child process of the load-test section: parses one per-request log exactly as `stagediff inspect`
// does (content detection, then the importer reading the file as a stream) and reports the time,
// the rows seen and its own peak memory. Mode "baseline" loads the same modules and parses nothing.
import { basename } from 'node:path';
import { ingest } from '../../server/src/ingest/detect.ts';
import { peakRssBytes } from './rss.ts';

const [mode, file] = process.argv.slice(2);
if (mode === 'baseline') {
  process.stdout.write(`${JSON.stringify({ mode, ...peakRssBytes() })}\n`);
} else {
  const t0 = performance.now();
  const parsed = await ingest({ name: basename(file!), path: file! });
  const ms = performance.now() - t0;
  if (parsed.kind !== 'loadtest') throw new Error(`${file}: parsed as ${parsed.kind}, not a load test`);
  if (parsed.runs.length !== 1) throw new Error(`${file}: ${parsed.runs.length} runs, not one`);
  const run = parsed.runs[0]!;
  process.stdout.write(
    `${JSON.stringify({ mode, format: run.format, requests: run.summary.requests, timelineBuckets: run.timeline?.length ?? null, p99: run.summary.latencyMs?.p99 ?? null, ms, ...peakRssBytes() })}\n`,
  );
}
