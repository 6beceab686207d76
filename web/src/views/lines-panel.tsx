import { useMemo } from 'react';
import { formatSignedValue, formatValue } from '../../../server/src/api/format.ts';
import { verdictWords } from '../../../server/src/api/words.ts';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import type { Stage } from '../lib/api.ts';
import { fullVerdict } from '../lib/diff-verdicts.ts';
import { functionLines, functionOf, goQuote } from '../lib/lines.ts';
import { hasProfile } from '../lib/profile-kinds.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useApi } from './use-fetch.ts';

/**
 * One function's source lines in both stages: each line's flat and cum on each side, the change and
 * its verdict when the stages have enough runs (the diff at line granularity, focused on the function).
 * Sources are not stored with the stages, so the lines are listed by file and number.
 */
export function LinesPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { base, target, view } = props;
  const fn = functionOf(view.fn, view.granularity);
  const ok = !!fn && view.granularity !== 'files' && hasProfile(base, props.kind) && hasProfile(target, props.kind);
  const { data, error, loading, reload } = useApi(
    'diff',
    ok
      ? {
          params: { id: props.comparisonId },
          query: {
            base: base.id,
            target: target.id,
            ...(props.kind ? { kind: props.kind } : {}),
            ...(view.sampleType ? { sampleType: view.sampleType } : {}),
            ...(view.mode !== 'auto' ? { mode: view.mode } : {}),
            granularity: 'lines',
            ...props.filters,
            // Every sample through the function, whatever the other filters keep.
            focus: `^${goQuote(fn)}$`,
            minFraction: 0.01,
            limit: 1_000_000,
          },
        }
      : null,
    props.revision,
  );
  const lines = useMemo(() => (data ? functionLines(data.top, fn) : []), [data, fn]);
  if (!fn)
    return <Empty>Select a function (click a frame, a hot-path row or a trajectory) to see its source lines.</Empty>;
  if (view.granularity === 'files')
    return <Empty>Rows are by file: pick functions or source lines to see lines.</Empty>;
  if (!ok) return <Empty>Both stages need a profile of this kind.</Empty>;
  if (error) return <ErrorBox error={error} onRetry={reload} />;
  if (loading || !data) return <Loading what="the lines" />;
  if (lines.length === 0) return <Empty>No samples on the lines of {fn} in either stage.</Empty>;
  const u = data.unit;
  const noise = data.noise;
  return (
    <div className="lines-panel">
      <h3>
        <code className="fn-name">{fn}</code> line by line: {base?.name} → {target?.name}
      </h3>
      <p className="muted small">
        {data.sampleType} ({u}), {data.mode}. Each line of the function as go tool pprof -lines counts it in each
        stage's own profiles; the sources are not stored, so a line number is the one each build ran.
      </p>
      <div className="table-scroll">
        <table className="lines-table">
          <thead>
            <tr>
              <th scope="col">line</th>
              <th scope="col">{base?.name} flat</th>
              <th scope="col">{base?.name} cum</th>
              <th scope="col">{target?.name} flat</th>
              <th scope="col">{target?.name} cum</th>
              <th scope="col">Δflat</th>
              <th scope="col">Δcum</th>
              <th scope="col">verdict</th>
            </tr>
          </thead>
          <tbody>
            {lines.map(({ file, line, row }) => (
              <tr key={`${file}:${line}`} data-line={line}>
                <th scope="row">
                  <code>
                    {file}:{line}
                  </code>
                </th>
                <td>{formatValue(row.base.flat, u)}</td>
                <td>{formatValue(row.base.cum, u)}</td>
                <td>{formatValue(row.target.flat, u)}</td>
                <td>{formatValue(row.target.cum, u)}</td>
                <td>{formatSignedValue(row.deltaFlat, u)}</td>
                <td>{formatSignedValue(row.deltaCum, u)}</td>
                <td className="small">
                  {row.verdict && noise
                    ? verdictWords(fullVerdict(row.verdict.cum, noise, row.base.cum, row.target.cum))
                    : (noise?.status ?? '')}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </div>
  );
}
