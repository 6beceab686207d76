import { memo } from 'react';
import { ciText } from '../../../server/src/api/benchstat-format.ts';
import { formatRatio, formatValue } from '../../../server/src/api/format.ts';
import { changeStyle, formatN, verdictText } from '../../../server/src/api/words.ts';
import { pairFiguresUrl } from '../../../server/src/api/page-requests.ts';
import type { Change, Estimate, Reply, Stage } from '../lib/api.ts';
import { useFetch } from '../views/use-fetch.ts';
import { ErrorBox, Loading, VerdictWords, NumTh } from './common.tsx';
import { ConditionsBanner } from './conditions.tsx';

/** A side's figure: "9,742 req/s ± 5% · 6 runs", or the single run's figure. */
function side(e: Estimate | null, unit: string, what: string): string {
  if (!e) return '—';
  const v = formatValue(e.median, unit);
  return e.n > 1 ? `${v} ${ciText(e.ci)} · ${e.n} ${what}` : v;
}

/**
 * The figures of one pair of stages as the change engine judges them (GET …/changes): each figure both
 * stages have, its median on each side and the change with its verdict, worded as everywhere else.
 */
export const PairChanges = memo(function PairChanges(props: {
  comparisonId: string;
  revision: number;
  base: Stage;
  target: Stage;
}) {
  const { base, target } = props;
  // The figures only: the functions are the diff's own business below.
  const { data, error, loading, reload } = useFetch<Reply<'changes'>>(
    pairFiguresUrl(props.comparisonId, base.id, target.id),
    props.revision,
  );
  if (!data) return loading ? <Loading what="figures" /> : <ErrorBox error={error} onRetry={reload} />;
  const figures = data.figures.filter((c) => c.base !== null || c.target !== null);
  const runtime = data.runtime;
  const banner = (
    <>
      <ConditionsBanner warning={data.conditions.warning} loadComparable={data.conditions.loadComparable} />
      {data.modeNotes.length > 0 && (
        <div className="warnings mode-notes" role="note" aria-label="Profiles without their run">
          {data.modeNotes.map((n) => (
            <p key={`${n.side}-${n.profile.artifactId}`} data-note-kind={n.kind} data-mode={n.mode}>
              ⚠ {n.message}
            </p>
          ))}
        </div>
      )}
    </>
  );
  if (figures.length === 0 && !runtime) return banner;
  const row = (c: Change, what: string) => {
    const t = verdictText(c.verdict, changeStyle(c));
    const cls = t.significant ? (c.direction === 'improvement' ? 'good' : 'bad') : t.change === '~' ? 'muted' : '';
    return (
      <tr
        key={c.metric}
        data-metric={c.metric}
        data-verdict={c.verdict.status}
        data-p={c.verdict.p ?? ''}
        data-n={formatN(c.verdict)}
      >
        <th scope="row">{c.label}</th>
        <td className="num c-base" data-label={base.name}>
          {side(c.base, c.unit, what)}
        </td>
        <td className="num c-target" data-label={target.name}>
          {side(c.target, c.unit, what)}
        </td>
        <td className={`num verdict ${cls}`} title={c.reason ?? t.title}>
          <VerdictWords text={t.text} />
        </td>
      </tr>
    );
  };
  const cross = runtime
    ? (
        [
          [base.name, runtime.allocsCrossCheck.base],
          [target.name, runtime.allocsCrossCheck.target],
        ] as const
      ).filter((x): x is readonly [string, number] => x[1] !== null)
    : [];
  return (
    <div className="table-scroll">
      {banner}
      <table className="pair-changes" aria-label={`Figures: ${base.name} → ${target.name}`}>
        <thead>
          <tr>
            <th scope="col">Figure</th>
            <NumTh>{base.name}</NumTh>
            <NumTh>{target.name}</NumTh>
            <NumTh>Change</NumTh>
          </tr>
        </thead>
        <tbody>{figures.map((c) => row(c, c.metric.endsWith('per-request') ? 'profiles' : 'runs'))}</tbody>
        {runtime && runtime.figures.length > 0 && (
          <tbody className="pair-runtime" aria-label="Runtime figures">
            <tr className="group">
              <th scope="rowgroup" colSpan={4}>
                Runtime: execution traces and runtime metrics, one value a window,{' '}
                {runtime.normalisation === 'per-request'
                  ? 'totals per request (every window has its own load run)'
                  : 'totals per second of window (a window lacks its own load run)'}
              </th>
            </tr>
            {runtime.figures.map((c) => row(c, 'windows'))}
          </tbody>
        )}
      </table>
      {data.perRequest && (
        <details className="pair-divisors small">
          <summary>Per-request divisors: which run each profile is divided by</summary>
          {(
            [
              [base.name, data.perRequest.base],
              [target.name, data.perRequest.target],
            ] as const
          ).map(([name, d]) => (
            <div key={name}>
              <strong>{name}</strong>
              {d.profiles.length === 0 ? (
                <span className="muted"> no profiles</span>
              ) : (
                <ul aria-label={`Divisors of ${name}`}>
                  {d.profiles.map((p) => (
                    <li key={p.artifactId} data-method={p.method ?? 'none'}>
                      {p.filename ?? p.artifactId}
                      {p.run ? ` ÷ ${p.run.filename}` : ''}
                      {p.requests !== null ? ` (${formatValue(p.requests, 'requests')})` : ''}
                      {p.description ? ` — ${p.description}` : ''}
                    </li>
                  ))}
                </ul>
              )}
            </div>
          ))}
        </details>
      )}
      {cross.length > 0 && (
        <p className="muted small pair-crosscheck">
          Allocated bytes per request, runtime metrics ÷ allocs profile:{' '}
          {cross.map(([n, v]) => `${n} ${formatRatio(v)}`).join(', ')} (the profile samples allocations and is published
          at each GC).
        </p>
      )}
    </div>
  );
});
