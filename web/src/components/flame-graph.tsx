import { useCallback, useEffect, useId, useLayoutEffect, useMemo, useRef, useState } from 'react';
import { loadSearchEngine, makeMatcher, searchEngineReady } from '../lib/tree.ts';

/** A frame as the graph reads it: a name, a width (`value`) and children. */
export interface FlameDatum {
  name: string;
  value: number;
  children: FlameDatum[];
}

/** What `colorFor` returns for a frame drawn with the graph's hatch (diagonal stripes). */
export const HATCH = 'hatch';
/** The fill of frames matching the search. */
export const HIGHLIGHT = '#e600e6';
/** Row height in CSS pixels. */
export const ROW = 18;
const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
/** Frames narrower than this show no label. */
const LABEL_MIN_PX = 22;

export interface FlameGraphProps<T extends FlameDatum> {
  /** The frame drawn full width: the whole tree's root, or the frame zoomed into. */
  tree: T;
  /** Accessible name of the graph ("Flamegraph of baseline"). */
  label: string;
  /** Tooltip text for a frame (plain text, may contain newlines); also its accessible name. */
  tooltipFor: (data: T) => string;
  /** Label drawn in the frame; defaults to the function name. */
  nameFor?: (data: T) => string;
  /** Fill colour, or HATCH; defaults to a warm colour per function name. */
  colorFor?: (data: T) => string;
  /** The colours of the hatch drawn for HATCH. */
  hatch?: { ground: string; stripe: string } | null;
  search: string;
  onSearchResult?: (matched: number, total: number) => void;
  /**
   * A click (or Enter) on a frame: its function ('' for the frame drawn full width) and its call path
   * below that frame (names, outermost first; [] for it). Escape reports the frame drawn full width.
   */
  onFocus?: (name: string, path: string[]) => void;
  /** Frames narrower than this many pixels are not drawn. */
  minFrameSize?: number;
}

/** The frames drawn, in parallel arrays: depth-first order, so a frame's parent comes before it. */
interface Layout<T> {
  node: T[];
  x: Float64Array;
  w: Float64Array;
  row: Int32Array;
  parent: Int32Array;
  /** Each row's frames, left to right. */
  rows: number[][];
  /** Each frame's first drawn child, or -1. */
  firstChild: Int32Array;
  size: number;
  height: number;
  width: number;
}

/** Lays the tree out: root on top, each frame as wide as its value, children left to right as given. */
export function layoutFlame<T extends FlameDatum>(tree: T, width: number, minPx: number): Layout<T> {
  const node: T[] = [tree];
  const xs: number[] = [0];
  const ws: number[] = [width];
  const rowOf: number[] = [0];
  const parents: number[] = [-1];
  const scale = width / Math.max(Math.abs(tree.value), Number.MIN_VALUE);
  // Iterative: trees can be a thousand frames deep.
  const stack = [0];
  while (stack.length > 0) {
    const i = stack.pop() as number;
    let x = xs[i] as number;
    for (const c of (node[i] as T).children as T[]) {
      const w = Math.abs(c.value) * scale;
      if (w >= minPx) {
        stack.push(node.length);
        node.push(c);
        xs.push(x);
        ws.push(w);
        rowOf.push((rowOf[i] as number) + 1);
        parents.push(i);
      }
      x += w;
    }
  }
  const size = node.length;
  const row = Int32Array.from(rowOf);
  const x = Float64Array.from(xs);
  let depth = 0;
  for (let i = 0; i < size; i++) depth = Math.max(depth, row[i] as number);
  const rows: number[][] = Array.from({ length: depth + 1 }, () => []);
  for (let i = 0; i < size; i++) rows[row[i] as number]?.push(i);
  for (const r of rows) r.sort((a, b) => (x[a] as number) - (x[b] as number));
  const parent = Int32Array.from(parents);
  const firstChild = new Int32Array(size).fill(-1);
  for (let i = size - 1; i > 0; i--) {
    const p = parent[i] as number;
    const f = firstChild[p] as number;
    if (f < 0 || (x[i] as number) < (x[f] as number)) firstChild[p] = i;
  }
  return { node, x, w: Float64Array.from(ws), row, parent, rows, firstChild, size, height: (depth + 1) * ROW, width };
}

/** A warm colour per name (red to yellow), stable across graphs so one function looks alike everywhere. */
function warmColor(name: string): string {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619);
  const v = ((h >>> 0) % 1000) / 1000;
  return `rgb(${220 + Math.round(35 * v)}, ${Math.round(90 + 140 * (1 - v))}, ${Math.round(40 + 30 * v)})`;
}

const inkCache = new Map<string, string>();
/** Dark text on light fills, light text on dark ones. */
function inkFor(fill: string): string {
  let ink = inkCache.get(fill);
  if (ink) return ink;
  let rgb: number[] = [];
  const m = /^rgb\((\d+),\s*(\d+),\s*(\d+)\)$/.exec(fill);
  if (m) rgb = [Number(m[1]), Number(m[2]), Number(m[3])];
  else if (/^#[0-9a-f]{6}$/i.test(fill)) rgb = [1, 3, 5].map((k) => Number.parseInt(fill.slice(k, k + 2), 16));
  const lum = rgb.length === 3 ? 0.299 * (rgb[0] ?? 0) + 0.587 * (rgb[1] ?? 0) + 0.114 * (rgb[2] ?? 0) : 255;
  ink = lum < 128 ? '#fff' : '#111';
  if (inkCache.size < 4096) inkCache.set(fill, ink);
  return ink;
}

/** Text that fits `max` pixels: the whole text, or its start and an ellipsis; '' when too narrow. */
function makeFitter(ctx: CanvasRenderingContext2D) {
  const widths = new Map<string, number>();
  const measure = (s: string) => {
    let w = widths.get(s);
    if (w === undefined) {
      w = ctx.measureText(s).width;
      if (widths.size < 20_000) widths.set(s, w);
    }
    return w;
  };
  return (text: string, max: number): string => {
    if (max < LABEL_MIN_PX - 6 || text === '') return '';
    const full = measure(text);
    if (full <= max) return text;
    // Start from the average character width, then step to the longest prefix that fits.
    let n = Math.min(text.length - 1, Math.floor((max / full) * text.length));
    while (n > 0 && ctx.measureText(`${text.slice(0, n)}…`).width > max) n--;
    while (n + 1 < text.length && ctx.measureText(`${text.slice(0, n + 1)}…`).width <= max) n++;
    return n >= 2 ? `${text.slice(0, n)}…` : '';
  };
}

/** A tile of diagonal stripes over a ground colour, repeated as the hatch's pattern. */
function hatchTile(ground: string, stripe: string): HTMLCanvasElement {
  const s = 8;
  const c = document.createElement('canvas');
  c.width = s;
  c.height = s;
  const g = c.getContext('2d');
  if (!g) return c;
  g.fillStyle = ground;
  g.fillRect(0, 0, s, s);
  g.strokeStyle = stripe;
  g.lineWidth = 2.5;
  g.beginPath();
  for (const o of [-s, 0, s]) {
    g.moveTo(o, s);
    g.lineTo(o + s, 0);
  }
  g.stroke();
  return c;
}

function xmlText(s: string): string {
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0;
    if (ch === '&') out += '&amp;';
    else if (ch === '<') out += '&lt;';
    else if (ch === '>') out += '&gt;';
    else if (ch === '"') out += '&quot;';
    else if ((c < 0x20 && c !== 0x09) || c === 0xfffe || c === 0xffff || (c >= 0xd800 && c <= 0xdfff)) out += '\uFFFD';
    else out += ch;
  }
  return out;
}

type SvgExport = (background: string) => { svg: string; width: number; height: number } | null;
const exporters = new WeakMap<Element, SvgExport>();

/**
 * The first flamegraph inside `scope`, as drawn, as a standalone SVG document (labels as <text>, the
 * hatch as a pattern), or null when none is drawn.
 */
export function flameGraphSvg(
  scope: Element | null,
  background: string,
): { svg: string; width: number; height: number } | null {
  const el = scope?.querySelector('.flame-graph');
  const f = el ? exporters.get(el) : undefined;
  return f ? f(background) : null;
}

/**
 * A flame graph drawn on one canvas (sharp at any devicePixelRatio), whatever its number of frames:
 * the layout is computed once per tree and width, and the canvas is drawn again only when the tree,
 * the width, the colours or the search change; hovering and moving the keyboard cursor touch the DOM
 * overlay only. Knows nothing of the API.
 *
 * Keyboard: the graph is one focusable tree. The arrows move a cursor between frames (up to the
 * caller, down to the first callee, left and right along the row), Home to the top frame, Enter (or
 * Space) zooms, Escape zooms out. The frame under the cursor is the tree's active item: a small
 * off-screen list holds it, its caller, its neighbours and its first callee, each named by its
 * tooltip text, so a screen reader reads what a mouse user hovers. Names are untrusted text: drawn
 * with fillText, set as text or attributes, never markup.
 */
export function FlameGraph<T extends FlameDatum>(props: FlameGraphProps<T>) {
  const { tree, label, minFrameSize = 1, colorFor, nameFor, tooltipFor } = props;
  const hostRef = useRef<HTMLDivElement>(null);
  const figureRef = useRef<HTMLElement>(null);
  const canvasRef = useRef<HTMLCanvasElement>(null);
  const tipRef = useRef<HTMLDivElement>(null);
  const hovered = useRef(-1);
  const [width, setWidth] = useState(0);
  const [cursor, setCursor] = useState(0);
  const [focused, setFocused] = useState(false);
  const idBase = `flame${useId().replace(/[^A-Za-z0-9_-]/g, '')}`;

  useLayoutEffect(() => {
    const host = hostRef.current;
    if (!host) return;
    const measure = () => setWidth(Math.max(200, Math.floor(host.clientWidth)));
    measure();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const ro = new ResizeObserver(() => {
      clearTimeout(timer);
      timer = setTimeout(measure, 120);
    });
    ro.observe(host);
    return () => {
      clearTimeout(timer);
      ro.disconnect();
    };
  }, []);

  const lay = useMemo(() => (width > 0 ? layoutFlame(tree, width, minFrameSize) : null), [tree, width, minFrameSize]);
  // A new tree puts the cursor on its top frame.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the tree changes
  useLayoutEffect(() => setCursor(0), [tree]);

  // The search's regex engine loads with the first search; the search is applied again once it has.
  const [engineReady, setEngineReady] = useState(searchEngineReady);
  useEffect(() => {
    if (!props.search || engineReady) return;
    let live = true;
    void loadSearchEngine().then(() => live && setEngineReady(true));
    return () => {
      live = false;
    };
  }, [props.search, engineReady]);

  /** The frames matching the search over the whole tree given (drawn or too narrow to draw). */
  // biome-ignore lint/correctness/useExhaustiveDependencies: engineReady: a term matched as text until the engine loads is matched again as an expression
  const matches = useMemo(() => {
    const set = new Set<FlameDatum>();
    let sum = 0;
    if (!props.search) return { set, sum };
    const match = makeMatcher(props.search);
    // A matched frame counts once, however many of its callers matched too.
    const stack: [FlameDatum, boolean][] = [[tree, false]];
    while (stack.length > 0) {
      const [n, under] = stack.pop() as [FlameDatum, boolean];
      const m = match(n.name);
      if (m) set.add(n);
      if (m && !under) sum += Math.abs(n.value);
      for (const c of n.children) stack.push([c, under || m]);
    }
    return { set, sum };
  }, [tree, props.search, engineReady]);

  const { onSearchResult } = props;
  useEffect(() => {
    onSearchResult?.(matches.sum, Math.abs(tree.value));
  }, [matches, tree, onSearchResult]);

  const fillOf = useCallback(
    (d: T): string => {
      if (matches.set.has(d)) return HIGHLIGHT;
      return colorFor ? colorFor(d) : warmColor(d.name);
    },
    [matches, colorFor],
  );
  const labelOf = useCallback((d: T): string => (nameFor ? nameFor(d) : d.name), [nameFor]);

  // Draw before the browser paints, so the first picture shown is complete.
  const hatchGround = props.hatch?.ground;
  const hatchStripe = props.hatch?.stripe;
  useLayoutEffect(() => {
    const canvas = canvasRef.current;
    const figure = figureRef.current;
    if (!canvas || !figure || !lay) return;
    const dpr = window.devicePixelRatio || 1;
    canvas.width = Math.max(1, Math.round(lay.width * dpr));
    canvas.height = Math.max(1, Math.round(lay.height * dpr));
    canvas.style.width = `${lay.width}px`;
    canvas.style.height = `${lay.height}px`;
    const ctx = canvas.getContext('2d');
    if (!ctx) return;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, lay.width, lay.height);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    const pattern =
      hatchGround && hatchStripe ? ctx.createPattern(hatchTile(hatchGround, hatchStripe), 'repeat') : null;
    const fit = makeFitter(ctx);
    const fills: string[] = new Array(lay.size);
    let highlighted = 0;
    let hatched = 0;
    for (let i = 0; i < lay.size; i++) {
      const fill = fillOf(lay.node[i] as T);
      fills[i] = fill;
      if (fill === HIGHLIGHT) highlighted++;
      if (fill === HATCH) hatched++;
      ctx.fillStyle = fill === HATCH ? (pattern ?? '#eee') : fill;
      ctx.fillRect(lay.x[i] as number, (lay.row[i] as number) * ROW, Math.max((lay.w[i] as number) - 1, 0.5), ROW - 1);
    }
    for (let i = 0; i < lay.size; i++) {
      const w = lay.w[i] as number;
      if (w < LABEL_MIN_PX) continue;
      const text = fit(labelOf(lay.node[i] as T), w - 6);
      if (!text) continue;
      ctx.fillStyle = fills[i] === HATCH ? '#111' : inkFor(fills[i] as string);
      ctx.fillText(text, (lay.x[i] as number) + 3, (lay.row[i] as number) * ROW + ROW / 2);
    }
    figure.dataset.root = (lay.node[0] as T).name;
    figure.dataset.frames = String(lay.size);
    figure.dataset.highlighted = String(highlighted);
    figure.dataset.hatched = String(hatched);
    figure.dataset.flameDrawn = '1';
  }, [lay, fillOf, labelOf, hatchGround, hatchStripe]);

  // The export: the same frames, as SVG.
  useEffect(() => {
    const figure = figureRef.current;
    if (!figure || !lay) return;
    exporters.set(figure, (background) => {
      const out: string[] = [
        `<svg xmlns="http://www.w3.org/2000/svg" width="${lay.width}" height="${lay.height}" viewBox="0 0 ${lay.width} ${lay.height}" font-family="Verdana, sans-serif" font-size="11">`,
      ];
      if (hatchGround && hatchStripe)
        out.push(
          `<defs><pattern id="hatch" patternUnits="userSpaceOnUse" width="6" height="6" patternTransform="rotate(45)"><rect width="6" height="6" fill="${xmlText(hatchGround)}"/><rect width="2.5" height="6" fill="${xmlText(hatchStripe)}"/></pattern></defs>`,
        );
      out.push(`<rect width="100%" height="100%" fill="${xmlText(background)}"/>`);
      for (let i = 0; i < lay.size; i++) {
        const d = lay.node[i] as T;
        const fill = fillOf(d);
        const y = (lay.row[i] as number) * ROW;
        const w = lay.w[i] as number;
        const raw = labelOf(d);
        out.push(
          `<g><title>${xmlText(raw)}</title><rect x="${(lay.x[i] as number).toFixed(2)}" y="${y}" width="${Math.max(w - 1, 0.5).toFixed(2)}" height="${ROW - 1}" fill="${fill === HATCH ? 'url(#hatch)' : xmlText(fill)}"/>`,
        );
        const maxChars = Math.floor((w - 8) / 6.5);
        if (w >= LABEL_MIN_PX && maxChars >= 2) {
          const text = raw.length > maxChars ? `${raw.slice(0, maxChars - 1)}…` : raw;
          const ink = fill === HATCH ? '#111' : inkFor(fill);
          out.push(
            `<text x="${((lay.x[i] as number) + 3).toFixed(2)}" y="${y + 13}" fill="${ink}">${xmlText(text)}</text>`,
          );
        }
        out.push('</g>');
      }
      out.push('</svg>');
      return { svg: out.join(''), width: lay.width, height: lay.height };
    });
  }, [lay, fillOf, labelOf, hatchGround, hatchStripe]);

  const frameAt = (clientX: number, clientY: number): number => {
    const canvas = canvasRef.current;
    if (!canvas || !lay) return -1;
    const box = canvas.getBoundingClientRect();
    const x = clientX - box.left;
    const row = lay.rows[Math.floor((clientY - box.top) / ROW)];
    if (!row) return -1;
    let lo = 0;
    let hi = row.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const i = row[mid] as number;
      if (x < (lay.x[i] as number)) hi = mid - 1;
      else if (x >= (lay.x[i] as number) + (lay.w[i] as number)) lo = mid + 1;
      else return i;
    }
    return -1;
  };

  const zoom = (i: number) => {
    if (!lay || i < 0 || i >= lay.size || !props.onFocus) return;
    const names: string[] = [];
    for (let j = i; j > 0; j = lay.parent[j] as number) names.push((lay.node[j] as T).name);
    props.onFocus(i === 0 ? '' : (lay.node[i] as T).name, names.reverse());
  };

  const describe = (i: number): string => {
    const d = lay?.node[i];
    if (!d) return '';
    const words = tooltipFor(d).split('\n').join('; ');
    return matches.set.has(d) ? `${words}; matches the search` : words;
  };

  const showTip = (i: number, clientX: number, clientY: number) => {
    const tip = tipRef.current;
    const host = hostRef.current;
    if (!tip || !host || !lay) return;
    if (i < 0) {
      tip.hidden = true;
      hovered.current = -1;
      return;
    }
    if (i !== hovered.current) {
      tip.textContent = tooltipFor(lay.node[i] as T);
      hovered.current = i;
    }
    tip.hidden = false;
    const box = host.getBoundingClientRect();
    const x = clientX - box.left + host.scrollLeft;
    const y = clientY - box.top + host.scrollTop;
    tip.style.left = `${Math.max(0, Math.min(x + 12, host.scrollWidth - tip.offsetWidth - 4))}px`;
    tip.style.top = `${y + 16}px`;
  };

  const cur = lay && cursor < lay.size ? cursor : 0;
  const rowIndex = (i: number) => lay?.rows[lay.row[i] as number]?.indexOf(i) ?? -1;
  const move = (key: string): number => {
    if (!lay) return -1;
    const row = lay.rows[lay.row[cur] as number] ?? [cur];
    const at = rowIndex(cur);
    switch (key) {
      case 'ArrowRight':
        return row[Math.min(row.length - 1, at + 1)] ?? cur;
      case 'ArrowLeft':
        return row[Math.max(0, at - 1)] ?? cur;
      case 'ArrowUp':
        return cur > 0 ? (lay.parent[cur] as number) : cur;
      case 'ArrowDown':
        return (lay.firstChild[cur] as number) >= 0 ? (lay.firstChild[cur] as number) : cur;
      case 'Home':
        return 0;
      default:
        return -1;
    }
  };

  // The active frame and its neighbours, for assistive technology (the canvas itself says nothing).
  const near: { i: number; rel: string }[] = [];
  if (lay) {
    const row = lay.rows[lay.row[cur] as number] ?? [];
    const at = rowIndex(cur);
    if (cur > 0) near.push({ i: lay.parent[cur] as number, rel: 'caller' });
    if (at > 0) near.push({ i: row[at - 1] as number, rel: 'left' });
    near.push({ i: cur, rel: 'active' });
    if (at >= 0 && at + 1 < row.length) near.push({ i: row[at + 1] as number, rel: 'right' });
    if ((lay.firstChild[cur] as number) >= 0) near.push({ i: lay.firstChild[cur] as number, rel: 'callee' });
  }

  return (
    <div className="flame-host" ref={hostRef}>
      <figure className="flame-graph" ref={figureRef} aria-label={label}>
        <div
          role="tree"
          tabIndex={0}
          className="flame-canvas"
          aria-label={`${label}: arrow keys move between frames, Enter zooms, Escape zooms out`}
          aria-activedescendant={lay ? `${idBase}-${cur}` : undefined}
          onFocus={() => setFocused(true)}
          onBlur={() => setFocused(false)}
          onMouseMove={(e) => showTip(frameAt(e.clientX, e.clientY), e.clientX, e.clientY)}
          onMouseLeave={() => showTip(-1, 0, 0)}
          onClick={(e) => {
            const i = frameAt(e.clientX, e.clientY);
            if (i < 0) return;
            setCursor(i);
            zoom(i);
          }}
          onKeyDown={(e) => {
            if (e.ctrlKey || e.metaKey || e.altKey) return;
            if (e.key === 'Enter' || e.key === ' ') {
              e.preventDefault();
              zoom(cur);
              return;
            }
            if (e.key === 'Escape') {
              e.preventDefault();
              e.stopPropagation();
              zoom(0);
              return;
            }
            const next = move(e.key);
            if (next < 0) return;
            e.preventDefault();
            setCursor(next);
          }}
        >
          <canvas ref={canvasRef} />
          <div className="sr-only">
            {lay &&
              near.map(({ i, rel }) => (
                <div
                  key={rel}
                  role="treeitem"
                  tabIndex={-1}
                  id={`${idBase}-${i}`}
                  aria-level={(lay.row[i] as number) + 1}
                  aria-selected={i === cur}
                  aria-label={describe(i)}
                />
              ))}
          </div>
          {lay && focused && (
            <div
              aria-hidden="true"
              className="flame-cursor"
              style={{
                left: lay.x[cur],
                top: (lay.row[cur] as number) * ROW,
                width: Math.max((lay.w[cur] as number) - 1, 2),
                height: ROW - 1,
              }}
            />
          )}
        </div>
      </figure>
      <div className="flame-tip" ref={tipRef} role="tooltip" hidden />
    </div>
  );
}
