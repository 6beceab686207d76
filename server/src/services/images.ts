import { Resvg } from '@resvg/resvg-js';
import type { ComparisonTree } from '../store/index.ts';
import { formatValue } from '../api/format.ts';
import { renderFlameSvg } from '../render/flamegraph-svg.ts';
import type { AnalysisService } from './analysis.ts';
import type { Query } from '../api/endpoints.ts';
import { FILTERS } from '../api/options.ts';
import { callPath, choice, compileFilters, diffQuery, filterArgs, treeQuery } from './view-queries.ts';
import { findStage } from './stage-profiles.ts';

/** The image endpoints, as analysis operations. */
export type ImageOp =
  | { op: 'flamegraphSvg'; query: Query<'flamegraphSvg'> }
  | { op: 'flamegraphPng'; query: Query<'flamegraphPng'> }
  | { op: 'diffSvg'; query: Query<'diffSvg'> }
  | { op: 'diffPng'; query: Query<'diffPng'> };

function filterWords(q: Parameters<typeof filterArgs>[0] & { root?: string | string[] }): string {
  const f = filterArgs(q);
  const parts = FILTERS.filter((k) => f[k]).map((k) => `${k}=${f[k]}`);
  const root = callPath(q.root);
  if (root.length > 0) parts.push(`subtree ${root.join(' → ')}`);
  return parts.length ? ` · ${parts.join(' ')}` : '';
}

/**
 * Rasterises an SVG with resvg (no browser). Text uses the machine's fonts; where none is installed
 * the frames are still drawn, without their labels.
 */
export function svgToPng(svg: string): Buffer {
  const r = new Resvg(svg, {
    font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans Mono', monospaceFamily: 'DejaVu Sans Mono' },
  });
  return Buffer.from(r.render().asPng());
}

/** The flamegraph and diff views as one image: SVG text, or PNG as base64 (the worker protocol is text). */
export async function renderImageOp(svc: AnalysisService, tree: ComparisonTree, a: ImageOp): Promise<string> {
  const title = tree.comparison.title;
  let svg: string;
  if (a.op === 'flamegraphSvg' || a.op === 'flamegraphPng') {
    const q = a.query;
    const f = await svc.flamegraph(tree, {
      stage: q.stage,
      ...choice(q),
      ...treeQuery(q),
      filters: compileFilters(q),
      granularity: q.granularity,
    });
    svg = renderFlameSvg(f.tree, {
      title: `${title} — ${findStage(tree, q.stage).name}`,
      subtitle: `${f.sampleType} · total ${formatValue(f.total, f.unit)}${filterWords(q)}`,
      unit: f.unit,
      width: q.width,
    });
  } else {
    const q = a.query;
    const d = (await svc.diffResult(tree, diffQuery(q))).view;
    svg = renderFlameSvg(d.tree, {
      title: `${title} — ${findStage(tree, q.base, 'base').name} → ${findStage(tree, q.target, 'target').name}`,
      subtitle: `${d.sampleType} · ${d.mode === 'per-request' ? 'per request' : d.mode} · base ${formatValue(d.tree.base, d.unit)} → target ${formatValue(d.tree.target, d.unit)}${filterWords(q)}`,
      unit: d.unit,
      width: q.width,
      diff: { reference: Math.max(Math.abs(d.tree.base), Math.abs(d.tree.target)), noiseFloor: q.noise ?? 0.001 },
    });
  }
  return a.op.endsWith('Png') ? svgToPng(svg).toString('base64') : svg;
}
