import type { StageRow } from '../lib/api.ts';
import { LazyDetails } from './common.tsx';

/*
 * A stage's conditions (the load tool and settings, Go version and runtime settings, build, machine) as
 * the change engine read them from its files and capture records (api/conditions.ts).
 */

type Conditions = StageRow['conditions'];
type RunConditions = Conditions['runs'][number];

/** One file's or capture's conditions in words: "wrk, 2 threads, 32 connections, 8s, /api/orders". */
export function runConditionsText(r: RunConditions): string {
  const parts: string[] = [];
  if (r.load) parts.push(r.load.text + (r.load.version ? ` (${r.load.version})` : ''));
  if (r.goVersion) parts.push(r.goVersion);
  if (r.gomaxprocs !== null) parts.push(`GOMAXPROCS=${r.gomaxprocs}`);
  if (r.gogc) parts.push(`GOGC=${r.gogc}`);
  if (r.gomemlimit) parts.push(`GOMEMLIMIT=${r.gomemlimit}`);
  for (const b of r.build) parts.push(b);
  if (r.cpu) parts.push(r.cpu);
  if (r.cores !== null) parts.push(`${r.cores} cores`);
  if (r.os) parts.push(r.os);
  if (r.kernel) parts.push(`kernel ${r.kernel}`);
  if (r.host) parts.push(`host ${r.host}`);
  return parts.join(' · ');
}

/** Per stage: each condition's values, then each file's and capture's own. */
export function ConditionsDetails({ rows }: { rows: StageRow[] }) {
  if (!rows.some((r) => r.conditions.runs.length > 0)) return null;
  return (
    <LazyDetails className="files conditions-details" summary="Conditions of each stage">
      {rows.map((r) => (
        <section key={r.stageId} aria-label={`Conditions of ${r.name}`} data-stage-id={r.stageId}>
          <h3>{r.name}</h3>
          {r.conditions.summary.length === 0 ? (
            <p className="muted">No file of this stage states its conditions.</p>
          ) : (
            <dl>
              {r.conditions.summary.map((c) => (
                <div key={`${c.key}|${c.label}`} data-condition={c.key}>
                  <dt>{c.label === 'load' ? 'Load (runs behind the figures)' : c.label}</dt>
                  <dd>{c.values.join(' · ')}</dd>
                </div>
              ))}
            </dl>
          )}
          {r.conditionsVsPrevious && <p className="warnings">Against the previous stage: {r.conditionsVsPrevious}</p>}
          <ul className="condition-runs">
            {r.conditions.runs.map((x) => (
              <li key={`${x.artifactId ?? ''}|${x.source}`} className={x.load && !x.inFigures ? 'muted' : undefined}>
                <strong>{x.source}</strong>: {runConditionsText(x) || 'states no condition'}
                {x.load && !x.inFigures && ' (not in the stage’s figures)'}
              </li>
            ))}
          </ul>
        </section>
      ))}
    </LazyDetails>
  );
}

/** The banner over a pair measured under different conditions (GET …/changes' `conditions.warning`). */
export function ConditionsBanner({ warning, loadComparable }: { warning: string | null; loadComparable: boolean }) {
  if (!warning) return null;
  return (
    <div className="warnings conditions-banner" role="alert" aria-label="Conditions differ">
      <p>
        {warning}{' '}
        {loadComparable
          ? 'The figures are compared with that caveat.'
          : 'Load-test figures (QPS, latency, errors) get no verdict; the per-request figures are compared with that caveat.'}
      </p>
    </div>
  );
}

/** Over the stage table: each stage measured under other conditions than the stage before it. */
export function StageConditionsWarning({ rows }: { rows: StageRow[] }) {
  const differing = rows.flatMap((r, i) =>
    i > 0 && r.conditionsVsPrevious
      ? [{ id: r.stageId, from: rows[i - 1]!.name, to: r.name, text: r.conditionsVsPrevious }]
      : [],
  );
  if (differing.length === 0) return null;
  return (
    <div className="warnings conditions-banner" role="alert" aria-label="Stages measured under different conditions">
      {differing.map((d) => (
        <p key={d.id}>
          <strong>
            {d.from} → {d.to}
          </strong>
          : {d.text}
        </p>
      ))}
    </div>
  );
}
