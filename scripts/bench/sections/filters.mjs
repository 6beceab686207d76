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

/** [label, expression, why JavaScript's RegExp cannot do the job, or null when it can] */
const PATTERNS = [
  ['file name', String.raw`encode\.go`, null],
  ['anchored function', String.raw`^runtime\.`, null],
  ['(?i) class', String.raw`(?i)(json|http)\.[a-z]+$`, 'no (?i) syntax'],
  ['512-char alternation', alternation512(), null],
  ['(a+)+b', '(a+)+b', 'never returns'],
  ['([^/]*)*^z$', '([^/]*)*^z$', 'never returns'],
  ['nested bounded repeats', '(?:(?:.*){0,100}){0,10}x', 'never returns'],
];

export async function run({ reps }) {
  register(); // the analysis is TypeScript
  const { readFileSync } = await import('node:fs');
  const { parsePprof } = await import(join(repoRoot, 'server/src/ingest/pprof/index.ts'));
  const { mergeProfiles } = await import(join(repoRoot, 'server/src/analysis/merge.ts'));
  const { filterProfile } = await import(join(repoRoot, 'server/src/analysis/filter.ts'));
  const { flatCum } = await import(join(repoRoot, 'server/src/analysis/flat-cum.ts'));
  const { compileGoRegexp } = await import(join(repoRoot, 'server/src/analysis/go-regexp.ts'));
  const files = STAGES.map((s) => join(repoRoot, 'fixtures/demo', s, 'run-1', 'cpu.pb.gz'));
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
  // Warm both engines up (JIT, the profile's match index) so the first row is not the costliest.
  for (const [, src, jsCannot] of PATTERNS) {
    job(() => compileGoRegexp(src));
    if (!jsCannot) job(() => ({ source: src, test: (s) => new RegExp(src).test(s) }));
  }
  const rows = [];
  const results = [];
  for (const [label, src, jsCannot] of PATTERNS) {
    const re2 = [];
    const js = [];
    for (let i = 0; i < reps; i++) {
      // alternate the engines, so load on the shared machine falls on both
      re2.push(job(() => compileGoRegexp(src)));
      if (!jsCannot)
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
      regexpMs: jsCannot ? null : median(js),
      regexpCannot: jsCannot,
      goPprofMs: pprof,
    };
    results.push(r);
    rows.push([
      label,
      fmtJob(r.re2jsMs),
      jsCannot ?? fmtJob(r.regexpMs),
      jsCannot ? null : fmtRatio(r.re2jsMs / r.regexpMs),
      fmtMs(pprof),
    ]);
  }
  console.log(
    `focus on ${profile.stats.numSamples} samples, ${profile.frames.length} frames (demo CPU ×4 merged), median of ${reps}:`,
  );
  printTable(['expression', 're2js job', 'RegExp job', 're2js/RegExp', 'go tool pprof -focus (whole run)'], rows);
  return { samples: profile.stats.numSamples, frames: profile.frames.length, results };
}
