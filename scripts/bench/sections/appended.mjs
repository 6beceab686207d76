// Section "appended": files of wrk runs appended one after another (`wrk … >> runs.txt` in a loop),
// 1,000 to 8,000 copies of a real wrk --latency output, each read as `stagediff inspect` and an upload
// read it (detection, then the run-by-run importer) in a fresh process. Over the run limit the answer
// is a refusal naming it; the figure is the time to that answer, and its ratio over the 1,000-run
// file's (linear reading doubles it when the runs double). Target: under 2 s at 8,000 runs.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fmtMB, fmtMs, fmtRatio, median, nodeTsx, printTable, repoRoot, runJson } from '../lib.mjs';

const WORKER = 'scripts/bench/appended-worker.ts';
const SOURCE = join(repoRoot, 'fixtures', 'reference', 'loadtests', 'wrk', 'baseline-latency.txt');
const COUNTS = [1000, 2000, 4000, 8000];
const TARGET_MS = 2000;

export async function run({ reps, quick }) {
  const scratch = process.env.STAGEDIFF_BENCH_TMP ?? '/tmp/stagediff-bench';
  mkdirSync(scratch, { recursive: true });
  const one = readFileSync(SOURCE, 'utf8');
  const inputs = COUNTS.map((runs) => {
    const path = join(scratch, `wrk-appended-${runs}.txt`);
    const text = one.repeat(runs);
    writeFileSync(path, text);
    return { runs, path, bytes: Buffer.byteLength(text), ms: [], answer: null };
  });
  const times = quick ? 1 : Math.min(reps, 5);
  // a fresh process per file, the sizes interleaved so a slow spell of the machine hits all of them
  for (let r = 0; r < times; r++) {
    for (const inp of inputs) {
      const [node, args] = nodeTsx(WORKER, [inp.path]);
      const out = runJson(node, args);
      inp.ms.push(out.ms);
      inp.answer = out.refused !== undefined ? `refused: ${out.refused}` : `${out.runs} runs read`;
      process.stdout.write('.');
    }
  }
  process.stdout.write('\n');
  const base = median(inputs[0].ms);
  const results = inputs.map((inp) => ({
    runs: inp.runs,
    fileBytes: inp.bytes,
    msMedian: median(inp.ms),
    ms: inp.ms,
    ratioOver1000: median(inp.ms) / base,
    answer: inp.answer,
  }));
  console.log(
    `\nAppended wrk runs: time to the answer in-process (start-up excluded), median of ${times} fresh processes; target < ${TARGET_MS} ms at 8,000 runs, ratio ≈ runs / 1,000`,
  );
  printTable(
    ['runs', 'file', 'time', 'ratio over 1,000', 'answer'],
    results.map((x) => [
      x.runs.toLocaleString('en'),
      fmtMB(x.fileBytes),
      fmtMs(x.msMedian),
      fmtRatio(x.ratioOver1000),
      x.answer.slice(0, 90),
    ]),
  );
  return { runs: times, targetMs: TARGET_MS, source: SOURCE.slice(repoRoot.length + 1), results };
}
