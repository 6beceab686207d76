import { formatSignedValue, formatValue } from '../api/format.ts';

/**
 * Flamegraphs as standalone SVG documents, for places that show an image but run no script: a pull
 * request comment, a job summary, a wiki. Root on top (the web view's default), frames ordered as the
 * tree gives them, widths proportional to `value`.
 *
 * Function names are untrusted text: every string reaches the document through `xmlText` (escaped,
 * characters XML forbids replaced), never as markup, so the output is always well-formed.
 */

/** A node of a call tree (flamegraph) or diff tree (`delta`, `base`, `target` present). */
export interface SvgFrame {
  name: string;
  value: number;
  delta?: number;
  base?: number;
  target?: number;
  children: SvgFrame[];
}

export interface FlameSvgOptions {
  /** First header line, e.g. "Orders service — baseline". */
  title: string;
  /** Second header line, e.g. "cpu · 9.48 s total". */
  subtitle: string;
  /** Unit of `value`/`delta`: a pprof unit ("nanoseconds", "bytes", "count"), "fraction" or "UNIT/request". */
  unit: string;
  /** Image width in px (default 1200). */
  width?: number;
  /** Diff colouring: set for diff trees. `reference` is the larger profile total, `noiseFloor` a fraction of it. */
  diff?: { reference: number; noiseFloor: number };
  /** Most frames drawn (default 20,000); the rest is left out and the footer says so. */
  maxFrames?: number;
  /**
   * Deepest level drawn (default 200, root = 0): bounds the image's height, so a PNG of a 1,000-level
   * stack stays a few megapixels. Deeper frames are left out and counted in the footer.
   */
  maxDepth?: number;
}

const ROW = 18;
const FONT = 11;
/** Advance of one character of the monospace font at FONT px (DejaVu Sans Mono: 0.602 em). */
const CHAR = FONT * 0.61;
const PAD = 10;
const HEADER = 48;
const FOOTER = 34;
/** Frames narrower than this are not drawn (their width still counts in their parent). */
const MIN_PX = 0.75;

/**
 * The text with every character XML 1.0 forbids in a document (C0 controls other than tab, LF and CR,
 * lone surrogates, U+FFFE and U+FFFF) replaced by U+FFFD, so any name yields a well-formed document.
 */
function xmlChars(s: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let bad = (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) || c === 0xfffe || c === 0xffff;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else bad = true;
    } else if (c >= 0xdc00 && c <= 0xdfff) bad = true;
    if (bad) {
      out += `${s.slice(from, i)}\uFFFD`;
      from = i + 1;
    }
  }
  return from === 0 ? s : out + s.slice(from);
}

/** Text as XML character data, safe in element content and in quoted attributes. */
export function xmlText(s: string): string {
  return xmlChars(s)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

type Rgb = [number, number, number];
const RED: Rgb = [214, 39, 40];
const BLUE: Rgb = [31, 100, 200];
const NEUTRAL: Rgb = [214, 214, 214];

function mix(a: Rgb, b: Rgb, t: number): string {
  const c = a.map((v, i) => Math.round(v + (b[i]! - v) * t));
  return `rgb(${c[0]},${c[1]},${c[2]})`;
}

/**
 * The dashboard's diff scale, so an embedded image reads like the web view: red = more in the target,
 * blue = less, grey within the noise floor; intensity grows with the change relative to the larger side.
 */
export function diffFill(
  f: Pick<SvgFrame, 'delta' | 'base' | 'target'>,
  reference: number,
  noiseFloor: number,
): string {
  const delta = f.delta ?? 0;
  const base = f.base ?? 0;
  const target = f.target ?? 0;
  if (delta === 0 || Math.abs(delta) <= Math.abs(reference) * noiseFloor) return mix(NEUTRAL, NEUTRAL, 0); // grey
  const larger = Math.max(Math.abs(base), Math.abs(target));
  const rel = base === 0 || target === 0 || larger === 0 ? 1 : Math.abs(delta) / larger;
  return mix(NEUTRAL, delta > 0 ? RED : BLUE, Math.min(1, 0.2 + 0.8 * Math.sqrt(rel)));
}

/** A warm colour per function name (stable across images, like the classic flamegraph palette). */
function warmFill(name: string): string {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  const u = (h >>> 0) / 2 ** 32;
  const v = ((h >>> 8) & 0xffff) / 0xffff;
  return `rgb(${205 + Math.round(50 * u)},${Math.round(80 + 150 * v)},${Math.round(40 + 30 * u)})`;
}

function label(name: string, px: number): string | null {
  const fits = Math.floor((px - 6) / CHAR);
  if (fits < 3) return null;
  const chars = [...name];
  return chars.length <= fits ? name : `${chars.slice(0, fits - 1).join('')}…`;
}

function tooltip(f: SvgFrame, parentValue: number, rootValue: number, unit: string, diff: boolean): string {
  if (diff) {
    const rel = f.base ? ` (${formatSignedValue((f.delta ?? 0) / f.base, 'fraction')})` : f.target ? ' (new)' : '';
    return `${f.name}\nbase ${formatValue(f.base ?? 0, unit)} → target ${formatValue(f.target ?? 0, unit)}, Δ ${formatSignedValue(f.delta ?? 0, unit)}${rel}`;
  }
  const share = rootValue > 0 ? ` (${formatValue(f.value / rootValue, 'fraction')} of total` : '';
  const ofParent =
    parentValue > 0 && share ? `, ${formatValue(f.value / parentValue, 'fraction')} of caller)` : share ? ')' : '';
  return `${f.name}\n${formatValue(f.value, unit)}${share}${ofParent}`;
}

/**
 * Renders a call tree or diff tree as one SVG document (a string). Deterministic: the same tree and
 * options give the same bytes. Work is bounded by `maxFrames` and by the width (a level holds at most
 * width / MIN_PX frames).
 */
export function renderFlameSvg(root: SvgFrame, opts: FlameSvgOptions): string {
  const width = Math.round(opts.width ?? 1200);
  const maxFrames = opts.maxFrames ?? 20_000;
  const depthLimit = opts.maxDepth ?? 200;
  const inner = width - 2 * PAD;
  const scale = root.value > 0 ? inner / root.value : 0;
  const diff = opts.diff;
  const frames: string[] = [];
  let maxDepth = 0;
  let dropped = 0;
  // Iterative walk: trees may be 1,000 levels deep.
  const stack: { f: SvgFrame; x: number; depth: number; parent: number }[] = [{ f: root, x: PAD, depth: 0, parent: 0 }];
  while (stack.length > 0) {
    const { f, x, depth, parent } = stack.pop()!;
    const w = f.value * scale;
    if (w < MIN_PX) continue;
    // Past the limit the walk goes on only to count what is left out.
    if (frames.length >= maxFrames || depth > depthLimit) dropped++;
    else {
      maxDepth = Math.max(maxDepth, depth);
      const y = HEADER + depth * ROW;
      const fill = diff
        ? diffFill(f, diff.reference, diff.noiseFloor)
        : depth === 0
          ? 'rgb(200,200,200)'
          : warmFill(f.name);
      const text = label(depth === 0 ? 'all' : f.name, w);
      frames.push(
        `<g><title>${xmlText(tooltip(depth === 0 ? { ...f, name: 'all' } : f, parent, root.value, opts.unit, !!diff))}</title>` +
          `<rect x="${x.toFixed(2)}" y="${y}" width="${w.toFixed(2)}" height="${ROW - 1}" rx="2" fill="${fill}"/>` +
          (text === null ? '' : `<text x="${(x + 3).toFixed(2)}" y="${y + ROW - 5}">${xmlText(text)}</text>`) +
          '</g>',
      );
    }
    let cx = x;
    const next: (typeof stack)[number][] = [];
    for (const c of f.children) {
      next.push({ f: c, x: cx, depth: depth + 1, parent: f.value });
      cx += c.value * scale;
    }
    for (let i = next.length - 1; i >= 0; i--) stack.push(next[i]!);
  }
  const height = HEADER + (maxDepth + 1) * ROW + FOOTER;
  const legend = diff
    ? `red: more in the target · blue: less · grey: no change${diff.noiseFloor > 0 ? ` or within ${formatValue(diff.noiseFloor, 'fraction')} of the total` : ''} · width: base + target`
    : 'width: share of the total · colour: function name';
  const note =
    dropped > 0 ? ` · ${dropped} more frames not drawn (limits: ${maxFrames} frames, ${depthLimit} levels)` : '';
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="${FONT}">`,
    `<title>${xmlText(opts.title)}</title>`,
    `<rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `<text x="${PAD}" y="20" font-size="14" font-weight="bold">${xmlText(opts.title)}</text>`,
    `<text x="${PAD}" y="38" fill="#444444">${xmlText(opts.subtitle)}</text>`,
    ...frames,
    `<text x="${PAD}" y="${height - 12}" fill="#666666">${xmlText(legend + note)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
