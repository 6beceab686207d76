import { DASH, formatChange, formatInt, formatMs, formatShare, formatValue } from '../../../server/src/api/format.ts';
import { FIGURES } from '../../../server/src/api/labels.ts';
import { formatN, verdictText } from '../../../server/src/api/words.ts';
import type {
  ChangePointMark,
  Estimate,
  FigureKey,
  StageChanges,
  StageRow,
  StageTable as StageTableData,
} from '../lib/api.ts';
import { DEFAULT_VIEW, serializeViewState } from '../lib/url-state.ts';
import type { GcStageSummary } from '../lib/gc-summary.ts';
import {
  FIGURE_TEXT,
  type Latency,
  figureSpread,
  figureValue,
  presentLatencyColumns,
  presentPerRequestColumns,
  verdictLatency,
} from '../lib/stage-table-export.ts';
import { VerdictWords, NumTh } from './common.tsx';
import { Sparkline } from './sparkline.tsx';

type Side = 'vsPrevious' | 'vsBaseline';

/** Whether a change of the figure is for the better (null: no change, or no figure). */
function better(k: FigureKey, ratio: number | null): boolean | null {
  if (ratio === null || ratio === 1) return null;
  return k === 'rps' ? ratio > 1 : ratio < 1;
}

/**
 * One change line of a verdict cell, worded as every verdict is (api/words.ts). Only a significant
 * change is coloured (good/bad by direction); a change inside the noise, or one too few runs can judge,
 * stays plain.
 */
function VerdictLine({ row, side, k, className }: { row: StageRow; side: Side; k: FigureKey; className?: string }) {
  const v = row[side]?.[k] ?? null;
  const t = verdictText(v, FIGURE_TEXT[k].style);
  const good = v ? better(k, v.ratio) : null;
  const cls = t.significant ? (good ? 'good' : 'bad') : t.change === '~' ? 'muted' : '';
  return (
    <span
      className={['verdict', cls, className].filter(Boolean).join(' ')}
      data-figure={k}
      data-verdict={v?.status ?? 'missing'}
      data-p={v?.p ?? ''}
      data-n={v ? formatN(v) : ''}
      title={t.title}
    >
      <VerdictWords text={`${FIGURE_TEXT[k].label} ${t.text}`} />
    </span>
  );
}

/** benchstat's verdict on the stages' `go test -bench` results, one line per unit. */
export interface BenchLine {
  unit: string;
  text: string;
  significant: boolean;
  /** Whether the (geomean) change went the good way for the unit; null for no change. */
  better: boolean | null;
  title: string;
}

const UNIT_ORDER = ['sec/op', 'B/op', 'allocs/op'];

/**
 * The stage table's benchmark lines from the change engine's benchmark comparison: per package and
 * unit (sec/op, B/op, allocs/op first; at most `limit` units a package), the geomean change over the paired benchmarks and how many
 * changed significantly; "~" where none did. Unpaired benchmarks (configurations differ) say so.
 */
export function benchLines(b: StageChanges['benchmarks'], limit = 3): BenchLine[] {
  if (!b) return [];
  if (!b.comparable)
    return [
      {
        unit: 'none',
        text: 'benchmarks not compared',
        significant: false,
        better: null,
        title: b.reason ?? 'no benchmark of one stage pairs with one of the other',
      },
    ];
  const rank = (u: string) => (UNIT_ORDER.includes(u) ? UNIT_ORDER.indexOf(u) : 99);
  // benchstat has a table per package: a run over several packages gets a line per package and unit
  // (at most `limit` units each), named by the package's last path element.
  const pkgs = [...new Set(b.units.map((u) => u.pkg))];
  const named = (u: { pkg: string; unit: string }) =>
    pkgs.length > 1 && u.pkg ? `${u.pkg.slice(u.pkg.lastIndexOf('/') + 1)} ${u.unit}` : u.unit;
  return pkgs
    .flatMap((pkg) =>
      b.units
        .filter((u) => u.pkg === pkg)
        .sort((x, y) => rank(x.unit) - rank(y.unit))
        .slice(0, limit),
    )
    .map((u) => {
      const g = u.geomeanDeltaPercent;
      const good = g === null || g === 0 ? null : u.better === 'higher' ? g > 0 : g < 0;
      const rows = b.rows.filter(
        (r) => r.unit === u.unit && (u.pkg === '' || (r.subject ?? '').startsWith(`${u.pkg}.`)),
      );
      if (u.benchmarks === 1 && rows[0]) {
        const t = verdictText(rows[0].verdict, 'percent');
        return {
          unit: u.unit,
          text: `${named(u)} ${t.text}`,
          significant: t.significant,
          better: good,
          title: `${rows[0].subject ?? u.unit}: ${t.title}`,
        };
      }
      const change = g === null ? '?' : formatChange(1 + g / 100);
      return {
        unit: u.unit,
        text:
          u.significant > 0
            ? `${named(u)} ${change} geomean, ${u.significant} of ${u.benchmarks} significant`
            : `${named(u)} ~ (${u.benchmarks} benchmarks, none significant)`,
        significant: u.significant > 0,
        better: good,
        title: `benchstat geomean of ${u.benchmarks} benchmarks${u.pkg ? ` of ${u.pkg}` : ''}: ${change}; ${u.significant} significant`,
      };
    });
}

function VerdictCell({
  row,
  side,
  figures,
  bench,
  className,
}: {
  row: StageRow;
  side: Side;
  figures: FigureKey[];
  bench: BenchLine[] | null;
  className?: string;
}) {
  const verdicts = row[side];
  const cls = `num verdicts${className ? ` ${className}` : ''}`;
  // Regressions first, then improvements, then the rest in the table's order: the lines a reader acts on lead.
  const rank = (k: FigureKey) => {
    const v = verdicts?.[k];
    if (v?.status !== 'significant') return 2;
    return better(k, v.ratio) ? 1 : 0;
  };
  const shown = figures
    .filter((k) => verdicts && verdicts[k].status !== 'missing')
    .sort((a, b) => rank(a) - rank(b) || figures.indexOf(a) - figures.indexOf(b));
  const benchShown = [...(bench ?? [])].sort(
    (a, b) => (a.significant ? (a.better ? 1 : 0) : 2) - (b.significant ? (b.better ? 1 : 0) : 2),
  );
  const kind = side === 'vsPrevious' ? 'prev' : 'base';
  if (shown.length === 0 && !bench?.length)
    return (
      <td className={`${cls} muted`} data-kind={kind}>
        {DASH}
      </td>
    );
  return (
    <td className={cls} data-kind={kind} data-rps-ratio={verdicts?.rps.ratio ?? ''}>
      {shown.map((k) => (
        <VerdictLine
          key={k}
          row={row}
          side={side}
          k={k}
          // A phone keeps every significant change and QPS; a change within the noise waits for a wider screen.
          className={k !== 'rps' && rank(k) === 2 ? 'phone-hide' : undefined}
        />
      ))}
      {benchShown.map((b, i) => (
        <span
          key={b.unit}
          className={`verdict ${b.significant ? (b.better ? 'good' : 'bad') : 'muted'}${i > 0 && !b.significant ? ' phone-hide' : ''}`}
          data-figure={`bench:${b.unit}`}
          title={b.title}
        >
          <VerdictWords text={b.text} />
        </span>
      ))}
    </td>
  );
}

/** "9,742 req/s", the unit in its own span (a phone leaves it out: the column head says QPS). */
function ValueText({ text }: { text: string }) {
  const m = / req\/s$/.exec(text);
  if (!m) return <>{text}</>;
  return (
    <>
      {text.slice(0, m.index)}
      <span className="unit"> req/s</span>
    </>
  );
}

/** A tooltip for a median across runs: the runs, the interval and what it means. */
function estimateTitle(e: Estimate, k: FigureKey): string {
  const f = (v: number) => figureValue({ ...e, median: v }, k);
  const what = k === 'cpuPerRequest' || k === 'allocPerRequest' ? 'profiles' : 'runs';
  if (e.n < 2) return `one ${what === 'runs' ? 'run' : 'profile'}: no noise estimate`;
  const range =
    e.lo !== null && e.hi !== null
      ? `95 % confidence interval of the median ${f(e.lo)} – ${f(e.hi)}`
      : `no 95 % confidence interval with ${e.n} ${what} (benchstat needs 6)`;
  return `median of ${e.n} ${what} (${e.values.map(f).join(', ')}); ${range}`;
}

/** A figure of a row: the median across runs with its ± and run count on a second line, or the single run's figure. */
function FigureCell({
  row,
  k,
  className,
  children,
}: {
  row: StageRow;
  k: FigureKey;
  className?: string;
  children?: React.ReactNode;
}) {
  const e = row.figures[k];
  const spread = figureSpread(e);
  const perRequest = k === 'cpuPerRequest' || k === 'allocPerRequest';
  return (
    <td
      className={`num${className ? ` ${className}` : ''}`}
      data-field={k}
      data-value={e?.median ?? ''}
      title={
        e
          ? estimateTitle(e, k)
          : row.summary === 'aggregate' && !perRequest
            ? 'request-weighted aggregate of runs with different settings'
            : undefined
      }
    >
      <ValueText text={figureValue(e, k)} />
      {e && spread && (
        <span className="muted small spread" data-ci={e.ci ?? ''}>
          {spread}
          <span className="phone-hide">
            {' '}
            · {e.n} {perRequest ? 'profiles' : 'runs'}
          </span>
        </span>
      )}
      {k === 'rps' && row.summary === 'aggregate' && (
        <span className="muted small spread">{row.loadTests} runs, mixed settings</span>
      )}
      {children}
    </td>
  );
}

/** GC figures per stage for the table's GC columns; `byStage` null while loading. */
export interface StageTableGc {
  byStage: Map<string, GcStageSummary> | null;
  error: boolean;
}

function GcCells({ gc, stageId }: { gc: StageTableGc; stageId: string }) {
  const g = gc.byStage?.get(stageId);
  if (!g) {
    const text = gc.byStage ? DASH : gc.error ? '!' : '…';
    const title = gc.byStage
      ? 'no GC trace in this stage'
      : gc.error
        ? 'GC traces failed to load'
        : 'loading GC traces';
    return (
      <>
        <td className="num muted gc-col phone-hide" title={title}>
          {text}
        </td>
        <td className="num muted phone-hide" title={title}>
          {text}
        </td>
      </>
    );
  }
  const pooled = g.traces > 1 ? ` (${g.traces} traces pooled)` : '';
  return (
    <>
      <td
        className="num gc-col phone-hide"
        data-field="gc-p99"
        data-value={g.stwPauseMs.p99}
        title={`p99 of ${g.cycles} stop-the-world pauses${pooled}`}
      >
        {formatMs(g.stwPauseMs.p99)}
      </td>
      <td
        className="num phone-hide"
        data-field="gc-cpu"
        data-value={g.cpuPercent}
        title={`the runtime's cumulative GC CPU share at the last cycle${pooled}`}
      >
        {formatShare(g.cpuPercent / 100)}
      </td>
    </>
  );
}

/**
 * The write-up table, from GET …/stage-table: one row per stage with load-test figures and CPU (and
 * allocated bytes) per request — medians ± 95 % interval across repeated runs — and the change engine's
 * verdicts vs previous/baseline, plus a GC column group (p99 stop-the-world pause, GC CPU %) when some
 * stage has a GC trace (`gc` not null) and benchmark verdicts in the vs-previous cell (`bench`: per stage
 * id, vs the previous stage). On a phone only stage, QPS, P99 and the vs-previous verdicts stay (CSS:
 * `.phone-hide`): of those, QPS and every significant change, regressions first.
 */
export function StageTable({
  table,
  gc = null,
  bench = null,
}: {
  table: StageTableData;
  gc?: StageTableGc | null;
  bench?: Map<string, BenchLine[]> | null;
}) {
  const rows = table.rows;
  const rpsValues = rows.map((r) => r.figures.rps?.median ?? null);
  // A latency column no stage has a figure for (wrk prints no P95) is left out rather than shown as dashes.
  const lat = presentLatencyColumns(rows);
  const perRequest = presentPerRequestColumns(rows);
  const vLat: Latency | null = verdictLatency(lat);
  const judged: FigureKey[] = ['rps', ...(vLat ? [vLat] : []), ...perRequest];
  // On a phone the tail latency stays: P99 where there is one.
  const phoneLat = lat.includes('p99') ? 'p99' : lat[lat.length - 1];
  const before = 5 + lat.length + perRequest.length;
  const marks = table.changePoints ?? [];
  return (
    <>
      <div className="table-scroll stage-table-wrap">
        <table className="stage-table" aria-label="Stage table">
          <thead>
            {gc && (
              <tr className="group-row phone-hide">
                <td colSpan={before} />
                <th scope="colgroup" colSpan={2} className="gc-col">
                  GC
                </th>
              </tr>
            )}
            <tr>
              <th scope="col">Stage</th>
              <th scope="col" className="phone-hide">
                Key action
              </th>
              <NumTh>QPS</NumTh>
              {lat.map((k) => (
                <th key={k} scope="col" className={k === phoneLat ? 'num' : 'num phone-hide'}>
                  {FIGURE_TEXT[k].label}
                </th>
              ))}
              <th scope="col" className="num phone-hide">
                Errors
              </th>
              {perRequest.map((k) => (
                <th
                  key={k}
                  scope="col"
                  className="num phone-hide"
                  title={
                    k === 'cpuPerRequest'
                      ? 'CPU time per request: each CPU profile’s total over the requests served during its window'
                      : 'bytes allocated per request: each allocations profile’s total over the requests served during its window'
                  }
                >
                  {FIGURE_TEXT[k].label}
                </th>
              ))}
              <NumTh>vs previous</NumTh>
              <th scope="col" className="num phone-hide">
                vs baseline
              </th>
              {gc && (
                <>
                  <th scope="col" className="num gc-col phone-hide" title="p99 stop-the-world GC pause">
                    STW p99
                  </th>
                  <th scope="col" className="num phone-hide" title="GC CPU share">
                    GC CPU
                  </th>
                </>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((r, i) => (
              <tr key={r.stageId} data-stage-id={r.stageId} data-summary={r.summary}>
                <th scope="row" title={r.note || undefined}>
                  {r.name}
                  {r.conditionsVsPrevious && (
                    <span className="badge warn" title={r.conditionsVsPrevious}>
                      {' '}
                      conditions differ
                    </span>
                  )}
                  <ChangePointBadge marks={marks.filter((m) => m.stageId === r.stageId)} />
                </th>
                <td className="note phone-hide">{r.note || <span className="muted">{DASH}</span>}</td>
                <FigureCell row={r} k="rps">
                  {rows.length > 1 && (
                    <span className="phone-hide trend">
                      <Sparkline
                        values={rpsValues}
                        highlight={i}
                        width={76}
                        height={18}
                        label={`QPS across stages, ${r.name} marked`}
                      />
                    </span>
                  )}
                </FigureCell>
                {lat.map((k) => (
                  <FigureCell key={k} row={r} k={k} className={k === phoneLat ? undefined : 'phone-hide'} />
                ))}
                <td
                  className={r.errors ? 'num bad phone-hide' : 'num phone-hide'}
                  data-field="errors"
                  data-value={r.errors ?? ''}
                >
                  {formatInt(r.errors)}
                </td>
                {perRequest.map((k) => (
                  <FigureCell key={k} row={r} k={k} className="phone-hide" />
                ))}
                <VerdictCell row={r} side="vsPrevious" figures={judged} bench={bench?.get(r.stageId) ?? null} />
                <VerdictCell row={r} side="vsBaseline" figures={judged} bench={null} className="phone-hide" />
                {gc && <GcCells gc={gc} stageId={r.stageId} />}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {marks.length > 0 && <ChangePoints marks={marks} />}
    </>
  );
}

/** The diff of the two stages around a change point: the page on that pair's Diff tab. */
function changePointHref(m: ChangePointMark): string {
  return serializeViewState({ ...DEFAULT_VIEW, tab: 'diff', base: m.previousStageId, target: m.stageId });
}

/**
 * On the row of the first stage after one or more change points: a mark naming their figures, linking to
 * the diff of this stage against the previous one (the pair around the change).
 */
function ChangePointBadge({ marks }: { marks: readonly ChangePointMark[] }) {
  const first = marks[0];
  if (!first) return null;
  const figures = marks.map((m) => FIGURES[m.figure].label).join(', ');
  return (
    <a
      className="badge change-point-mark"
      href={changePointHref(first)}
      data-figures={marks.map((m) => m.figure).join(' ')}
      title={`change point of ${figures} between ${first.previousStageName} and ${first.stageName}: open the diff of the two stages`}
    >
      {' '}
      change point: {figures}
    </a>
  );
}

/**
 * The change points of QPS, P99 and CPU per request over the stages, each with a link to the diff of
 * the two stages around it (the page opened on that pair's Diff tab).
 */
function ChangePoints({ marks }: { marks: readonly ChangePointMark[] }) {
  return (
    <div className="change-points">
      <h4>Change points</h4>
      <ul>
        {marks.map((m) => {
          const f = FIGURES[m.figure];
          const href = changePointHref(m);
          return (
            <li key={`${m.figure}-${m.stageId}`} data-figure={m.figure} data-stage-id={m.stageId}>
              <span className={m.direction === 'worse' ? 'bad' : 'good'}>
                {f.label} {m.direction === 'worse' ? 'worsens' : 'improves'}
              </span>{' '}
              between <b>{m.previousStageName}</b> and <b>{m.stageName}</b>: {formatValue(m.meanBefore, f.unit)} →{' '}
              {formatValue(m.meanAfter, f.unit)} ({formatChange(m.meanAfter / m.meanBefore)}, p=
              {m.pValue.toPrecision(2)}) · <a href={href}>diff of the two stages</a>
            </li>
          );
        })}
      </ul>
      <p className="muted">
        E-Divisive with a t-test over the stages' medians (as Apache Otava computes it), p ≤ 0.001.
      </p>
    </div>
  );
}

/** What n, the ± and p mean, in a few lines beside the table. */
export function HowToRead({ alpha, runsNeeded }: { alpha: number; runsNeeded: number }) {
  return (
    <details className="how-to-read">
      <summary>How to read this</summary>
      <ul>
        <li>
          <strong>n</strong>: runs per stage (load-test runs of the same tool and settings, e.g. from{' '}
          <code>stagediff capture --runs 5</code>; for CPU/req and Alloc/req, profiles). With several, each figure is
          the <strong>median</strong> of the runs.
        </li>
        <li>
          <strong>± CI</strong>: the 95 % confidence interval of that median, as benchstat computes it; “± ∞” means too
          few runs for one (it needs 6).
        </li>
        <li>
          <strong>p</strong>: how likely a difference this large is if nothing changed (Mann–Whitney U test on the runs,
          as benchstat). A change is <strong>significant</strong>, and coloured, only when p ≤ {alpha};{' '}
          <strong>~</strong> means it is within the noise.
        </li>
        <li>
          <strong>too few to test</strong>: with fewer than {runsNeeded} runs per stage no ordering of the runs can
          reach p ≤ {alpha}; the change is shown, not judged. <strong>1 run: no noise estimate</strong>: a single run
          says nothing about how much the next one would differ.
        </li>
        <li>
          <strong>CPU/req</strong>: CPU time per request, each CPU profile’s total over the requests its stage served
          during the profile’s window; <strong>Alloc/req</strong> the same for bytes allocated (allocations profiles
          over a window).
        </li>
        <li>
          Benchmarks: benchstat's geomean of the medians of every benchmark the two stages share, and how many of them
          changed significantly.
        </li>
      </ul>
    </details>
  );
}

/** A sentence of a figure the stage table shows: the headline figures of a change. */
const HEADLINE =
  /^(QPS|P50|P95|P99|Errors?|Error rate|CPU per request|Allocated per request|The tail of traced requests:) /;
/** Most sentences a stage leads with; the rest are folded. */
const MAX_LEAD = 8;

/**
 * A stage's sentences split in two: the lead — the engine's named changes (functions removed, added or
 * changed, which it words first) through its headline figures — and the rest (runtime, scheduling, GC…),
 * folded. The order is the engine's.
 */
export function leadOf(sentences: readonly string[]): { lead: string[]; rest: string[] } {
  let last = -1;
  for (const [i, t] of sentences.entries()) if (HEADLINE.test(t)) last = i;
  const n = Math.min(last >= 0 ? last + 1 : 3, MAX_LEAD);
  return { lead: sentences.slice(0, n), rest: sentences.slice(n) };
}

/**
 * "What changed" per stage: its key action, then the change engine's sentences against the previous
 * stage (null: loading), the named changes and headline figures first and the rest folded.
 */
export function WhatChangedList({
  items,
}: {
  items: { stageId: string; name: string; note?: string; sentences: string[] | null; error?: string | null }[];
}) {
  return (
    <ol className="what-changed" aria-label="What changed">
      {items.map((it) => {
        const { lead, rest } = leadOf(it.sentences ?? []);
        return (
          <li key={it.stageId} data-stage-id={it.stageId}>
            <strong>{it.name}</strong>
            {it.note ? <span className="muted what-changed-note"> — {it.note}</span> : null}
            {it.error ? (
              <span className="bad small"> {it.error}</span>
            ) : it.sentences === null ? (
              <span className="muted"> computing…</span>
            ) : it.sentences.length === 0 ? (
              <span className="muted"> nothing to compare with the previous stage</span>
            ) : (
              <>
                <ul>
                  {lead.map((s) => (
                    <li key={s}>{s}</li>
                  ))}
                </ul>
                {rest.length > 0 && (
                  <details className="what-changed-more">
                    <summary>
                      {rest.length} more {rest.length === 1 ? 'change' : 'changes'}
                    </summary>
                    <ul>
                      {rest.map((s) => (
                        <li key={s}>{s}</li>
                      ))}
                    </ul>
                  </details>
                )}
              </>
            )}
          </li>
        );
      })}
    </ol>
  );
}
