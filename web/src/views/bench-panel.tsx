import { useMemo } from 'react';
import { BenchTables } from '../components/bench-table.tsx';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import { mediansAcrossStages } from '../../../server/src/api/benchstat-format.ts';
import { kindedArtifact } from '../../../server/src/api/summaries.ts';
import { type Benchmarks, type Stage, apiUrl } from '../lib/api.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useFetch, useFetchAll } from './use-fetch.ts';

function hasBench(s: Stage | undefined): s is Stage {
  return !!s && s.artifacts.some((a) => a.kind === 'benchmark');
}

function benchUrl(comparisonId: string, base: string, target: string): string {
  return apiUrl('benchmarks', { params: { id: comparisonId }, query: { base, target } });
}

/** `go test -bench` results of the two chosen stages, benchstat style, with each benchmark across all stages. */
export function BenchPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { comparisonId, stages } = props;
  const benchStages = stages.filter(hasBench);
  // The chosen pair when both stages have benchmark output, else the first and last stages that do.
  const chosen = hasBench(props.base) && hasBench(props.target) && props.base.id !== props.target.id;
  const base = chosen ? props.base : benchStages[0];
  const target = chosen ? props.target : benchStages[benchStages.length - 1];
  const pairUrl = base && target && base.id !== target.id ? benchUrl(comparisonId, base.id, target.id) : null;
  const pair = useFetch<Benchmarks>(pairUrl, props.revision);
  // A stage compared with itself lists every benchmark it has: its medians for the small lines.
  // biome-ignore lint/correctness/useExhaustiveDependencies: keyed on the stage ids, so a re-fetched comparison with the same stages keeps the same URL list (and its fetches)
  const selfUrls = useMemo(
    () => benchStages.map((s) => benchUrl(comparisonId, s.id, s.id)),
    [comparisonId, benchStages.map((s) => s.id).join()],
  );
  const selves = useFetchAll<Benchmarks>(selfUrls);
  const across = useMemo(
    () => (selves.data ? mediansAcrossStages(selves.data.map((d) => (d ? d.rows : null))) : null),
    [selves.data],
  );

  if (benchStages.length === 0) return <Empty>No stage has go test -bench output yet.</Empty>;
  if (!pairUrl || !base || !target) {
    return (
      <Empty>
        Only “{benchStages[0]!.name}” has go test -bench output: upload benchmark results to a second stage to compare
        them.
      </Empty>
    );
  }
  const configs = [base, target].map((s) => {
    for (const a of s.artifacts) {
      const k = kindedArtifact(a);
      if (k.kind === 'benchmark') return k.summary;
    }
    return undefined;
  });
  const cfg = configs[0]?.config;
  return (
    <div className="bench-panel">
      {!chosen && (
        <p className="callout" role="note">
          The chosen stages do not both have benchmark output; showing “{base.name}” → “{target.name}”.
        </p>
      )}
      <p className="muted small">
        benchstat-style comparison of “{base.name}” (base) and “{target.name}”: median ± 95 % confidence interval,
        change of the medians, Mann-Whitney U test; “~” means not significant (p &gt; {pair.data?.alpha ?? 0.05}), “?”
        that the base is 0.
        {cfg &&
          [cfg.goos, cfg.goarch, cfg.cpu].some(Boolean) &&
          ` Base ran on ${[cfg.goos, cfg.goarch, cfg.cpu].filter(Boolean).join(' · ')}.`}
      </p>
      {pair.data ? (
        pair.data.rows.length === 0 ? (
          <p className="callout" role="note" data-benchmarks="unpaired">
            {pair.data.reason ?? 'The two stages have no benchmark in common.'}
          </p>
        ) : (
          <>
            {(pair.data.unpaired.base > 0 || pair.data.unpaired.target > 0) && (
              <p className="muted small" data-benchmarks="partly-unpaired">
                Not compared: {pair.data.unpaired.base} series of “{base.name}” and {pair.data.unpaired.target} of “
                {target.name}” have no partner with the same configuration and unit (benchstat's rule).
              </p>
            )}
            <BenchTables
              diff={pair.data}
              baseName={base.name}
              targetName={target.name}
              acrossStages={across}
              stageNames={benchStages.map((s) => s.name)}
              targetIndex={benchStages.indexOf(target)}
            />
          </>
        )
      ) : pair.loading ? (
        <Loading what="benchmarks" />
      ) : (
        <ErrorBox error={pair.error} onRetry={pair.reload} />
      )}
      {selves.error !== null && <ErrorBox error={selves.error} />}
    </div>
  );
}
