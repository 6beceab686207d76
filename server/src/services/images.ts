import { Resvg } from '@resvg/resvg-js';
import type { ComparisonTree } from '../store/index.ts';
import { formatValue, renderFlameSvg } from '../render/flamegraph-svg.ts';
import type { AnalysisService } from './analysis.ts';
import { type AnalysisOp, compileFilters } from './analysis-ops.ts';

type ImageOp = Extract<AnalysisOp, { op: 'flamegraph-image' | 'diff-image' }>;

function filterWords(f: { focus?: string; ignore?: string; hide?: string; show?: string }): string {
  const parts = (['focus', 'ignore', 'hide', 'show'] as const).filter((k) => f[k]).map((k) => `${k}=${f[k]}`);
  return parts.length ? ` · ${parts.join(' ')}` : '';
}

function stageName(tree: ComparisonTree, id: string): string {
  return tree.stages.find((s) => s.id === id)?.name ?? id;
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
  if (a.op === 'flamegraph-image') {
    const f = await svc.flamegraph(tree, a.stage, a.sampleType, a.minFraction, compileFilters(a.filters));
    svg = renderFlameSvg(f.tree, {
      title: `${title} — ${stageName(tree, a.stage)}`,
      subtitle: `${f.sampleType} · total ${formatValue(f.total, f.unit)}${filterWords(a.filters)}`,
      unit: f.unit,
      width: a.width,
    });
  } else {
    const d = await svc.diff(tree, a.base, a.target, a.sampleType, a.mode, a.minFraction, compileFilters(a.filters));
    svg = renderFlameSvg(d.tree, {
      title: `${title} — ${stageName(tree, a.base)} → ${stageName(tree, a.target)}`,
      subtitle: `${d.sampleType} · ${d.mode} · base ${formatValue(d.tree.base, d.unit)} → target ${formatValue(d.tree.target, d.unit)}${filterWords(a.filters)}`,
      unit: d.unit,
      width: a.width,
      diff: { reference: Math.max(Math.abs(d.tree.base), Math.abs(d.tree.target)), noiseFloor: a.noise },
    });
  }
  return a.format === 'png' ? svgToPng(svg).toString('base64') : svg;
}
