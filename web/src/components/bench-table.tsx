import { NumTh } from './common.tsx';
import {
  benchKey,
  deltaText,
  formatBenchRow,
  geomeanRow,
  geomeanText,
  groupBenchRows,
  unitHeading,
} from '../../../server/src/api/benchstat-format.ts';
import type { Benchmarks } from '../lib/api.ts';
import { Sparkline } from './sparkline.tsx';

export interface BenchTableProps {
  diff: Benchmarks;
  baseName: string;
  targetName: string;
  /** Each benchmark's median at every stage of `stageNames` (null: not measured there), by benchKey. */
  acrossStages: Map<string, (number | null)[]> | null;
  stageNames: string[];
  /** Index in `stageNames` of the target stage (marked on the small lines). */
  targetIndex: number;
}

/**
 * benchstat's tables (one per package and unit): median ± 95 % interval of both stages, the change or
 * "~" (not significant) / "?" (no percentage), p-value and run count, and the median across all stages.
 * Cells carry benchstat's own text in `data-benchstat` (the visible text uses real units: "680.5 ns").
 */
export function BenchTables(props: BenchTableProps) {
  const { diff, baseName, targetName, acrossStages, stageNames, targetIndex } = props;
  const tables = groupBenchRows(diff.rows);
  const pkgs = new Set(tables.map((t) => t.pkg));
  return (
    <div className="bench-tables">
      {tables.map((t) => {
        const g = geomeanRow(t.rows);
        const label = `Benchmarks: ${t.unit}${pkgs.size > 1 ? ` (${t.pkg})` : ''}`;
        return (
          <section key={`${t.pkg}|${t.unit}`} className="bench-table-block">
            <h4>
              {unitHeading(t.unit)} <span className="muted small">{t.pkg}</span>
            </h4>
            <div className="table-scroll">
              <table className="bench-table" aria-label={label} data-unit={t.unit} data-pkg={t.pkg}>
                <colgroup>
                  <col className="c-name" />
                  <col className="c-val" />
                  <col className="c-val" />
                  <col className="c-delta" />
                  <col className="c-pn" />
                  <col />
                </colgroup>
                <thead>
                  <tr>
                    <th scope="col">Benchmark</th>
                    <NumTh>{baseName}</NumTh>
                    <NumTh>{targetName}</NumTh>
                    <NumTh>vs base</NumTh>
                    <NumTh>p, n</NumTh>
                    <th scope="col">Median across stages</th>
                  </tr>
                </thead>
                <tbody>
                  {t.rows.map((r) => {
                    const f = formatBenchRow(r);
                    const across = acrossStages?.get(benchKey(r)) ?? null;
                    return (
                      <tr key={r.name} data-bench={r.name}>
                        <th scope="row" className="fn-name" title={r.name}>
                          {r.name}
                        </th>
                        <td className="num" data-field="base" data-benchstat={f.base.benchstat} data-ci={f.base.ci}>
                          {f.base.display} <span className="muted">{f.base.ci}</span>
                        </td>
                        <td
                          className="num"
                          data-field="target"
                          data-benchstat={f.target.benchstat}
                          data-ci={f.target.ci}
                        >
                          {f.target.display} <span className="muted">{f.target.ci}</span>
                        </td>
                        <td
                          className={`num delta-${f.verdict}`}
                          data-field="delta"
                          title={
                            f.delta === '~'
                              ? 'not significant (p > 0.05)'
                              : f.delta === '?'
                                ? 'no percentage: the base median is 0'
                                : undefined
                          }
                        >
                          {f.delta}
                        </td>
                        <td className="num muted" data-field="pn">
                          {f.pn}
                        </td>
                        <td>
                          {across && across.filter((v) => v !== null).length > 1 ? (
                            <Sparkline
                              values={across}
                              highlight={targetIndex}
                              label={`${r.name} ${r.unit} across stages: ${stageNames.join(', ')}`}
                            />
                          ) : (
                            <span className="muted small">one stage</span>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                  {g && (
                    <tr className="geomean" data-bench="geomean">
                      <th scope="row">geomean</th>
                      <td className="num" data-benchstat={geomeanText(g.base, t.unit).benchstat}>
                        {geomeanText(g.base, t.unit).display || (
                          <span className="muted" title="summaries must be > 0 to compute geomean">
                            —
                          </span>
                        )}
                      </td>
                      <td className="num" data-benchstat={geomeanText(g.target, t.unit).benchstat}>
                        {geomeanText(g.target, t.unit).display || (
                          <span className="muted" title="summaries must be > 0 to compute geomean">
                            —
                          </span>
                        )}
                      </td>
                      <td className="num" data-field="delta">
                        {deltaText({ significant: true, deltaPercent: g.deltaPercent })}
                      </td>
                      <td />
                      <td />
                    </tr>
                  )}
                </tbody>
              </table>
            </div>
          </section>
        );
      })}
    </div>
  );
}
