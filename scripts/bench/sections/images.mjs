// Section "images": what GET …/flamegraph.svg and …/flamegraph.png cost next to the JSON view they
// draw, on the large reference profiles and the demo's CPU profile (in one process, alternating).
import { join } from 'node:path';
import { fmtMs, fmtRatio, median, nodeTsx, printTable, repoRoot, runJson } from '../lib.mjs';

export async function run({ reps, quick }) {
  const files = [
    join(repoRoot, 'fixtures/demo/baseline/run-1/cpu.pb.gz'),
    join(repoRoot, 'fixtures/reference/pprof/large/go_types_tests_cpu.pb.gz'),
    ...(quick ? [] : [join(repoRoot, 'fixtures/reference/pprof/large/go_compile_merged_cpu.pb.gz')]),
  ];
  const [cmd, args] = nodeTsx('scripts/bench/images-worker.ts', [String(reps), ...files]);
  const raw = runJson(cmd, args);
  const rows = [];
  const result = {};
  for (const [name, r] of Object.entries(raw)) {
    const json = median(r.json);
    const svg = median(r.svg);
    const png = median(r.png);
    result[name] = {
      jsonMs: json,
      svgMs: svg,
      pngMs: png,
      svgVsJson: svg / json,
      frames: r.frames,
      svgBytes: r.svgBytes,
      pngBytes: r.pngBytes,
      reps,
    };
    rows.push([
      name,
      fmtMs(json),
      fmtMs(svg),
      fmtRatio(svg / json),
      fmtMs(png),
      String(r.frames),
      `${Math.round(r.svgBytes / 1024)} KiB`,
      `${Math.round(r.pngBytes / 1024)} KiB`,
    ]);
  }
  printTable(['profile', 'JSON view', 'SVG', 'SVG/JSON', 'PNG (+)', 'frames', 'SVG size', 'PNG size'], rows);
  return result;
}
