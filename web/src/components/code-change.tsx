import { NumTh } from './common.tsx';
import { formatChange, formatValue } from '../../../server/src/api/format.ts';
import { codeChangeSummary, codeStatusWords, codeVerdictWords } from '../../../server/src/api/code-change-words.ts';
import type { CodeChange, CodeFunction } from '../../../server/src/api/changes.ts';

/** One function row: its name, what happened to its code, its cost on each side, the change and the verdict. */
function FunctionRow({ f, unit }: { f: CodeFunction; unit: string }) {
  const significant = f.verdict?.status === 'significant';
  const cls = significant ? (f.delta < 0 ? 'good' : 'bad') : 'muted';
  return (
    <tr data-fn={f.name} data-code={f.code} data-verdict={f.verdict?.status ?? 'untested'} data-p={f.verdict?.p ?? ''}>
      <th scope="row">
        <code>{f.name}</code>
      </th>
      <td>{codeStatusWords(f)}</td>
      <td className="num">{f.base === null ? '—' : formatValue(f.base, unit)}</td>
      <td className="num">{f.target === null ? '—' : formatValue(f.target, unit)}</td>
      <td className={`num ${cls}`}>
        {f.deltaPercent !== null ? formatChange(1 + f.deltaPercent / 100) : f.target !== null ? 'new' : '—'}
      </td>
      <td className={cls}>{codeVerdictWords(f)}</td>
    </tr>
  );
}

function FunctionTable({ rows, unit, label }: { rows: CodeFunction[]; unit: string; label: string }) {
  return (
    <div className="table-scroll">
      <table className="code-change-table" aria-label={label}>
        <thead>
          <tr>
            <th scope="col">function</th>
            <th scope="col">code</th>
            <NumTh>base</NumTh>
            <NumTh>target</NumTh>
            <NumTh>Δ</NumTh>
            <th scope="col">verdict</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((f) => (
            <FunctionRow key={f.name} f={f} unit={unit} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * "The code change" of each stage against the previous one (GET …/changes `code`): the functions its
 * sources edited, added and removed with their cost and verdict, then the costs that moved in code
 * that did not change. Stages whose pair has no sources on either side are left out.
 */
export function CodeChanges({ items }: { items: { stageId: string; name: string; code: CodeChange | undefined }[] }) {
  const shown = items.filter((it): it is { stageId: string; name: string; code: CodeChange } => it.code !== undefined);
  if (shown.length === 0) return null;
  return (
    <section className="code-changes" aria-label="The code change">
      <h3>The code change</h3>
      {shown.map(({ stageId, name, code }) => (
        <details key={stageId} data-stage-id={stageId} className="code-change">
          <summary>
            <strong>{name}</strong> {codeChangeSummary(code)[0]}
          </summary>
          {code.status === 'ok' && (
            <>
              <p>{codeChangeSummary(code).slice(1).join(' ')}</p>
              {code.changed.length > 0 && (
                <FunctionTable rows={code.changed} unit={code.unit} label={`Functions changed in ${name}`} />
              )}
              {code.indirect.length > 0 && (
                <>
                  <h4>Cost moved, code unchanged</h4>
                  <FunctionTable
                    rows={code.indirect}
                    unit={code.unit}
                    label={`Cost moved, code unchanged, in ${name}`}
                  />
                </>
              )}
              {code.indirect.length === 0 && code.closest.length > 0 && (
                <>
                  <h4>Nearest to a change, code unchanged</h4>
                  <FunctionTable
                    rows={code.closest}
                    unit={code.unit}
                    label={`Nearest to a change, code unchanged, in ${name}`}
                  />
                </>
              )}
            </>
          )}
        </details>
      ))}
    </section>
  );
}
