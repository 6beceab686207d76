// Section "diff": what a diff costs against what a flamegraph costs, and the CLI's diff against
// `go tool pprof -diff_base`, all in one run.
//
// 1. The views, in-process: the 1M-sample profile (scripts/testdata, SYNTHETIC_HUGE) and a second
//    run of the same program (SYNTHETIC_HUGE_RUN2). A warm worker holds both models (parsed and
//    aggregated, as a server worker holds them) and runs, alternating, the flamegraph view's work
//    (call tree trimmed at the web client's 0.0005, and its JSON) and the diff view's (diffProfiles
//    absolute at 0.0005: rows and tree, and its JSON). Ratio = median over repetitions of diff /
//    flamegraph in the same repetition (target ≤ 1.5). Memory: fresh processes that read the models
//    in their compact form (as a worker reads them from the store) and run one view: the process's
//    peak RSS, and the view's own part (the peak above what the loaded models held; Linux
//    clear_refs); median of 3 (target ≤ 1.5 × the flamegraph's).
// 2. The CLI, cold, compiled build: `stagediff diff BASE TARGET` against
//    `go tool pprof -symbolize=none -top -diff_base=BASE TARGET` (target ≤ 0.5), and `stagediff inspect
//    TARGET` against `go tool pprof -symbolize=none -top TARGET`, alternating with a rotating order:
//    the Go compiler's profile (fixtures/reference/pprof/large, base go_types_tests_cpu) and the
//    1M-sample pair (pprof's diff of it takes minutes and 6 GB a run: STAGEDIFF_BENCH_DIFF_1M_CLI=0
//    leaves that pair out). Peak RSS from GNU time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import {
  ensureBuild,
  fmtMB,
  fmtMs,
  fmtRatio,
  generatedInput,
  median,
  min,
  outDir,
  printTable,
  repoRoot,
  runJson,
  startWorker,
  timeCommand,
} from '../lib.mjs';

const BIN = join(repoRoot, 'server/bin/stagediff.mjs');
const WORKER = join(repoRoot, 'scripts/bench/diff-worker.ts');
const compiledEnv = { ...process.env, STAGEDIFF_COMPILED: '1' };

const paired = (xs, ref) => median(xs.map((x, i) => x / ref[i]));
const best = (xs, ref) => min(xs) / min(ref);

async function views(reps, quick, a, b) {
  const dir = join(outDir, 'diff-models');
  mkdirSync(dir, { recursive: true });
  const sdp = (f) => join(dir, `${basename(f)}.sdp`);
  for (const f of [a, b]) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', WORKER, 'compact', f, sdp(f)], { cwd: repoRoot });
    if (r.status !== 0) throw new Error(`compact ${f}: ${r.stderr}`);
  }
  const fg = { op: 'flamegraph', files: [sdp(a)] };
  const df = { op: 'diff', files: [sdp(a), sdp(b)] };
  const w = startWorker(process.execPath, ['--import', 'tsx', WORKER, 'serve']);
  const fgMs = [];
  const dfMs = [];
  try {
    for (let i = 0; i < 2; i++) {
      await w.request(fg);
      await w.request(df);
    }
    for (let r = 0; r < reps; r++) {
      const order = r % 2 === 0 ? [fg, df] : [df, fg];
      for (const req of order) {
        const res = await w.request(req);
        if (res.error) throw new Error(res.error);
        (req === fg ? fgMs : dfMs).push(res.ms);
      }
      process.stdout.write('.');
    }
  } finally {
    await w.close();
  }
  const rss = (req) => {
    const runs = [];
    for (let i = 0; i < (quick ? 1 : 3); i++)
      runs.push(runJson(process.execPath, ['--expose-gc', '--import', 'tsx', WORKER, 'rss', req.op, ...req.files]));
    return { processPeak: median(runs.map((x) => x.processPeak)), net: median(runs.map((x) => x.net)), runs };
  };
  const fgRss = rss(fg);
  const dfRss = rss(df);
  return {
    files: [basename(a), basename(b)],
    flamegraph: { msMedian: median(fgMs), ms: fgMs, rss: fgRss },
    diff: { msMedian: median(dfMs), ms: dfMs, rss: dfRss },
    ratio: {
      time: paired(dfMs, fgMs),
      timeBest: best(dfMs, fgMs),
      processPeak: dfRss.processPeak / fgRss.processPeak,
      net: dfRss.net / fgRss.net,
      target: 1.5,
    },
  };
}

/** Runs each step once per repetition, rotating the order; returns each step's runs. */
async function alternate(steps, reps) {
  const out = steps.map(() => []);
  for (let r = 0; r < reps; r++) {
    for (let k = 0; k < steps.length; k++) {
      const i = (k + r) % steps.length;
      out[i].push(await steps[i]());
    }
    process.stdout.write('.');
  }
  return out;
}

async function cli(reps, name, base, target, warmUp) {
  const steps = [
    () => timeCommand('go', ['tool', 'pprof', '-symbolize=none', '-top', `-diff_base=${base}`, target]),
    () => timeCommand(process.execPath, [BIN, 'diff', base, target], { env: compiledEnv }),
    () => timeCommand('go', ['tool', 'pprof', '-symbolize=none', '-top', target]),
    () => timeCommand(process.execPath, [BIN, 'inspect', target], { env: compiledEnv }),
  ];
  if (warmUp) for (const s of steps) await s(); // page cache, go's build cache
  const [pDiff, oDiff, pTop, oInspect] = (await alternate(steps, reps)).map((runs) => ({
    ms: runs.map((r) => r.ms),
    peakRss: runs.map((r) => r.peakRss).filter((x) => x !== null),
  }));
  const fig = (x) => ({ msMedian: median(x.ms), ms: x.ms, peakRssMedian: median(x.peakRss) });
  return {
    name,
    base: basename(base),
    target: basename(target),
    pprofDiff: fig(pDiff),
    diff: { ...fig(oDiff), ratio: paired(oDiff.ms, pDiff.ms), best: best(oDiff.ms, pDiff.ms), target: 0.5 },
    pprofTop: fig(pTop),
    inspect: { ...fig(oInspect), ratio: paired(oInspect.ms, pTop.ms), best: best(oInspect.ms, pTop.ms), target: 0.5 },
  };
}

export async function run({ reps, quick }) {
  const a = generatedInput('synthetic-huge');
  const b = generatedInput('synthetic-huge-run2');
  process.stdout.write('diff: views on the 1M-sample profile ');
  const v = await views(reps, quick, a, b);
  process.stdout.write(' done\n');

  const haveGo = spawnSync('go', ['version']).status === 0;
  const large = join(repoRoot, 'fixtures/reference/pprof/large');
  // go tool pprof -diff_base takes minutes and 6 GB on the 1M-sample pair: two repetitions there,
  // without a warm-up run (the views above have just read both files).
  const pairs = [
    ['Go compiler', join(large, 'go_types_tests_cpu.pb.gz'), join(large, 'go_compile_merged_cpu.pb.gz'), reps, true],
    ['1M samples', a, b, 2, false],
  ]
    .filter(([name]) => name !== '1M samples' || process.env.STAGEDIFF_BENCH_DIFF_1M_CLI !== '0')
    .filter(([, x, y]) => existsSync(x) && existsSync(y));
  const clis = [];
  if (!haveGo) console.log('diff: go is not installed; the CLI comparison is skipped');
  else {
    ensureBuild();
    for (const [name, x, y, n, warmUp] of quick ? pairs.slice(0, 1) : pairs) {
      process.stdout.write(`diff: CLI on ${name} `);
      clis.push(await cli(quick ? 2 : Math.min(n, 5), name, x, y, warmUp));
      process.stdout.write(' done\n');
    }
  }

  console.log(
    `\nViews of the 1M-sample profile, warm, median of ${reps} alternating runs (ratio: diff / flamegraph, target ≤ 1.5)`,
  );
  printTable(
    ['view', 'time', 'process peak RSS', 'view’s own RSS'],
    [
      [
        'flamegraph (call tree + JSON)',
        fmtMs(v.flamegraph.msMedian),
        fmtMB(v.flamegraph.rss.processPeak),
        fmtMB(v.flamegraph.rss.net),
      ],
      ['diff (rows + tree + JSON)', fmtMs(v.diff.msMedian), fmtMB(v.diff.rss.processPeak), fmtMB(v.diff.rss.net)],
      [
        'ratio (median of pairs / best)',
        `${fmtRatio(v.ratio.time)} / ${fmtRatio(v.ratio.timeBest)}`,
        fmtRatio(v.ratio.processPeak),
        fmtRatio(v.ratio.net),
      ],
    ],
  );
  if (clis.length) {
    console.log('\nCLI, cold, compiled (ratio: ours / go tool pprof in the same repetition, target ≤ 0.5)');
    printTable(
      [
        'profile',
        'pprof -diff_base',
        'stagediff diff',
        'ratio / best',
        'pprof -top',
        'stagediff inspect',
        'ratio / best',
        'peak RSS pprof / ours (diff)',
      ],
      clis.map((c) => [
        c.name,
        fmtMs(c.pprofDiff.msMedian),
        fmtMs(c.diff.msMedian),
        `${fmtRatio(c.diff.ratio)} / ${fmtRatio(c.diff.best)}`,
        fmtMs(c.pprofTop.msMedian),
        fmtMs(c.inspect.msMedian),
        `${fmtRatio(c.inspect.ratio)} / ${fmtRatio(c.inspect.best)}`,
        `${fmtMB(c.pprofDiff.peakRssMedian)} / ${fmtMB(c.diff.peakRssMedian)}`,
      ]),
    );
  }
  return { reps, views: v, cli: clis };
}
