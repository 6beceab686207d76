#!/usr/bin/env node
// `npm run bench [-- SECTION… [--reps N] [--quick]]` — stagediff's performance figures.
// Each section prints a small table and writes test-artifacts/bench/<section>.json with its raw
// measurements and the machine they were taken on. The machine is shared and noisy, so sections
// report ratios against a reference measured in the same run, alternating, with medians.
// Method and the latest figures: docs/benchmarks.md.
import { parseArgs } from 'node:util';
import { machine, writeResult } from './bench/lib.mjs';

/** Sections in run order. To add one, add scripts/bench/sections/<name>.mjs exporting run(ctx). */
const SECTIONS = [
  'cli',
  'pprof',
  'diff',
  'loadtest',
  'appended',
  'server',
  'flamegraph',
  'browser',
  'transfer',
  'filters',
  'bigprofile',
  'images',
  'trace',
  'requests',
  'cached',
];

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    reps: { type: 'string' },
    quick: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log(`usage: node scripts/bench.mjs [${SECTIONS.join('|')}|all]… [--reps N] [--quick]`);
  process.exit(0);
}
const wanted = positionals.length === 0 || positionals.includes('all') ? SECTIONS : positionals;
for (const s of wanted) {
  if (!SECTIONS.includes(s)) {
    console.error(`bench: unknown section "${s}" (known: ${SECTIONS.join(', ')}, all)`);
    process.exit(2);
  }
}
const quick = values.quick;
const reps = values.reps ? Number(values.reps) : quick ? 3 : 7;
if (!Number.isInteger(reps) || reps < 1) {
  console.error('bench: --reps needs a positive integer');
  process.exit(2);
}

let failed = false;
for (const name of wanted) {
  console.log(`\n=== ${name} ===`);
  const started = new Date();
  const before = machine();
  const t0 = performance.now();
  try {
    const { run } = await import(`./bench/sections/${name}.mjs`);
    const result = await run({ reps, quick });
    const path = writeResult(name, {
      section: name,
      startedAt: started.toISOString(),
      seconds: (performance.now() - t0) / 1000,
      machine: before,
      loadAverageAfter: machine().loadAverage,
      ...result,
    });
    console.log(`(${((performance.now() - t0) / 1000).toFixed(0)} s; ${path.slice(process.cwd().length + 1)})`);
  } catch (e) {
    failed = true;
    console.error(`bench: section ${name} failed: ${e.stack ?? e}`);
  }
}
process.exit(failed ? 1 : 0);
