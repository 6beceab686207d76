import { LineChart } from 'echarts/charts';
import { GridComponent, LegendComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import * as echarts from 'echarts/core';
import { SVGRenderer } from 'echarts/renderers';
import { useEffect, useRef } from 'react';

echarts.use([LineChart, GridComponent, LegendComponent, TitleComponent, TooltipComponent, SVGRenderer]);

export type ChartOption = echarts.EChartsCoreOption;
export type ChartHandle = { svg: () => string; width: number; height: number };

/**
 * One ECharts instance (SVG renderer, so charts export as SVG) driven by an option object.
 * `onHandle` gives the parent a way to export the rendered SVG.
 */
export function EChart(props: {
  option: ChartOption;
  label: string;
  dark: boolean;
  height?: number;
  onHandle?: (h: ChartHandle | null) => void;
}) {
  const { option, label, dark, height = 300, onHandle } = props;
  const ref = useRef<HTMLDivElement>(null);
  const chartRef = useRef<echarts.ECharts | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: one chart instance per theme; the parent's onHandle callback may change identity on every render without needing a new chart
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const chart = echarts.init(el, dark ? 'dark' : undefined, { renderer: 'svg' });
    chartRef.current = chart;
    const ro = new ResizeObserver(() => chart.resize());
    ro.observe(el);
    onHandle?.({
      svg: () => chart.renderToSVGString(),
      get width() {
        return chart.getWidth();
      },
      get height() {
        return chart.getHeight();
      },
    });
    return () => {
      ro.disconnect();
      onHandle?.(null);
      chart.dispose();
      chartRef.current = null;
    };
  }, [dark]);

  // biome-ignore lint/correctness/useExhaustiveDependencies: a theme change makes a new chart instance (the effect above), which needs the option set again
  useEffect(() => {
    chartRef.current?.setOption({ backgroundColor: 'transparent', ...option }, { notMerge: true });
  }, [option, dark]);

  return <div ref={ref} className="echart" role="img" aria-label={label} style={{ height }} />;
}

/** Tooltip content built as DOM with textContent (series names are user input). */
export function textTooltip(lines: string[]): HTMLElement {
  const div = document.createElement('div');
  for (const line of lines) {
    const row = document.createElement('div');
    row.textContent = line;
    div.appendChild(row);
  }
  return div;
}
