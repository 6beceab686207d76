// Worker of the "images" bench section: for each profile, alternating, the JSON flamegraph view
// (call tree + JSON text, what GET …/flamegraph computes) against the SVG image (call tree + SVG, what
// GET …/flamegraph.svg computes) and the PNG rasterisation of that SVG. Prints one JSON line, ms.
import { basename } from 'node:path';
import { callTree } from '../../server/src/analysis/call-tree.ts';
import { total } from '../../server/src/analysis/flat-cum.ts';
import { ingest } from '../../server/src/ingest/detect.ts';
import { renderFlameSvg } from '../../server/src/render/flamegraph-svg.ts';
import { svgToPng } from '../../server/src/services/images.ts';

const [reps, ...files] = [Number(process.argv[2]), ...process.argv.slice(3)];
const out: Record<
  string,
  { json: number[]; svg: number[]; png: number[]; frames: number; svgBytes: number; pngBytes: number }
> = {};
for (const file of files) {
  const parsed = await ingest({ name: basename(file), path: file });
  if (parsed.kind !== 'profile') throw new Error(`${file}: not a profile`);
  const p = parsed.profile;
  const found = p.sampleTypes.findIndex((t) => t.type === p.defaultSampleType);
  const idx = found >= 0 ? found : p.sampleTypes.length - 1;
  const r = { json: [] as number[], svg: [] as number[], png: [] as number[], frames: 0, svgBytes: 0, pngBytes: 0 };
  for (let i = 0; i < reps; i++) {
    let t0 = performance.now();
    const { tree } = callTree(p, idx, 0);
    JSON.stringify({ total: total(p, idx), tree });
    r.json.push(performance.now() - t0);
    t0 = performance.now();
    const svg = renderFlameSvg(callTree(p, idx, 0).tree, {
      title: basename(file),
      subtitle: 'bench',
      unit: p.sampleTypes[idx]!.unit,
    });
    r.svg.push(performance.now() - t0);
    t0 = performance.now();
    const png = svgToPng(svg);
    r.png.push(performance.now() - t0);
    r.frames = (svg.match(/<rect x=/g) ?? []).length;
    r.svgBytes = svg.length;
    r.pngBytes = png.length;
  }
  out[basename(file)] = r;
}
console.log(JSON.stringify(out));
