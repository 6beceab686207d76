// Section "flamegraph" (issue 5): in headless Chromium, navigation → both flamegraphs drawn for two
// large real profiles in two stages, against the real server (web/test/bench-flamegraph.ts does the
// work; this section runs it and keeps its figures).
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../lib.mjs';

export async function run({ reps, quick }) {
  if (!existsSync('/usr/bin/chromium')) {
    console.log('flamegraph: Debian chromium is not installed (apt-get install chromium); section skipped');
    return { status: 'skipped', reason: 'chromium missing' };
  }
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'web/test/bench-flamegraph.ts')], {
    cwd: repoRoot,
    encoding: 'utf8',
    env: { ...process.env, BENCH_RUNS: String(quick ? 3 : Math.max(5, reps)) },
    timeout: 15 * 60 * 1000,
  });
  process.stdout.write(r.stdout);
  if (r.status !== 0) throw new Error(`bench-flamegraph failed (${r.status}): ${r.stderr.slice(-1500)}`);
  const m = /median (\d+) ms over (\d+) warm runs \(min (\d+), max (\d+)\)/.exec(r.stdout);
  const cold = /cold \(server computes the trees\): (\d+) ms/.exec(r.stdout);
  return {
    medianMs: m ? Number(m[1]) : null,
    runs: m ? Number(m[2]) : null,
    minMs: m ? Number(m[3]) : null,
    maxMs: m ? Number(m[4]) : null,
    coldMs: cold ? Number(cold[1]) : null,
    targetMs: 1000,
    met: m ? Number(m[1]) < 1000 : false,
  };
}
