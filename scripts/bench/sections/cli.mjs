// Section "cli": what a user waits for, in fresh processes. The compiled CLI (server/dist, as the
// installed package and the Docker image run it) against `node -e 0` for start-up, and `stagediff
// inspect` of the large profiles against `go tool pprof -top`, alternating in one run. The same
// commands through tsx (how a checkout runs the sources) are measured beside them as the "before".
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ensureBuild, fmtMs, fmtRatio, generatedInput, median, printTable, repoRoot, timeCommand } from '../lib.mjs';

const BIN = join(repoRoot, 'server/bin/stagediff.mjs');
const compiledEnv = { ...process.env, STAGEDIFF_COMPILED: '1' };
const sourcesEnv = { ...process.env, STAGEDIFF_COMPILED: '0' };

function profilesDir() {
  if (process.env.STAGEDIFF_BENCH_PPROF_DIR) return process.env.STAGEDIFF_BENCH_PPROF_DIR;
  return join(repoRoot, 'fixtures', 'reference', 'pprof', 'large');
}

/** Runs each step once per repetition, rotating the order; returns each step's wall times. */
async function alternate(steps, reps) {
  const out = steps.map(() => []);
  for (let r = 0; r < reps; r++) {
    for (let k = 0; k < steps.length; k++) {
      const i = (k + r) % steps.length;
      out[i].push((await steps[i]()).ms);
    }
    process.stdout.write('.');
  }
  return out;
}

export async function run({ reps, quick }) {
  ensureBuild();
  const node = process.execPath;
  const startReps = Math.max(reps, quick ? 5 : 15);

  process.stdout.write('cli: start-up ');
  const [nodeMs, helpMs, helpTsxMs] = await alternate(
    [
      () => timeCommand(node, ['-e', '0']),
      () => timeCommand(node, [BIN, '--help'], { env: compiledEnv }),
      () => timeCommand(node, [BIN, '--help'], { env: sourcesEnv }),
    ],
    startReps,
  );
  process.stdout.write(' done\n');
  const paired = (xs, ref) => median(xs.map((x, i) => x / ref[i]));
  const startup = {
    reps: startReps,
    nodeE0: { command: 'node -e 0', msMedian: median(nodeMs), ms: nodeMs },
    help: {
      command: 'stagediff --help (compiled)',
      msMedian: median(helpMs),
      ms: helpMs,
      ratio: paired(helpMs, nodeMs),
      target: 2,
    },
    helpTsx: {
      command: 'stagediff --help (sources through tsx)',
      msMedian: median(helpTsxMs),
      ms: helpTsxMs,
      ratio: paired(helpTsxMs, nodeMs),
    },
  };

  const dir = profilesDir();
  const haveGo = spawnSync('go', ['version']).status === 0;
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => /\.pb(\.gz)?$/.test(f))
        .sort()
        .map((f) => join(dir, f))
    : [];
  // The 1M-sample profile is generated (seeded) rather than carried.
  if (!process.env.STAGEDIFF_BENCH_PPROF_DIR) files.push(generatedInput('synthetic-huge'));
  if (files.length === 0) console.log(`cli: no large profiles in ${dir} (set STAGEDIFF_BENCH_PPROF_DIR)`);
  if (!haveGo) console.log('cli: go is not installed; the go tool pprof reference is skipped');
  const profiles = [];
  for (const file of files) {
    const name = basename(file);
    process.stdout.write(`cli: ${name} `);
    const pprof = () => timeCommand('go', ['tool', 'pprof', '-symbolize=none', '-top', file]);
    const ours = () => timeCommand(node, [BIN, 'inspect', file], { env: compiledEnv });
    const oursTsx = () => timeCommand(node, [BIN, 'inspect', file], { env: sourcesEnv });
    // Warm-up: the file in the page cache, go's build cache for `go tool`.
    for (const f of [pprof, ours]) if (haveGo || f !== pprof) await f();
    const steps = haveGo ? [pprof, ours, oursTsx] : [ours, oursTsx];
    const times = await alternate(steps, reps);
    process.stdout.write(' done\n');
    const [ref, cold, coldTsx] = haveGo ? times : [null, ...times];
    profiles.push({
      file: name,
      compressedBytes: statSync(file).size,
      pprof: ref && { command: 'go tool pprof -symbolize=none -top FILE', msMedian: median(ref), ms: ref },
      inspect: {
        command: 'stagediff inspect FILE (compiled)',
        msMedian: median(cold),
        ms: cold,
        ratio: ref && paired(cold, ref),
        target: 0.5,
      },
      inspectTsx: {
        command: 'stagediff inspect FILE (through tsx)',
        msMedian: median(coldTsx),
        ms: coldTsx,
        ratio: ref && paired(coldTsx, ref),
      },
    });
  }

  console.log(
    `\nStart-up: median of ${startReps} alternating cold runs; ratio = median over repetitions of the command / node -e 0 in the same repetition (target ≤ 2)`,
  );
  printTable(
    ['command', 'median', '× node -e 0'],
    [
      ['node -e 0', fmtMs(startup.nodeE0.msMedian), '1.00'],
      ['stagediff --help (compiled)', fmtMs(startup.help.msMedian), fmtRatio(startup.help.ratio)],
      ['stagediff --help (tsx, before)', fmtMs(startup.helpTsx.msMedian), fmtRatio(startup.helpTsx.ratio)],
    ],
  );
  if (profiles.length) {
    console.log(
      `\nCold inspect: median of ${reps} alternating runs; ratio = median over repetitions of ours / go tool pprof -top in the same repetition (target ≤ 0.5)`,
    );
    printTable(
      ['profile', 'go tool pprof -top', 'inspect (compiled)', 'ratio', 'inspect (tsx, before)', 'ratio'],
      profiles.map((p) => [
        p.file,
        fmtMs(p.pprof?.msMedian ?? null),
        fmtMs(p.inspect.msMedian),
        fmtRatio(p.inspect.ratio),
        fmtMs(p.inspectTsx.msMedian),
        fmtRatio(p.inspectTsx.ratio),
      ]),
    );
  }
  return { reps, directory: dir, startup, profiles };
}
