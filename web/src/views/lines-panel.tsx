import { useEffect, useState } from 'react';
import { formatSignedValue, formatValue } from '../../../server/src/api/format.ts';
import { verdictWords } from '../../../server/src/api/words.ts';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import type { Reply, Stage } from '../lib/api.ts';
import { fullVerdict, untestedReason } from '../lib/diff-verdicts.ts';
import { goTokens } from '../lib/highlight.ts';
import { functionOf } from '../lib/lines.ts';
import { hasProfile } from '../lib/profile-kinds.ts';
import type { PanelProps } from './comparison-panels.tsx';
import { useApi } from './use-fetch.ts';

type SourceView = Reply<'source'>;
type SourceRow = SourceView['rows'][number];

/**
 * One line of Go, highlighted up to `highlight` characters (the server's SOURCE_VIEW_HIGHLIGHT_CHARS; the
 * rest plain): tokens rendered as text (never as markup). A line the server cut ends in a marker.
 */
function Code({ text, highlight, clipped }: { text: string | null; highlight: number; clipped?: boolean }) {
  if (text === null) return null;
  const head = text.length > highlight ? text.slice(0, highlight) : text;
  return (
    <code className="src-code">
      {goTokens(head).map((t, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: tokens of one line, in order, never reordered
        <span key={i} className={t.classes.length ? t.classes.map((c) => `tok-${c}`).join(' ') : undefined}>
          {t.text}
        </span>
      ))}
      {head.length < text.length ? text.slice(head.length) : null}
      {clipped ? (
        <span className="src-clipped" title="the line is longer: cut at the server's SOURCE_VIEW_MAX_LINE_CHARS">
          …
        </span>
      ) : null}
    </code>
  );
}

/** An `elided` row's words: the lines of each version it leaves out. */
/** The row standing for lines left out: it spans the table and says how many and why. */
function elidedRow(r: SourceRow, i: number, cols: number, aligned: boolean) {
  // A gap has no line of its own: its place keys it (rows never reorder).
  return (
    <tr key={`elided-${i}`} className="src-elided">
      <td colSpan={cols}>{elidedWords(r, aligned)}</td>
    </tr>
  );
}

function elidedWords(r: SourceRow, aligned: boolean): string {
  const b = r.elided?.base ?? 0;
  const t = r.elided?.target ?? 0;
  const n = (k: number, what: string) => `${k.toLocaleString('en-US')} ${what}${k === 1 ? '' : 's'}`;
  if (!aligned) return `… ${n(b, 'more line')} not shown …`;
  return b === t ? `… ${n(b, 'line')} …` : `… ${n(b, 'line')} of the base, ${n(t, 'line')} of the target …`;
}

/** A line's verdict in the shared words; empty where the line was not tested (see `untestedReason`). */
function verdictOf(row: SourceRow, noise: SourceView['noise']): string {
  if (row.verdict && noise)
    return verdictWords(fullVerdict(row.verdict.cum, noise, row.base?.cum ?? 0, row.target?.cum ?? 0));
  return '';
}

/** Below this width the two versions are stacked (one column of code) rather than side by side. */
const STACKED_QUERY = '(max-width: 900px)';

/** Whether the window is narrow enough to stack the two versions. */
function useStacked(): boolean {
  const [stacked, setStacked] = useState(() => window.matchMedia(STACKED_QUERY).matches);
  useEffect(() => {
    const m = window.matchMedia(STACKED_QUERY);
    const on = () => setStacked(m.matches);
    m.addEventListener('change', on);
    on();
    return () => m.removeEventListener('change', on);
  }, []);
  return stacked;
}

const GO_VERSION_FROM: Record<NonNullable<SourceView['base']['goVersion']>['from'], string> = {
  metrics: "the stage's runtime metrics (go_info)",
  setting: "the server's SOURCE_GO_VERSION",
  'go.mod': "the toolchain line of the stage's go.mod (the least the build used)",
};

/** Where a side's text came from: the stage's own sources, a module version from the server's module proxy, or nowhere. */
function sideNote(s: SourceView['base']): string {
  if (s.textFrom === 'proxy' && s.module) {
    const std = s.goVersion
      ? `the standard library of ${s.goVersion.version} (as ${GO_VERSION_FROM[s.goVersion.from]} says), `
      : '';
    return `${s.stageName}: ${s.path} from ${std}${s.module.module}@${s.module.version} on the module proxy${s.module.fetched ? '' : ' (cached)'}, not from the stage's own sources`;
  }
  if (s.textFrom === 'sources')
    return `${s.stageName}: ${s.path} from its own sources${s.revision ? ` at ${s.revision.slice(0, 12)}${s.dirty ? ' (dirty)' : ''}` : ''}`;
  if (s.problem) return `${s.stageName}: no text for ${s.file ?? 'the function'}: ${s.problem}`;
  if (!s.hasSources) return `${s.stageName}: no sources stored`;
  return `${s.stageName}: ${s.file ?? 'the function'} is not among its sources`;
}

/**
 * One function's source in both stages side by side: each stage's own version of the file (stored
 * with the stage), aligned by a text diff, each line with its flat and cum in both stages and the
 * change with its verdict when the stages have enough runs. Without sources on both sides, the
 * function's lines are listed by file and number.
 */
export function LinesPanel(props: PanelProps & { base: Stage | undefined; target: Stage | undefined }) {
  const { base, target, view } = props;
  const fn = functionOf(view.fn, view.granularity);
  const stacked = useStacked();
  const ok = !!fn && hasProfile(base, props.kind) && hasProfile(target, props.kind);
  const { data, error, loading, reload } = useApi(
    'source',
    ok
      ? {
          params: { id: props.comparisonId },
          query: {
            base: base.id,
            target: target.id,
            fn,
            ...(props.kind ? { kind: props.kind } : {}),
            ...(view.sampleType ? { sampleType: view.sampleType } : {}),
            ...(view.mode !== 'auto' ? { mode: view.mode } : {}),
            ...props.filters,
          },
        }
      : null,
    props.revision,
  );
  if (!fn)
    return <Empty>Select a function (click a frame, a hot-path row or a trajectory) to see its source lines.</Empty>;
  if (!ok) return <Empty>Both stages need a profile of this kind.</Empty>;
  if (error) return <ErrorBox error={error} onRetry={reload} />;
  if (loading || !data) return <Loading what="the lines" />;
  if (data.rows.length === 0) return <Empty>No samples on the lines of {fn} in either stage.</Empty>;
  const u = data.unit;
  const noise = data.noise;
  const hl = data.highlightChars;
  const untested = untestedReason(noise);
  return (
    <div className="lines-panel">
      <h3>
        <code className="fn-name">{fn}</code> line by line: {base?.name} → {target?.name}
      </h3>
      <p className="muted small">
        {data.sampleType} ({u}), {data.mode}. Each line as go tool pprof -list counts it in each stage's own profiles.{' '}
        {data.aligned
          ? 'Each stage shows its own version of the file, aligned line by line: removed lines keep their old cost, added lines show their new one.'
          : 'Without the sources of both stages, lines are listed by file and number (the number each build ran).'}
      </p>
      <ul className="muted small source-origins">
        <li data-text-from={data.base.textFrom}>{sideNote(data.base)}</li>
        <li data-text-from={data.target.textFrom}>{sideNote(data.target)}</li>
        {data.limited ? <li className="source-limited">{data.limited}</li> : null}
      </ul>
      {untested ? <p className="muted small lines-untested">Lines not judged: {untested}.</p> : null}
      <div className="table-scroll">
        {data.aligned && stacked ? (
          <StackedTable data={data} baseName={base?.name ?? ''} targetName={target?.name ?? ''} judged={!untested} />
        ) : data.aligned ? (
          <SideBySideTable data={data} baseName={base?.name ?? ''} targetName={target?.name ?? ''} judged={!untested} />
        ) : (
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
                <th scope="col">source</th>
              </tr>
            </thead>
            <tbody>
              {data.rows.map((r, i) =>
                r.change === 'elided' ? (
                  elidedRow(r, i, 9, false)
                ) : (
                  <tr key={`${r.file}:${r.base?.line}`} data-line={r.base?.line}>
                    <th scope="row">
                      <code>
                        {r.file}:{r.base?.line}
                      </code>
                    </th>
                    <td>{formatValue(r.base?.flat ?? 0, u)}</td>
                    <td>{formatValue(r.base?.cum ?? 0, u)}</td>
                    <td>{formatValue(r.target?.flat ?? 0, u)}</td>
                    <td>{formatValue(r.target?.cum ?? 0, u)}</td>
                    <td>{formatSignedValue(r.deltaFlat, u)}</td>
                    <td>{formatSignedValue(r.deltaCum, u)}</td>
                    <td className="small">{verdictOf(r, noise)}</td>
                    <td className="src-text">
                      <Code text={r.targetText ?? r.baseText} highlight={hl} clipped={r.clipped} />
                    </td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
        )}
      </div>
    </div>
  );
}

type TableProps = { data: SourceView; baseName: string; targetName: string; judged: boolean };

/** A line's figure, or nothing for none. */
function fig(v: number | undefined, u: string): string {
  return v ? formatValue(v, u) : '';
}

/**
 * Both versions side by side, each line with its figures in its stage, then the changes and the
 * verdict: a fixed layout over the panel's width, long lines wrapped rather than cut.
 */
function SideBySideTable({ data, baseName, targetName, judged }: TableProps) {
  const u = data.unit;
  const hl = data.highlightChars;
  const cols = judged ? 11 : 10;
  // One version's four cells of a row: its line number, flat, cum and text (a gap where it has no line).
  const sideCells = (f: SourceRow['base'], text: string | null, clipped: boolean | undefined) =>
    f ? (
      <>
        <td className="src-num">{f.line}</td>
        <td>{fig(f.flat, u)}</td>
        <td>{fig(f.cum, u)}</td>
        <td className="src-text">
          <Code text={text} highlight={hl} clipped={clipped} />
        </td>
      </>
    ) : (
      <td colSpan={4} className="src-gap" />
    );
  return (
    <table className="source-table side-by-side-source" data-layout="side-by-side">
      <colgroup>
        <col className="c-num" />
        <col className="c-fig" />
        <col className="c-fig" />
        <col className="c-code" />
        <col className="c-num" />
        <col className="c-fig" />
        <col className="c-fig" />
        <col className="c-code" />
        <col className="c-fig" />
        <col className="c-fig" />
        {judged ? <col className="c-verdict" /> : null}
      </colgroup>
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col">flat</th>
          <th scope="col">cum</th>
          <th scope="col" className="src-head">
            {baseName}
          </th>
          <th scope="col">#</th>
          <th scope="col">flat</th>
          <th scope="col">cum</th>
          <th scope="col" className="src-head">
            {targetName}
          </th>
          <th scope="col">Δflat</th>
          <th scope="col">Δcum</th>
          {judged ? <th scope="col">verdict</th> : null}
        </tr>
      </thead>
      <tbody>
        {data.rows.map((r, i) =>
          r.change === 'elided' ? (
            elidedRow(r, i, cols, true)
          ) : (
            <tr
              key={`${r.base?.line ?? '-'}:${r.target?.line ?? '-'}`}
              className={`src-${r.change}`}
              data-base-line={r.base?.line}
              data-target-line={r.target?.line}
            >
              {sideCells(r.base, r.baseText, r.clipped)}
              {sideCells(r.target, r.targetText, r.clipped)}
              <td>{r.deltaFlat ? formatSignedValue(r.deltaFlat, u) : ''}</td>
              <td>{r.deltaCum ? formatSignedValue(r.deltaCum, u) : ''}</td>
              {judged ? <td className="small src-verdict">{verdictOf(r, data.noise)}</td> : null}
            </tr>
          ),
        )}
      </tbody>
    </table>
  );
}

/** A side's figures of a line in words: "cum 1.2ms, flat 0.4ms" (nothing for none). */
function sideFigures(f: SourceRow['base'], u: string): string {
  if (!f || (!f.flat && !f.cum)) return '';
  return [f.cum ? `cum ${formatValue(f.cum, u)}` : '', f.flat ? `flat ${formatValue(f.flat, u)}` : '']
    .filter(Boolean)
    .join(', ');
}

/**
 * The two versions stacked, for a narrow screen: one column of code, as a unified diff reads — a line
 * both versions share once, a removed line (−) above the added one (+) — each line with its figures in
 * both stages, the change and the verdict on a line of their own below it.
 */
function StackedTable({ data, baseName, targetName, judged }: TableProps) {
  const u = data.unit;
  const hl = data.highlightChars;
  return (
    <table className="source-table stacked-source" data-layout="stacked">
      <thead>
        <tr>
          <th scope="col">#</th>
          <th scope="col" className="src-head">
            {baseName} → {targetName}
          </th>
        </tr>
      </thead>
      <tbody>
        {data.rows.flatMap((r, i) => {
          if (r.change === 'elided')
            return [
              // biome-ignore lint/suspicious/noArrayIndexKey: a gap has no line of its own; rows never reorder
              <tr key={`elided-${i}`} className="src-elided">
                <td colSpan={2}>{elidedWords(r, true)}</td>
              </tr>,
            ];
          const key = `${r.base?.line ?? '-'}:${r.target?.line ?? '-'}`;
          const mark = r.change === 'removed' ? '−' : r.change === 'added' ? '+' : '';
          const num =
            r.change === 'same' && r.base && r.target && r.base.line !== r.target.line
              ? `${r.base.line}→${r.target.line}`
              : String((r.target ?? r.base)?.line ?? '');
          const b = sideFigures(r.base, u);
          const t = sideFigures(r.target, u);
          const change = [
            r.deltaCum ? `Δcum ${formatSignedValue(r.deltaCum, u)}` : '',
            r.deltaFlat ? `Δflat ${formatSignedValue(r.deltaFlat, u)}` : '',
            judged ? verdictOf(r, data.noise) : '',
          ]
            .filter(Boolean)
            .join(' · ');
          const figures = [
            b ? `${baseName}: ${b}` : r.base ? `${baseName}: —` : '',
            t ? `${targetName}: ${t}` : r.target ? `${targetName}: —` : '',
          ]
            .filter(Boolean)
            .join(' · ');
          const out = [
            <tr key={key} className={`src-${r.change}`} data-base-line={r.base?.line} data-target-line={r.target?.line}>
              <td className="src-num">
                {mark}
                {num}
              </td>
              <td className="src-text">
                <Code text={r.targetText ?? r.baseText} highlight={hl} clipped={r.clipped} />
              </td>
            </tr>,
          ];
          if (b || t)
            out.push(
              <tr key={`${key}-figures`} className="src-figures">
                <td />
                <td>
                  {figures}
                  {change ? <span className="src-change"> · {change}</span> : null}
                </td>
              </tr>,
            );
          return out;
        })}
      </tbody>
    </table>
  );
}
