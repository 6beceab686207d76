// Section "pprof": our ingest + aggregation against `go tool pprof -top` on the large profiles, plus
// peak memory, plus protobufjs (reflection and generated code) decoding the same files.
import { spawnSync } from 'node:child_process';
import { closeSync, createReadStream, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { createGunzip } from 'node:zlib';
import {
  ensureBuild,
  fmtMB,
  fmtMs,
  fmtRatio,
  median,
  nodeTsx,
  outDir,
  printTable,
  repoRoot,
  runJson,
  startWorker,
  timeCommand,
  generatedInput,
} from '../lib.mjs';

const WORKER = 'scripts/bench/pprof-worker.ts';
// The cold CLI runs the compiled build, as the installed package does (section cli compares it with tsx).
const compiled = { ...process.env, STAGEDIFF_COMPILED: '1' };

/** Inflated size, counted as a stream so the parent stays small. */
async function decompressedSize(path) {
  const head = Buffer.alloc(2);
  const fd = openSync(path, 'r');
  readSync(fd, head, 0, 2, 0);
  closeSync(fd);
  if (head[0] !== 0x1f || head[1] !== 0x8b) return statSync(path).size;
  let n = 0;
  for await (const chunk of createReadStream(path).pipe(createGunzip())) n += chunk.length;
  return n;
}

/** Writes the pbjs static module for proto/profile.proto (test-artifacts/, not committed). */
function generateStatic() {
  const out = join(outDir, 'profile-static.cjs');
  const proto = join(repoRoot, 'proto', 'profile.proto');
  if (existsSync(out) && statSync(out).mtimeMs >= statSync(proto).mtimeMs) return true;
  const pbjs = join(repoRoot, 'node_modules', 'protobufjs-cli', 'bin', 'pbjs');
  if (!existsSync(pbjs)) return false;
  mkdirSync(outDir, { recursive: true });
  const r = spawnSync(process.execPath, [pbjs, '-t', 'static-module', '-w', 'commonjs', '-o', out, proto], {
    encoding: 'utf8',
  });
  return r.status === 0;
}

export async function run({ reps, quick }) {
  ensureBuild();
  const dir = process.env.STAGEDIFF_BENCH_PPROF_DIR ?? join(repoRoot, 'fixtures', 'reference', 'pprof', 'large');
  const files = readdirSync(dir)
    .filter((f) => /\.pb(\.gz)?$/.test(f))
    .sort()
    .map((f) => join(dir, f));
  // The 1M-sample profile is generated (seeded) rather than carried.
  if (!process.env.STAGEDIFF_BENCH_PPROF_DIR) files.push(generatedInput('synthetic-huge'));
  const haveGo = spawnSync('go', ['version']).status === 0;
  if (!haveGo) console.log('!! go is not installed: the go tool pprof reference is skipped, ratios are missing');
  const haveStatic = generateStatic();
  const pbjsReps = quick ? 1 : Math.min(reps, 3);

  // The floor under every cold CLI figure: starting node, tsx and the CLI's modules, no work.
  const startup = [];
  for (let r = 0; r < reps; r++)
    startup.push((await timeCommand(process.execPath, ['server/bin/stagediff.mjs', '--help'], { env: compiled })).ms);

  const [node, workerArgs] = nodeTsx(WORKER, ['serve']);
  const worker = startWorker(node, workerArgs);
  const results = [];
  try {
    for (const file of files) {
      const name = basename(file);
      process.stdout.write(`pprof: ${name} `);
      const decompressed = await decompressedSize(file);
      // Warm-up: file cache for every command, JIT for the warm worker.
      if (haveGo) await timeCommand('go', ['tool', 'pprof', '-symbolize=none', '-top', file]);
      await timeCommand(process.execPath, ['server/bin/stagediff.mjs', 'inspect', file, '--json'], { env: compiled });
      for (let i = 0; i < 2; i++) await worker.request({ op: 'ours', file });

      const ref = [];
      const cold = [];
      const warm = [];
      const steps = [
        async () => haveGo && ref.push(await timeCommand('go', ['tool', 'pprof', '-symbolize=none', '-top', file])),
        async () =>
          cold.push(
            await timeCommand(process.execPath, ['server/bin/stagediff.mjs', 'inspect', file, '--json'], {
              env: compiled,
            }),
          ),
        async () => {
          const r = await worker.request({ op: 'ours', file });
          if (r.error) throw new Error(r.error);
          warm.push(r.ms);
        },
      ];
      // Alternate, rotating the order each repetition so no command always runs after the same one.
      for (let r = 0; r < reps; r++) {
        for (let k = 0; k < steps.length; k++) await steps[(k + r) % steps.length]();
        process.stdout.write('.');
      }

      const pbjs = {};
      for (const op of ['pbjs-reflect', ...(haveStatic ? ['pbjs-static'] : [])]) {
        // A warm-up, then up to pbjsReps timed runs within a 10 s budget: one decode of the
        // synthetic profile takes 10 s or more, and a second warm-up would teach nothing.
        const first = await worker.request({ op, file });
        if (first.error) throw new Error(first.error);
        const ms = [];
        const budget = performance.now() + 10_000;
        for (let r = 0; r < pbjsReps && (r === 0 || performance.now() < budget); r++) {
          const x = await worker.request({ op, file });
          if (x.error) throw new Error(x.error);
          ms.push(x.ms);
          process.stdout.write('.');
        }
        pbjs[op] = { msMedian: median(ms), ms };
      }

      // Peak memory, each in a fresh process that does only that: baseline (node + tsx + our
      // modules, nothing parsed), our parse, protobufjs decode.
      const rss = (op, n) => {
        const xs = [];
        for (let i = 0; i < n; i++) {
          const [nd, args] = nodeTsx(WORKER, ['rss', op, file]);
          xs.push(runJson(nd, args).peakRss);
        }
        return median(xs);
      };
      const baseline = rss('baseline', 3);
      const baselinePbjs = rss('baseline-pbjs', 1);
      const ours = rss('parse', 3);
      for (const op of Object.keys(pbjs)) pbjs[op].peakRss = rss(op, 1);
      for (const op of Object.keys(pbjs)) pbjs[op].peakRssNet = pbjs[op].peakRss - baselinePbjs;
      process.stdout.write(' done\n');

      const msOf = (x) => (typeof x === 'number' ? x : x.ms);
      const paired = (xs) => (haveGo ? median(xs.map((x, i) => msOf(x) / ref[i].ms)) : null);
      const bestOver = (xs) => (haveGo ? Math.min(...xs.map(msOf)) / Math.min(...ref.map(msOf)) : null);
      results.push({
        file: name,
        compressedBytes: statSync(file).size,
        decompressedBytes: decompressed,
        reference: haveGo
          ? {
              command: 'go tool pprof -symbolize=none -top FILE',
              msMedian: median(ref.map((x) => x.ms)),
              ms: ref.map((x) => x.ms),
              peakRss: median(ref.map((x) => x.peakRss).filter((x) => x !== null)),
            }
          : null,
        oursInProcess: { msMedian: median(warm), ms: warm, ratio: paired(warm), ratioBest: bestOver(warm) },
        oursCli: {
          command: 'node server/bin/stagediff.mjs inspect FILE --json (compiled)',
          msMedian: median(cold.map((x) => x.ms)),
          ms: cold.map((x) => x.ms),
          ratio: paired(cold),
          ratioBest: bestOver(cold),
          peakRss: median(cold.map((x) => x.peakRss).filter((x) => x !== null)),
        },
        memory: {
          baselineRss: baseline,
          parsePeakRss: ours,
          parseNetRss: ours - baseline,
          peakOverDecompressed: ours / decompressed,
          netOverDecompressed: (ours - baseline) / decompressed,
        },
        protobufjs: { baselineRss: baselinePbjs, ...pbjs },
      });
    }
  } finally {
    await worker.close();
  }

  console.log(
    `\nTime: median of ${reps} alternating repetitions. ratio = median over repetitions of ours / go tool pprof in the same repetition; best = fastest ours / fastest pprof. Target ≤ 0.5`,
  );
  printTable(
    [
      'profile',
      'inflated',
      'go tool pprof -top',
      'ours in-process',
      'ratio',
      'best',
      'ours CLI (cold)',
      'ratio',
      'best',
    ],
    results.map((r) => [
      r.file,
      fmtMB(r.decompressedBytes),
      fmtMs(r.reference?.msMedian ?? null),
      fmtMs(r.oursInProcess.msMedian),
      fmtRatio(r.oursInProcess.ratio),
      fmtRatio(r.oursInProcess.ratioBest),
      fmtMs(r.oursCli.msMedian),
      fmtRatio(r.oursCli.ratio),
      fmtRatio(r.oursCli.ratioBest),
    ]),
  );
  console.log(`(cold CLI floor: \`stagediff --help\` takes ${fmtMs(median(startup))}, median of ${reps})`);
  console.log(
    '\nMemory: peak RSS (VmHWM) of a process that only parses, median of 3; net = minus a node+tsx+modules baseline (target ≤ 3× inflated)',
  );
  printTable(
    ['profile', 'inflated', 'ours peak', '×infl', 'ours net', '×infl', 'pprof peak', 'CLI peak'],
    results.map((r) => [
      r.file,
      fmtMB(r.decompressedBytes),
      fmtMB(r.memory.parsePeakRss),
      fmtRatio(r.memory.peakOverDecompressed),
      fmtMB(r.memory.parseNetRss),
      fmtRatio(r.memory.netOverDecompressed),
      fmtMB(r.reference?.peakRss ?? null),
      fmtMB(r.oursCli.peakRss),
    ]),
  );
  console.log(
    `\nprotobufjs (inflate + Profile.decode only, no model built), in-process after a warm-up, median of up to ${pbjsReps} (10 s budget), peak RSS of one fresh process`,
  );
  printTable(
    ['profile', 'ours parse+top', 'pbjs reflect', 'pbjs static', 'ours net RSS', 'reflect net RSS', 'static net RSS'],
    results.map((r) => [
      r.file,
      fmtMs(r.oursInProcess.msMedian),
      fmtMs(r.protobufjs['pbjs-reflect']?.msMedian ?? null),
      fmtMs(r.protobufjs['pbjs-static']?.msMedian ?? null),
      fmtMB(r.memory.parseNetRss),
      fmtMB(r.protobufjs['pbjs-reflect']?.peakRssNet ?? null),
      fmtMB(r.protobufjs['pbjs-static']?.peakRssNet ?? null),
    ]),
  );
  return {
    reps,
    pbjsReps,
    directory: dir,
    cliStartup: { command: 'node server/bin/stagediff.mjs --help (compiled)', msMedian: median(startup), ms: startup },
    files: results,
  };
}
