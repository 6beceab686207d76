// Section "loadtest": parsing speed and memory of per-request logs (issue 3). Logs of 250k and 1M
// rows are made from real samples (scripts/bench/gen-loadtest.mjs, into a scratch directory) and
// parsed by the project's importers through content detection and a streamed file source, each
// in a fresh process that reports its own peak RSS.
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureGenerated } from '../gen-loadtest.mjs';
import { fmtMB, fmtMs, fmtRate, median, nodeTsx, outDir, printTable, repoRoot, runJson } from '../lib.mjs';

const WORKER = 'scripts/bench/loadtest-worker.ts';
const TARGET_ROWS_PER_S = 1e6;

/** Top self-time functions of a .cpuprofile, as [name, ms, share]. */
function topSelf(path, n = 8) {
  const p = JSON.parse(readFileSync(path, 'utf8'));
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const self = new Map();
  for (let i = 0; i < p.samples.length; i++) {
    const node = byId.get(p.samples[i]);
    const f = node.callFrame;
    const key =
      `${f.functionName || '(anonymous)'} ${f.url ? f.url.replace(/^.*\/(server|node_modules)\//, '$1/') : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ name, ms: us / 1000, share: us / total }));
}

export async function run({ reps, quick }) {
  const samples = process.env.STAGEDIFF_BENCH_SAMPLES ?? join(repoRoot, 'fixtures', 'reference', 'loadtests');
  const scratch = process.env.STAGEDIFF_BENCH_TMP ?? '/tmp/stagediff-bench';
  const kinds = [
    { kind: 'hey', source: join(samples, 'hey', 'baseline-requests.csv') },
    { kind: 'vegeta', source: join(samples, 'vegeta', 'baseline-results.jsonl') },
  ];
  const sizes = [250_000, 1_000_000];
  const runs = quick ? 1 : Math.min(reps, 5);

  const inputs = [];
  for (const { kind, source } of kinds) {
    for (const rows of sizes) {
      const { path, generated } = await ensureGenerated(kind, source, rows, scratch);
      console.log(`loadtest: ${generated ? 'generated' : 'reusing'} ${path} (${fmtMB(statSync(path).size)})`);
      inputs.push({ kind, rows, path, bytes: statSync(path).size, ms: [], rss: [] });
    }
  }

  const baselines = [];
  // Fresh process per parse; files interleaved so a slow spell of the machine hits all of them.
  for (let r = 0; r < runs; r++) {
    const [nd, args] = nodeTsx(WORKER, ['baseline']);
    baselines.push(runJson(nd, args).peakRss);
    for (const inp of inputs) {
      const [n2, a2] = nodeTsx(WORKER, ['parse', inp.path]);
      const out = runJson(n2, a2);
      if (out.requests !== inp.rows)
        throw new Error(`${inp.path}: parsed ${out.requests} requests, expected ${inp.rows}`);
      inp.format = out.format;
      inp.timelineBuckets = out.timelineBuckets;
      inp.ms.push(out.ms);
      inp.rss.push(out.peakRss);
      process.stdout.write('.');
    }
  }
  process.stdout.write('\n');
  const baseline = median(baselines);

  const results = inputs.map((inp) => {
    const ms = median(inp.ms);
    const peak = median(inp.rss);
    return {
      kind: inp.kind,
      format: inp.format,
      rows: inp.rows,
      fileBytes: inp.bytes,
      timelineBuckets: inp.timelineBuckets,
      msMedian: ms,
      ms: inp.ms,
      rowsPerSecond: inp.rows / (ms / 1000),
      rowsPerSecondBest: inp.rows / (Math.min(...inp.ms) / 1000),
      megabytesPerSecond: inp.bytes / 2 ** 20 / (ms / 1000),
      peakRss: peak,
      netRss: peak - baseline,
    };
  });
  // Memory against file size: the extra RSS of the 1M-row log over the 250k-row one, per extra row.
  const growth = [];
  for (const { kind } of kinds) {
    const small = results.find((r) => r.kind === kind && r.rows === sizes[0]);
    const big = results.find((r) => r.kind === kind && r.rows === sizes[1]);
    growth.push({
      kind,
      format: big.format,
      extraRss: big.netRss - small.netRss,
      extraFileBytes: big.fileBytes - small.fileBytes,
      bytesPerExtraRow: (big.netRss - small.netRss) / (big.rows - small.rows),
    });
  }

  // Where the time goes, for any importer below target: one profiled run of its 1M-row log.
  const profiles = [];
  for (const r of results.filter((x) => x.rows === sizes[1] && x.rowsPerSecond < TARGET_ROWS_PER_S)) {
    const dir = join(outDir, `cpuprofile-${r.format}`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const inp = inputs.find((x) => x.kind === r.kind && x.rows === r.rows);
    runJson(process.execPath, [
      '--cpu-prof',
      `--cpu-prof-dir=${dir}`,
      '--import',
      'tsx',
      join(repoRoot, WORKER),
      'parse',
      inp.path,
    ]);
    const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
    profiles.push({
      format: r.format,
      cpuprofile: join(dir, file).slice(repoRoot.length + 1),
      top: topSelf(join(dir, file)),
    });
  }

  console.log(
    `\nParse time in-process (detection + streamed importer), median of ${runs} fresh processes (best: the fastest of them); target ≥ 1 M rows/s`,
  );
  printTable(
    ['log', 'rows', 'file', 'time', 'rows/s', 'best rows/s', 'MB/s', 'peak RSS', 'net RSS'],
    results.map((r) => [
      r.format,
      r.rows.toLocaleString('en'),
      fmtMB(r.fileBytes),
      fmtMs(r.msMedian),
      fmtRate(r.rowsPerSecond),
      fmtRate(r.rowsPerSecondBest),
      r.megabytesPerSecond.toFixed(0),
      fmtMB(r.peakRss),
      fmtMB(r.netRss),
    ]),
  );
  console.log(`(baseline node+tsx+importers: ${fmtMB(baseline)})`);
  console.log('\nMemory growth from 250k to 1M rows (a Float64 latency per row would be 8 B/row)');
  printTable(
    ['log', 'extra RSS', 'extra file', 'B per extra row'],
    growth.map((g) => [g.format, fmtMB(g.extraRss), fmtMB(g.extraFileBytes), g.bytesPerExtraRow.toFixed(1)]),
  );
  for (const p of profiles) {
    console.log(`\n${p.format} is below target; self time of one profiled 1M-row parse (${p.cpuprofile}):`);
    printTable(
      ['function', 'ms', 'share'],
      p.top.map((t) => [t.name, t.ms.toFixed(0), `${(100 * t.share).toFixed(1)}%`]),
    );
  }
  return { runs, targetRowsPerSecond: TARGET_ROWS_PER_S, baselineRss: baseline, results, growth, profiles };
}
