import type { CaptureRecord, Stage } from '../lib/api-types.ts';
import { busyStages, loadText, runText, windowText } from '../lib/capture-format.ts';

/** A visible warning when any stage was captured on a busy machine (other load skews its figures). */
export function BusyCaptureWarning({ stages }: { stages: Stage[] }) {
  const busy = busyStages(stages);
  if (busy.length === 0) return null;
  return (
    <div className="warnings" role="alert" aria-label="Capture warnings">
      <p>
        Captured on a busy machine:{' '}
        {busy.map((b, i) => (
          <span key={b.stage}>
            {i > 0 && ', '}
            <strong>{b.stage}</strong> ({b.idle}% CPU idle before a run)
          </span>
        ))}
        . Other work on the machine skews these stages’ figures.
      </p>
    </div>
  );
}

function CaptureBlock({ c }: { c: CaptureRecord }) {
  const load = loadText(c);
  return (
    <div className="capture">
      <dl>
        <dt>Load</dt>
        <dd>
          {load.what}
          {load.version && <span className="muted"> · {load.version}</span>}
          <pre>
            <code>{load.command}</code>
          </pre>
        </dd>
        {c.pprof && (
          <>
            <dt>Profiles</dt>
            <dd>
              {c.profiles.join(', ')} from <code>{c.pprof}</code>
            </dd>
          </>
        )}
        <dt>Recorded with</dt>
        <dd>
          <pre>
            <code>{c.command}</code>
          </pre>
          <span className="muted small">
            stagediff {c.host.stagediff}, Node {c.host.node}, {c.host.os}/{c.host.arch}, {c.host.cores} cores
          </span>
        </dd>
      </dl>
      <ul className="capture-runs">
        {c.runs.map((r) => (
          <li key={r.run} className={r.machine.busy ? 'busy' : undefined}>
            {runText(r)}
            {windowText(r) && <span className="muted"> · window {windowText(r)}</span>}
            {r.machine.busy && <span className="badge warn">busy machine</span>}
          </li>
        ))}
      </ul>
      {c.error && <p className="warnings">Stopped early: {c.error}</p>}
    </div>
  );
}

/** Per stage: how it was captured (commands, window, versions, machine load), from its capture records. */
export function CaptureDetails({ stages }: { stages: Stage[] }) {
  const withCaptures = stages.filter((s) => (s.captures ?? []).length > 0);
  if (withCaptures.length === 0) return null;
  return (
    <details className="files capture-details">
      <summary>How the stages were captured</summary>
      {withCaptures.map((s) => (
        <section key={s.id} aria-label={`Capture of ${s.name}`}>
          <h3>{s.name}</h3>
          {(s.captures ?? []).map((c) => (
            <CaptureBlock key={`${c.startedAt}|${c.command}`} c={c} />
          ))}
        </section>
      ))}
    </details>
  );
}
