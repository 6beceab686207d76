// Section "trace": reading a Go execution trace of about 10 MB (2 M events), in fresh processes,
// alternating: `stagediff inspect TRACE --json` (the compiled CLI: detect, read every event, the
// summary and all four derived profiles) against `go tool trace -pprof=sched TRACE` (Go's reader,
// one derived profile) on the same file. Wall time and peak RSS (GNU time's, of each whole process),
// medians and the pairwise ratios. The trace is made by the seeded generator in scripts/testdata
// (a valid trace Go's reader accepts); STAGEDIFF_BENCH_TRACE names another file to use instead.
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ensureBuild,
  fmtMB,
  fmtMs,
  fmtRatio,
  generatedInput,
  median,
  printTable,
  repoRoot,
  timeCommand,
} from '../lib.mjs';

const BIN = join(repoRoot, 'server/bin/stagediff.mjs');

export async function run({ reps }) {
  ensureBuild();
  const file = process.env.STAGEDIFF_BENCH_TRACE || generatedInput('trace-10mb');
  const bytes = statSync(file).size;
  const goTool = spawnSync('go', ['tool', '-n', 'trace'], { encoding: 'utf8' });
  const trace = goTool.status === 0 ? goTool.stdout.trim() : null;
  if (!trace) console.log('trace: go is not installed; the go tool trace reference is skipped');
  const ours = () =>
    timeCommand(process.execPath, [BIN, 'inspect', file, '--json'], {
      env: { ...process.env, STAGEDIFF_COMPILED: '1' },
    });
  const go = () => timeCommand(trace, ['-pprof=sched', file]);
  const a = [];
  const b = [];
  process.stdout.write('trace: ');
  for (let r = 0; r < reps; r++) {
    // alternate which goes first
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
    file: process.env.STAGEDIFF_BENCH_TRACE ? file : 'scripts/testdata trace-10mb (seeded)',
    bytes,
    reps,
    stagediff: {
      command: 'stagediff inspect TRACE --json (compiled)',
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
    ratio: { wall: pair((x) => x.ms), peakRss: a[0]?.peakRss !== null ? pair((x) => x.peakRss) : null },
  };
  printTable(
    [`trace of ${fmtMB(bytes)}`, 'wall (median)', 'peak RSS (median)'],
    [
      ['stagediff inspect --json', fmtMs(result.stagediff.msMedian), fmtMB(result.stagediff.peakRssMedian)],
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
