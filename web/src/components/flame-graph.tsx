import { select } from 'd3';
import flamegraph, { type FlameDatum, type FlameGraphChart, type FlameNodeD, type FlameTooltip } from 'd3-flame-graph';
import { useEffect, useRef, useState } from 'react';
import { findWidest, loadSearchEngine, makeMatcher, searchEngineReady } from '../lib/tree.ts';

export interface FlameGraphProps<T extends FlameDatum> {
  tree: T;
  /** Accessible name of the graph ("Flamegraph of baseline"). */
  label: string;
  /** Tooltip text for a frame (plain text, may contain newlines). */
  tooltipFor: (data: T, width: number) => string;
  /** Label drawn in the frame; defaults to the function name. */
  nameFor?: (data: T) => string;
  /** Fill colour; defaults to d3-flame-graph's warm palette. */
  colorFor?: (data: T) => string;
  search: string;
  /** Function to zoom on (the widest frame of that name); '' = whole graph. */
  focus: string;
  /**
   * A click on a frame: its function ('' for the root) and its call path below the root drawn
   * (frame names, outermost first; [] for the root).
   */
  onFocus?: (name: string, path: string[]) => void;
  onSearchResult?: (matched: number, total: number) => void;
  inverted?: boolean;
  /** Frames narrower than this many pixels are not drawn (d3-flame-graph's minFrameSize). */
  minFrameSize?: number;
  /**
   * A hatch pattern the graph defines, for `colorFor` to return as `url(#id)`: diagonal stripes over a
   * ground colour. Defined inside the graph's own SVG, so an exported SVG or PNG keeps it.
   */
  hatch?: { id: string; ground: string; stripe: string } | null;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

/** Adds the hatch pattern to the chart's SVG (no <g> inside: d3-flame-graph treats every <g> as a frame). */
function defineHatch(svg: SVGSVGElement, hatch: NonNullable<FlameGraphProps<FlameDatum>['hatch']>) {
  const defs = document.createElementNS(SVG_NS, 'defs');
  const pattern = document.createElementNS(SVG_NS, 'pattern');
  pattern.setAttribute('id', hatch.id);
  pattern.setAttribute('patternUnits', 'userSpaceOnUse');
  pattern.setAttribute('width', '6');
  pattern.setAttribute('height', '6');
  pattern.setAttribute('patternTransform', 'rotate(45)');
  const ground = document.createElementNS(SVG_NS, 'rect');
  ground.setAttribute('width', '6');
  ground.setAttribute('height', '6');
  ground.setAttribute('fill', hatch.ground);
  const stripe = document.createElementNS(SVG_NS, 'rect');
  stripe.setAttribute('width', '2.5');
  stripe.setAttribute('height', '6');
  stripe.setAttribute('fill', hatch.stripe);
  pattern.append(ground, stripe);
  defs.append(pattern);
  svg.insertBefore(defs, svg.firstChild);
}

/**
 * d3-flame-graph wrapped in one effect. Knows nothing of the API. Names are drawn by d3-flame-graph with
 * `.text()` (labels, `name` attribute); its HTML tooltip is replaced by our own, filled via textContent.
 */
export function FlameGraph<T extends FlameDatum>(props: FlameGraphProps<T>) {
  const { tree, label, inverted = true, minFrameSize = 1 } = props;
  const hostRef = useRef<HTMLDivElement>(null);
  const graphRef = useRef<HTMLElement>(null);
  const tipRef = useRef<HTMLDivElement>(null);
  const chartRef = useRef<FlameGraphChart | null>(null);
  const latest = useRef(props);
  latest.current = props;
  const programmatic = useRef(false);
  const [width, setWidth] = useState(0);
  const [drawn, setDrawn] = useState(false);

  useEffect(() => {
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

  /**
   * d3-flame-graph grows new frames and sets labels through d3 transitions (250 ms even with a zero
   * transitionDuration). Finish them at once so the graph is complete when we say it is drawn.
   */
  function settle(el: HTMLElement) {
    const nameFor = latest.current.nameFor;
    select(el)
      .selectAll<SVGGElement, FlameNodeD>('g.frame')
      .each(function (d) {
        const g = select(this);
        g.select('rect').interrupt().attr('width', g.attr('width'));
        g.select('foreignObject div')
          .interrupt()
          .text(nameFor ? nameFor(d.data as T) : d.data.name);
      });
  }

  function applyFocus(chart: FlameGraphChart, el: HTMLElement, name: string) {
    const root = select(el).datum() as FlameNodeD | undefined;
    if (!root) return;
    programmatic.current = true;
    try {
      const node = name
        ? findWidest(
            root,
            (n) => n.data.name === name && n.depth > 0,
            (n) => n.value ?? 0,
          )
        : null;
      if (node) chart.zoomTo(node as FlameNodeD);
      else chart.resetZoom();
    } finally {
      programmatic.current = false;
    }
    settle(el);
  }

  function applySearch(chart: FlameGraphChart, el: HTMLElement, term: string) {
    if (term) chart.search(term);
    else chart.clear();
    settle(el);
  }

  // The single imperative effect: (re)build the chart when the data or the width changes.
  // biome-ignore lint/correctness/useExhaustiveDependencies: rebuilt only when the data, size or colouring changes; callbacks and the current search/focus are read through `latest`, and settle/applySearch/applyFocus only touch refs
  useEffect(() => {
    const el = graphRef.current;
    const tipEl = tipRef.current;
    if (!el || !tipEl || width === 0) return;
    setDrawn(false);
    const tip: FlameTooltip = Object.assign(() => undefined, {
      show(event: MouseEvent, d: FlameNodeD) {
        const w = d.x1 - d.x0;
        tipEl.textContent = latest.current.tooltipFor(d.data as T, w);
        tipEl.hidden = false;
        const box = el.getBoundingClientRect();
        const x = event.clientX - box.left;
        const y = event.clientY - box.top;
        const tipWidth = tipEl.offsetWidth;
        tipEl.style.left = `${Math.max(0, Math.min(x + 12, box.width - tipWidth - 4))}px`;
        tipEl.style.top = `${y + 16}px`;
      },
      hide() {
        tipEl.hidden = true;
      },
    });
    const chart = flamegraph()
      .width(width)
      .cellHeight(18)
      .minFrameSize(minFrameSize)
      .transitionDuration(0)
      .inverted(inverted)
      .sort(false)
      .tooltip(tip)
      .getName((d) => {
        const f = latest.current.nameFor;
        return f ? f(d.data as T) : d.data.name;
      })
      .setSearchMatch((d, term) => makeMatcher(term)(d.data.name))
      .setSearchHandler((_results, sum, total) => latest.current.onSearchResult?.(sum, total))
      .setDetailsHandler(() => undefined)
      .onClick((d) => {
        if (programmatic.current) return;
        settle(el);
        const path: string[] = [];
        for (let n: FlameNodeD | null = d; n && n.depth > 0; n = n.parent as FlameNodeD | null) path.push(n.data.name);
        latest.current.onFocus?.(d.depth === 0 ? '' : d.data.name, path.reverse());
      });
    const colorFor = latest.current.colorFor;
    if (colorFor) chart.setColorMapper((d) => (d.highlight ? '#e600e6' : colorFor(d.data as T)));
    else chart.setColorMapper((d, original) => (d.highlight ? '#e600e6' : original));
    select(el).selectAll('*').remove();
    select(el).datum(tree).call(chart);
    const hatch = latest.current.hatch;
    const svg = el.querySelector('svg');
    if (hatch && svg) defineHatch(svg, hatch);
    chartRef.current = chart;
    const { search, focus } = latest.current;
    settle(el);
    if (search) applySearch(chart, el, search);
    if (focus) applyFocus(chart, el, focus);
    // Everything is in the DOM now; mark drawn once the browser has painted it.
    const raf = requestAnimationFrame(() => requestAnimationFrame(() => setDrawn(true)));
    return () => {
      cancelAnimationFrame(raf);
      tip.hide();
      chart.destroy();
      chartRef.current = null;
    };
  }, [tree, width, inverted, minFrameSize, props.colorFor, props.hatch?.id, props.hatch?.ground]);

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

  // biome-ignore lint/correctness/useExhaustiveDependencies: applySearch only touches refs; re-run when the search term changes or the engine has loaded
  useEffect(() => {
    const chart = chartRef.current;
    const el = graphRef.current;
    if (chart && el) applySearch(chart, el, props.search);
  }, [props.search, engineReady]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: applyFocus only touches refs; re-run when the focused frame changes
  useEffect(() => {
    const chart = chartRef.current;
    const el = graphRef.current;
    if (chart && el) applyFocus(chart, el, props.focus);
  }, [props.focus]);

  return (
    <div className="flame-host" ref={hostRef}>
      <figure
        className="flame-graph"
        ref={graphRef}
        aria-label={label}
        data-flame-drawn={drawn ? '1' : undefined}
        onMouseLeave={() => {
          if (tipRef.current) tipRef.current.hidden = true;
        }}
      />
      <div className="flame-tip" ref={tipRef} role="tooltip" hidden />
    </div>
  );
}
