import { NumTh } from './common.tsx';
import { memo, useMemo, useState } from 'react';
import { formatDeltaPercent, formatShare, formatSignedValue, formatValue } from '../../../server/src/api/format.ts';
import { formatP, formatQ, verdictWords } from '../../../server/src/api/words.ts';
import type { Diff, DiffRow } from '../lib/api.ts';
import { fullVerdict } from '../lib/diff-verdicts.ts';
import { type HotPathSort, sortHotPaths } from '../lib/hot-path-sort.ts';
import { fullNameTitle } from '../lib/full-names.ts';

/** The class a change's cell takes: ` more` for an increase, ` less` for a decrease, nothing for none. */
function moreOrLess(delta: number): string {
  return delta > 0 ? ' more' : delta < 0 ? ' less' : '';
}

/** A tested change neither flat nor cum of which is significant: inside the run-to-run noise. */
function inNoise(r: DiffRow, noise: Diff['noise']): boolean {
  if (noise?.status !== 'tested' || !r.verdict) return false;
  const { flat, cum } = r.verdict;
  return (
    flat.status !== 'significant' &&
    cum.status !== 'significant' &&
    (flat.status === 'no-change' || cum.status === 'no-change')
  );
}

/**
 * The row's verdict in words: its cum's (the function with everything it calls), "significant (p=0.002)",
 * "~ within the noise (p=0.310)" or "not judged"; the run counts are the diff's own, in the legend, and
 * both flat's and cum's whole verdicts are in the title.
 */
function verdictCell(r: DiffRow, noise: Diff['noise']): { text: string; title: string } | null {
  if (!noise || !r.verdict) return null;
  const cum = fullVerdict(r.verdict.cum, noise, r.base.cum, r.target.cum);
  const flat = fullVerdict(r.verdict.flat, noise, r.base.flat, r.target.flat);
  const pq = (v: typeof cum) => (v.q != null ? `${formatP(v.p)}, ${formatQ(v.q)}` : formatP(v.p));
  const text =
    cum.status === 'significant'
      ? `significant (${pq(cum)})`
      : cum.status === 'no-change'
        ? cum.p === null
          ? '~ below the test floor'
          : `~ within the noise (${pq(cum)})`
        : 'not judged';
  return {
    text,
    title: `cum: ${verdictWords(cum)}; flat: ${verdictWords(flat)} — Mann–Whitney U over the stages' profiles (${noise.normalisation === 'raw' ? 'as recorded' : noise.normalisation}), significant where the Benjamini–Hochberg q across the ${noise.tested} functions tested is ≤ ${noise.alpha}${cum.p === null ? `; this one moves less than ${noise.floor * 100} % of the total across the profiles and was not tested` : ''}`,
  };
}

/** One function's row; memoised, so a new selection renders only the rows it selects and deselects. */
const HotPathRow = memo(function HotPathRow({
  row: r,
  rank,
  selected,
  noise,
  unit,
  baseTotal,
  targetTotal,
  baseName,
  targetName,
  fullNames,
  onSelect,
}: {
  row: DiffRow;
  rank: number;
  selected: boolean;
  fullNames: Diff['fullNames'];
  onSelect: (name: string) => void;
} & PairFigures) {
  const v = verdictCell(r, noise);
  const tested = noise?.status === 'tested';
  const share = (x: number, total: number) => (unit === 'fraction' || total === 0 ? '' : formatShare(x / total));
  return (
    <tr
      className={[selected ? 'selected' : '', inNoise(r, noise) ? 'in-noise' : ''].join(' ').trim() || undefined}
      aria-selected={selected}
      data-verdict={r.verdict ? r.verdict.cum.status : undefined}
      title={v?.title}
      onClick={() => onSelect(r.name)}
    >
      <td className="num muted rank">{rank}</td>
      <td className="fn">
        <span className="phone-rank muted" aria-hidden="true">
          {rank}.{' '}
        </span>
        <button
          type="button"
          className="link-button fn-name"
          title={fullNameTitle(r.name, fullNames)}
          onClick={(e) => {
            e.stopPropagation();
            onSelect(r.name);
          }}
        >
          {r.name}
        </button>
      </td>
      <td className="num c-flat-base" data-label={`Flat ${baseName}`}>
        {formatValue(r.base.flat, unit)} <span className="muted small">{share(r.base.flat, baseTotal)}</span>
      </td>
      <td className="num c-flat-target" data-label={`Flat ${targetName}`}>
        {formatValue(r.target.flat, unit)} <span className="muted small">{share(r.target.flat, targetTotal)}</span>
      </td>
      <DeltaCells which="flat" delta={r.deltaFlat} base={r.base.flat} target={r.target.flat} unit={unit} />
      <td className="num c-cum-base" data-label={`Cum ${baseName}`}>
        {formatValue(r.base.cum, unit)}
      </td>
      <td className="num c-cum-target" data-label={`Cum ${targetName}`}>
        {formatValue(r.target.cum, unit)}
      </td>
      <DeltaCells which="cum" delta={r.deltaCum} base={r.base.cum} target={r.target.cum} unit={unit} />
      <td className="c-status">
        <span className={`status status-${r.status}`}>{r.status}</span>
        {tested && v && <span className="verdict-words small">{v.text}</span>}
      </td>
    </tr>
  );
});

/**
 * Functions ranked by change, flat and cum for both stages; a click focuses the function. With several
 * profiles per stage each row says its verdict in words, and rows whose change is inside the noise are
 * marked (flat's and cum's verdicts in the row's title).
 */
const SORT_LABEL: Record<HotPathSort, string> = {
  changes: 'What changed first',
  flat: 'Δ flat',
  cum: 'Δ cum',
  abs: '|Δ|',
};

/** What the table's rows are read against: the pair's names, totals, unit and how verdicts were tested. */
interface PairFigures {
  /** How the rows' verdicts were tested (null: one profile per stage, nothing tested). */
  noise: Diff['noise'];
  unit: string;
  baseTotal: number;
  targetTotal: number;
  baseName: string;
  targetName: string;
}

export const HotPathTable = memo(function HotPathTable(
  props: {
    rows: DiffRow[];
    /** The functions "what changed" names, in its order (null: not known yet, or none). */
    origins?: readonly string[] | null;
    selected: string;
    onSelect: (name: string) => void;
    limit?: number;
    /** The diff's full names of shortened rows (hover texts). */
    fullNames?: Diff['fullNames'];
  } & PairFigures,
) {
  const { unit, baseName, targetName, selected, onSelect } = props;
  // Verdicts in words only when the runs were tested (too few runs: the banner above says so once).
  const tested = props.noise?.status === 'tested';
  const [limit, setLimit] = useState(props.limit ?? 25);
  const [sort, setSort] = useState<HotPathSort>('changes');
  const rows = useMemo(() => sortHotPaths(props.rows, sort, props.origins ?? null), [props.rows, sort, props.origins]);
  // Keep the selected function visible even when it ranks below the cut.
  const cut = rows.slice(0, limit);
  const selectedRow = rows.findIndex((r) => r.name === selected);
  const shown = selectedRow >= limit ? [...cut, rows[selectedRow] as DiffRow] : cut;
  return (
    <div className="table-scroll">
      <label className="field inline small hot-path-sort">
        <span>Rank by</span>
        <select aria-label="Rank hot paths by" value={sort} onChange={(e) => setSort(e.target.value as HotPathSort)}>
          {(Object.keys(SORT_LABEL) as HotPathSort[]).map((k) => (
            <option key={k} value={k}>
              {SORT_LABEL[k]}
            </option>
          ))}
        </select>
        <span className="muted">
          {sort === 'changes'
            ? `the functions "what changed" names first, then by |Δ cum| (${unit})`
            : sort === 'abs'
              ? `|Δ cum| (${unit})`
              : `${sort === 'flat' ? 'Δ flat' : 'Δ cum'} (${unit}), the largest saving first`}
        </span>
      </label>
      <table className="hot-paths" aria-label="Hot-path diff">
        <thead>
          <tr>
            <th scope="col" className="rank">
              #
            </th>
            <th scope="col">Function</th>
            <NumTh>Flat {baseName}</NumTh>
            <NumTh>Flat {targetName}</NumTh>
            <NumTh>Δ flat</NumTh>
            <NumTh>Δ flat %</NumTh>
            <NumTh>Cum {baseName}</NumTh>
            <NumTh>Cum {targetName}</NumTh>
            <NumTh>Δ cum</NumTh>
            <NumTh>Δ cum %</NumTh>
            <th scope="col">{tested ? 'Status · verdict' : 'Status'}</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((r, i) => (
            <HotPathRow
              key={r.name}
              row={r}
              rank={i < cut.length ? i + 1 : selectedRow + 1}
              selected={r.name === selected}
              noise={props.noise}
              unit={unit}
              baseTotal={props.baseTotal}
              targetTotal={props.targetTotal}
              baseName={baseName}
              targetName={targetName}
              fullNames={props.fullNames}
              onSelect={onSelect}
            />
          ))}
        </tbody>
      </table>
      {rows.length > limit && (
        <p className="muted small">
          Showing the top {limit} of {rows.length} functions.{' '}
          <button type="button" className="link-button" onClick={() => setLimit(limit + 100)}>
            Show 100 more
          </button>
        </p>
      )}
    </div>
  );
});

/** A row's change of flat or cum: the difference, then the change in percent of the base. */
function DeltaCells(p: { which: 'flat' | 'cum'; delta: number; base: number; target: number; unit: string }) {
  const c = p.which === 'flat' ? 'dflat' : 'dcum';
  return (
    <>
      <td className={`num c-${c}${moreOrLess(p.delta)}`} data-label={`Δ ${p.which}`}>
        {formatSignedValue(p.delta, p.unit)}
      </td>
      <td className={`num c-${c}-pct`} data-label={`Δ ${p.which} %`}>
        {formatDeltaPercent(p.base, p.target)}
      </td>
    </>
  );
}
