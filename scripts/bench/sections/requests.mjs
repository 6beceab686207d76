// Section "requests": the request analysis of a large real trace (about 100 MB of the demo service
// under wrk, Go's own trace format), in fresh processes, alternating: scripts/bench/requests-worker.ts
// (each request's span and its parts along the critical path, nothing else) against
// `go tool trace -pprof=sched TRACE` on the same file. Wall time and peak RSS (GNU time's, of each
// whole process), medians and the pairwise ratios. The trace is recorded by scripts/record-big-trace.sh
// into test-artifacts/bench/big.trace when missing (not committed); STAGEDIFF_BENCH_BIG_TRACE names
// another file. TRACE_MAX_REQUEST_STATES is raised for the worker so the analysis runs whole (the
// default bound gives such a trace a typed too-large answer); the worker prints which it got.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  fmtMB,
  fmtMs,
  fmtRatio,
  median,
  nodeTsx,
  outDir,
  printTable,
  repoRoot,
  runJson,
  timeCommand,
} from '../lib.mjs';

const WORKER = 'scripts/bench/requests-worker.ts';

export async function run({ reps, quick }) {
  let file = process.env.STAGEDIFF_BENCH_BIG_TRACE;
  if (!file) {
    file = join(outDir, 'big.trace');
    if (!existsSync(file)) {
      mkdirSync(outDir, { recursive: true });
      console.log('requests: recording a large trace of the demo service under wrk (scripts/record-big-trace.sh)…');
      const r = spawnSync('bash', [join(repoRoot, 'scripts/record-big-trace.sh'), file], { stdio: 'inherit' });
      if (r.status !== 0) throw new Error('scripts/record-big-trace.sh failed');
    }
  }
  const bytes = statSync(file).size;
  const goTool = spawnSync('go', ['tool', '-n', 'trace'], { encoding: 'utf8' });
  const trace = goTool.status === 0 ? goTool.stdout.trim() : null;
  if (!trace) console.log('requests: go is not installed; the go tool trace reference is skipped');
  const env = { ...process.env, TRACE_MAX_REQUEST_STATES: process.env.TRACE_MAX_REQUEST_STATES || '2000000000' };
  const [node, args] = nodeTsx(WORKER, [file]);
  const answer = runJson(node, args, { env });
  console.log(`requests: ${answer.status} (${answer.method}), ${answer.requests} requests in the main group`);
  const ours = () => timeCommand(node, args, { env });
  const go = () => timeCommand(trace, ['-pprof=sched', file]);
  const n = quick ? 1 : Math.min(reps, 3);
  const a = [];
  const b = [];
  process.stdout.write('requests: ');
  for (let r = 0; r < n; r++) {
    if (r % 2 === 0 || !trace) {
      a.push(await ours());
      if (trace) b.push(await go());
    } else {
      b.push(await go());
      a.push(await ours());
    }
    process.stdout.write('.');
  }
  process.stdout.write(' done\n');
  const ms = (xs) => xs.map((x) => x.ms);
  const rss = (xs) => xs.map((x) => x.peakRss).filter((x) => x !== null);
  const pair = (f) => (trace ? median(a.map((x, i) => f(x) / f(b[i]))) : null);
  const result = {
    file: process.env.STAGEDIFF_BENCH_BIG_TRACE ? file : 'test-artifacts/bench/big.trace (scripts/record-big-trace.sh)',
    bytes,
    reps: n,
    answer,
    stagediff: {
      command: 'node --import tsx scripts/bench/requests-worker.ts TRACE',
      msMedian: median(ms(a)),
      peakRssMedian: median(rss(a)),
      ms: ms(a),
      peakRss: rss(a),
    },
    goToolTrace: trace
      ? {
          command: 'go tool trace -pprof=sched TRACE',
          msMedian: median(ms(b)),
          peakRssMedian: median(rss(b)),
          ms: ms(b),
          peakRss: rss(b),
        }
      : null,
    ratio: { wall: pair((x) => x.ms), peakRss: a[0]?.peakRss != null ? pair((x) => x.peakRss) : null },
  };
  printTable(
    [`trace of ${fmtMB(bytes)}`, 'wall (median)', 'peak RSS (median)'],
    [
      ['stagediff requests and parts', fmtMs(result.stagediff.msMedian), fmtMB(result.stagediff.peakRssMedian)],
      ...(trace
        ? [
            ['go tool trace -pprof=sched', fmtMs(result.goToolTrace.msMedian), fmtMB(result.goToolTrace.peakRssMedian)],
            ['ratio (pairwise median)', fmtRatio(result.ratio.wall), fmtRatio(result.ratio.peakRss)],
          ]
        : []),
    ],
  );
  return result;
}
