import { useCallback, useRef } from 'react';
import { downloadBlob, downloadText, slug, svgToPng } from '../lib/export-files.ts';
import { EChart, type ChartHandle, type ChartOption } from './echart.tsx';

/** Series colours shared by the load-test and GC charts (stage i gets colour i). */
export const PALETTE = [
  '#5470c6',
  '#ee6666',
  '#91cc75',
  '#fac858',
  '#73c0de',
  '#3ba272',
  '#fc8452',
  '#9a60b4',
  '#ea7ccc',
];

/** A titled chart with SVG/PNG export buttons. */
export function ChartBox(props: { title: string; option: ChartOption; dark: boolean; height?: number }) {
  const handle = useRef<ChartHandle | null>(null);
  const onHandle = useCallback((h: ChartHandle | null) => {
    handle.current = h;
  }, []);
  return (
    <div className="chart-box">
      <div className="panel-head">
        <h3>{props.title}</h3>
        <span className="export-buttons">
          <button
            type="button"
            aria-label={`Download ${props.title} as SVG`}
            onClick={() =>
              handle.current && downloadText(`${slug(props.title)}.svg`, handle.current.svg(), 'image/svg+xml')
            }
          >
            SVG
          </button>
          <button
            type="button"
            aria-label={`Download ${props.title} as PNG`}
            onClick={async () => {
              const h = handle.current;
              if (h) downloadBlob(`${slug(props.title)}.png`, await svgToPng(h.svg(), h.width, h.height));
            }}
          >
            PNG
          </button>
        </span>
      </div>
      <EChart option={props.option} label={props.title} dark={props.dark} height={props.height} onHandle={onHandle} />
    </div>
  );
}

export function axisText(dark: boolean) {
  return { color: dark ? '#c9ccd3' : '#333' };
}
