import type { Stage } from '../lib/api.ts';
import { LazyDetails } from './common.tsx';
import {
  busyStages,
  type CaptureGroup,
  groupCaptures,
  loadText,
  readableCaptures,
  runText,
  windowText,
} from '../lib/capture-format.ts';

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

function CaptureBlock({ group }: { group: CaptureGroup }) {
  const c = group.record;
  const load = loadText(c);
  const more = group.commands.length - 1;
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
          {more > 0 && (
            <div className="muted small">
              and {more} more capture{more > 1 ? 's' : ''} of the same load, one per run
            </div>
          )}
          <span className="muted small">
            stagediff {c.host.stagediff}, Node {c.host.node}, {c.host.os}/{c.host.arch}, {c.host.cores} cores
          </span>
        </dd>
      </dl>
      <ul className="capture-runs">
        {group.runs.map((r) => (
          <li key={r.run} className={r.machine.busy ? 'busy' : undefined}>
            {runText(r)}
            {windowText(r) && <span className="muted"> · window {windowText(r)}</span>}
            {r.machine.busy && <span className="badge warn">busy machine</span>}
          </li>
        ))}
      </ul>
      {group.errors.map((e) => (
        <p key={e} className="warnings">
          Stopped early: {e}
        </p>
      ))}
    </div>
  );
}

/** Per stage: how it was captured (commands, window, versions, machine load), from its capture records. */
export function CaptureDetails({ stages }: { stages: Stage[] }) {
  const withCaptures = stages.filter((s) => readableCaptures(s.captures).length > 0);
  if (withCaptures.length === 0) return null;
  return (
    <LazyDetails className="files capture-details" summary="How the stages were captured">
      {withCaptures.map((s) => (
        <section key={s.id} aria-label={`Capture of ${s.name}`}>
          <h3>{s.name}</h3>
          {groupCaptures(readableCaptures(s.captures)).map((g) => (
            <CaptureBlock key={`${g.record.startedAt}|${g.record.command}`} group={g} />
          ))}
        </section>
      ))}
    </LazyDetails>
  );
}
