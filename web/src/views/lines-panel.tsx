import { formatSignedValue, formatValue } from '../../../server/src/api/format.ts';
import { verdictWords } from '../../../server/src/api/words.ts';
import { Empty, ErrorBox, Loading } from '../components/common.tsx';
import type { Reply, Stage } from '../lib/api.ts';
import { fullVerdict } from '../lib/diff-verdicts.ts';
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
function elidedWords(r: SourceRow, aligned: boolean): string {
  const b = r.elided?.base ?? 0;
  const t = r.elided?.target ?? 0;
  const n = (k: number, what: string) => `${k.toLocaleString('en-US')} ${what}${k === 1 ? '' : 's'}`;
  if (!aligned) return `… ${n(b, 'more line')} not shown …`;
  return b === t ? `… ${n(b, 'line')} …` : `… ${n(b, 'line')} of the base, ${n(t, 'line')} of the target …`;
}

function verdictOf(row: SourceRow, noise: SourceView['noise']): string {
  if (row.verdict && noise)
    return verdictWords(fullVerdict(row.verdict.cum, noise, row.base?.cum ?? 0, row.target?.cum ?? 0));
  if (row.change === 'removed' || row.change === 'added') return '';
  return noise?.status ?? '';
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
      <div className="table-scroll">
        {data.aligned ? (
          <table className="source-table">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">flat</th>
                <th scope="col">cum</th>
                <th scope="col">{base?.name}</th>
                <th scope="col">#</th>
                <th scope="col">flat</th>
                <th scope="col">cum</th>
                <th scope="col">{target?.name}</th>
                <th scope="col">Δflat</th>
                <th scope="col">Δcum</th>
                <th scope="col">verdict</th>
              </tr>
            </thead>
            <tbody>
              {data.rows.map((r, i) =>
                r.change === 'elided' ? (
                  // biome-ignore lint/suspicious/noArrayIndexKey: a gap has no line of its own; rows never reorder
                  <tr key={`elided-${i}`} className="src-elided">
                    <td colSpan={11}>{elidedWords(r, true)}</td>
                  </tr>
                ) : (
                  <tr
                    key={`${r.base?.line ?? '-'}:${r.target?.line ?? '-'}`}
                    className={`src-${r.change}`}
                    data-base-line={r.base?.line}
                    data-target-line={r.target?.line}
                  >
                    {r.base ? (
                      <>
                        <td className="src-num">{r.base.line}</td>
                        <td>{r.base.flat ? formatValue(r.base.flat, u) : ''}</td>
                        <td>{r.base.cum ? formatValue(r.base.cum, u) : ''}</td>
                        <td className="src-text">
                          <Code text={r.baseText} highlight={hl} clipped={r.clipped} />
                        </td>
                      </>
                    ) : (
                      <td colSpan={4} className="src-gap" />
                    )}
                    {r.target ? (
                      <>
                        <td className="src-num">{r.target.line}</td>
                        <td>{r.target.flat ? formatValue(r.target.flat, u) : ''}</td>
                        <td>{r.target.cum ? formatValue(r.target.cum, u) : ''}</td>
                        <td className="src-text">
                          <Code text={r.targetText} highlight={hl} clipped={r.clipped} />
                        </td>
                      </>
                    ) : (
                      <td colSpan={4} className="src-gap" />
                    )}
                    <td>{r.deltaFlat ? formatSignedValue(r.deltaFlat, u) : ''}</td>
                    <td>{r.deltaCum ? formatSignedValue(r.deltaCum, u) : ''}</td>
                    <td className="small">{verdictOf(r, noise)}</td>
                  </tr>
                ),
              )}
            </tbody>
          </table>
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
                  // biome-ignore lint/suspicious/noArrayIndexKey: a gap has no line of its own; rows never reorder
                  <tr key={`elided-${i}`} className="src-elided">
                    <td colSpan={9}>{elidedWords(r, false)}</td>
                  </tr>
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
