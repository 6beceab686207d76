// Minimal typings for the parts of d3-flame-graph 5 that the FlameGraph component uses.
declare module 'd3-flame-graph' {
  import type { HierarchyRectangularNode } from 'd3';

  export interface FlameDatum {
    name: string;
    value: number;
    children?: FlameDatum[];
  }

  export type FlameNodeD = HierarchyRectangularNode<FlameDatum> & { highlight?: boolean; id: number };

  export interface FlameTooltip {
    (selection: unknown): void;
    show(event: MouseEvent, d: FlameNodeD): void;
    hide(): void;
    destroy?(): void;
  }

  export interface FlameGraphChart {
    (selection: unknown): void;
    width(w: number): FlameGraphChart;
    height(h: number | null): FlameGraphChart;
    minHeight(h: number): FlameGraphChart;
    cellHeight(h: number): FlameGraphChart;
    minFrameSize(px: number): FlameGraphChart;
    transitionDuration(ms: number): FlameGraphChart;
    inverted(v: boolean): FlameGraphChart;
    sort(v: boolean | ((a: FlameNodeD, b: FlameNodeD) => number)): FlameGraphChart;
    selfValue(v: boolean): FlameGraphChart;
    title(t: string): FlameGraphChart;
    tooltip(t: FlameTooltip | boolean): FlameGraphChart;
    getName(f: (d: FlameNodeD) => string): FlameGraphChart;
    setColorMapper(f: (d: FlameNodeD, original: string) => string): FlameGraphChart;
    setLabelHandler(f: (d: FlameNodeD) => string): FlameGraphChart;
    setSearchMatch(f: (d: FlameNodeD, term: string, ignoreCase?: boolean) => boolean): FlameGraphChart;
    setSearchHandler(f: (results: FlameNodeD[], sum: number, total: number) => void): FlameGraphChart;
    setDetailsHandler(f: (text: string | null) => void): FlameGraphChart;
    onClick(f: (d: FlameNodeD) => void): FlameGraphChart;
    onHover(f: (d: FlameNodeD) => void): FlameGraphChart;
    search(term: string): void;
    clear(): void;
    zoomTo(d: FlameNodeD): void;
    resetZoom(): void;
    destroy(): FlameGraphChart;
    update(data?: FlameDatum): FlameGraphChart;
  }

  export default function flamegraph(): FlameGraphChart;
}
