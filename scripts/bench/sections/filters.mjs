// Section "filters": pprof's focus filter on the demo's four CPU profiles merged, with the Go regexp
// engine (re2js, linear time) against JavaScript's RegExp on the same job where RegExp can do it at all
// (on the pathological expressions it backtracks without end), and against `go tool pprof -focus` on
// the same files for context (its figure includes starting the tool and parsing).
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { register } from 'tsx/esm/api';
import { fmtMs, fmtRatio, median, printTable, repoRoot, timeCommand } from '../lib.mjs';

const STAGES = ['baseline', 'fast-json', 'pooled', 'async-log'];
const fmtJob = (ms) => (ms === null ? null : ms < 10 ? `${ms.toFixed(1)} ms` : fmtMs(ms));

function alternation512() {
  const parts = [String.raw`encoding/json\.\(\*Encoder\)\.Encode$`];
  for (let i = 0; `${parts.join('|')}|zz${i}`.length <= 512; i++) parts.push(`zz${i}`);
  return parts.join('|');
}

/** [label, expression, whether JavaScript's RegExp finishes on it] */
const PATTERNS = [
  ['file name', String.raw`encode\.go`, true],
  ['anchored function', String.raw`^runtime\.`, true],
  ['(?i) class', String.raw`(?i)(json|http)\.[a-z]+$`, false], // RegExp has no (?i)
  ['512-char alternation', alternation512(), true],
  ['(a+)+b', '(a+)+b', false],
  ['([^/]*)*^z$', '([^/]*)*^z$', false],
  ['nested bounded repeats', '(?:(?:.*){0,100}){0,10}x', false],
];

export async function run({ reps }) {
  register(); // the analysis is TypeScript
  const { readFileSync } = await import('node:fs');
  const { parsePprof } = await import(join(repoRoot, 'server/src/ingest/pprof/index.ts'));
  const { mergeProfiles } = await import(join(repoRoot, 'server/src/analysis/merge.ts'));
  const { filterProfile } = await import(join(repoRoot, 'server/src/analysis/filter.ts'));
  const { flatCum } = await import(join(repoRoot, 'server/src/analysis/flat-cum.ts'));
  const { compileGoRegexp } = await import(join(repoRoot, 'server/src/analysis/go-regexp.ts'));
  const files = STAGES.map((s) => join(repoRoot, 'fixtures/demo', s, 'cpu.pb.gz'));
  const profile = mergeProfiles(files.map((f) => parsePprof(readFileSync(f))));
  const cpu = profile.sampleTypes.findIndex((t) => t.type === 'cpu');
  const haveGo = spawnSync('go', ['version']).status === 0;

  // One filter job as the server runs it: compile, filter, flat/cum of every function.
  const job = (compile) => {
    const t0 = performance.now();
    const kept = filterProfile(profile, { focus: compile() });
    flatCum(kept, cpu);
    return performance.now() - t0;
  };
  const rows = [];
  const results = [];
  for (const [label, src, jsFinishes] of PATTERNS) {
    const re2 = [];
    const js = [];
    for (let i = 0; i < reps; i++) {
      // alternate the engines, so load on the shared machine falls on both
      re2.push(job(() => compileGoRegexp(src)));
      if (jsFinishes)
        js.push(
          job(() => {
            const re = new RegExp(src);
            return { source: src, test: (s) => re.test(s) };
          }),
        );
    }
    const pprof = haveGo
      ? (
          await timeCommand(
            'go',
            ['tool', 'pprof', '-top', '-nodecount=1', '-symbolize=none', `-focus=${src}`, ...files],
            {
              env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent' },
            },
          )
        ).ms
      : null;
    const r = {
      pattern: label,
      re2jsMs: median(re2),
      regexpMs: jsFinishes ? median(js) : null,
      goPprofMs: pprof,
    };
    results.push(r);
    rows.push([
      label,
      fmtJob(r.re2jsMs),
      jsFinishes ? fmtJob(r.regexpMs) : 'never ends / no such syntax',
      jsFinishes ? fmtRatio(r.re2jsMs / r.regexpMs) : null,
      fmtMs(pprof),
    ]);
  }
  console.log(
    `focus on ${profile.stats.numSamples} samples, ${profile.frames.length} frames (demo CPU ×4 merged), median of ${reps}:`,
  );
  printTable(['expression', 're2js job', 'RegExp job', 're2js/RegExp', 'go tool pprof -focus (whole run)'], rows);
  return { samples: profile.stats.numSamples, frames: profile.frames.length, results };
}
