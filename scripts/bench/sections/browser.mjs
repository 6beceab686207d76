// Section "browser": stagediff's flamegraph and diff flamegraph against `go tool pprof -http` serving
// the same profiles (its /ui/flamegraph page), in the same headless Chromium: navigation → first
// flamegraph painted, click on a frame → zoomed picture painted, DOM elements per page and per graph;
// the demo comparison's CPU profiles and the Go compiler's merged profile; ≥ 5 interleaved runs each,
// medians and ratios (web/test/bench-flame-vs-pprof.ts does the work). Target: ratios ≤ 1.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fmtRatio, printTable, repoRoot } from '../lib.mjs';

export async function run({ reps, quick }) {
  if (!existsSync('/usr/bin/chromium')) {
    console.log('browser: Debian chromium is not installed (apt-get install chromium); section skipped');
    return { status: 'skipped', reason: 'chromium missing' };
  }
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'web/test/bench-flame-vs-pprof.ts')], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, BENCH_RUNS: String(quick ? 5 : Math.max(5, reps)) },
    timeout: 60 * 60 * 1000,
  });
  process.stdout.write(r.stdout);
  if (r.status !== 0) throw new Error(`bench-flame-vs-pprof failed (${r.status}): ${r.stderr.slice(-1500)}`);
  if (/^SKIP /m.test(r.stdout)) {
    console.log('browser: go is not installed, so there is no go tool pprof to compare with; section skipped');
    return { status: 'skipped', reason: 'go missing' };
  }
  const line = r.stdout.split('\n').find((l) => l.startsWith('RESULT '));
  if (!line) throw new Error('bench-flame-vs-pprof printed no result');
  const { rows } = JSON.parse(line.slice('RESULT '.length));
  printTable(
    ['case', 'first draw (ms)', 'pprof', 'ratio', 'click (ms)', 'pprof', 'ratio', 'DOM graph', 'pprof'],
    rows.map((x) => [
      x.case,
      x.stagediff.firstDrawMs.toFixed(0),
      x.pprof.firstDrawMs.toFixed(0),
      fmtRatio(x.firstDrawRatio),
      x.stagediff.clickMs.toFixed(0),
      x.pprof.clickMs.toFixed(0),
      fmtRatio(x.clickRatio),
      x.stagediff.domGraph,
      x.pprof.domGraph,
    ]),
  );
  return {
    rows,
    target: 'first draw and click ≤ 1× pprof',
    met: rows.every((x) => x.firstDrawRatio <= 1 && x.clickRatio <= 1),
  };
}
