import { formatValue } from '../../../server/src/api/format.ts';
import type { Flamegraph } from '../lib/api.ts';

/** The unit fields every single-stage view carries (flamegraph, sandwich). */
type Unit = Pick<Flamegraph, 'mode' | 'modeReason' | 'perRequest' | 'unit'>;

/** The unit of one recorded value ("nanoseconds/request" → "nanoseconds"). */
function recordedUnit(unit: string): string {
  return unit.replace(/\/request$/, '');
}

/**
 * What a stage's tree is counted in, said once over it: per request (with each profile's run and
 * divisor, and its own figure per request), as recorded, or as a share of the total.
 */
export function UnitNote({ data, stage }: { data: Unit; stage: string }) {
  const per = data.perRequest;
  return (
    <div className="unit-note muted small" data-unit-mode={data.mode}>
      {data.mode === 'per-request' ? (
        <>
          Per request: each profile ÷ the requests served during its window,{' '}
          {per?.measured ? 'counted from its own load run' : 'estimated from the stage’s req/s'}.
        </>
      ) : data.mode === 'share' ? (
        <>Share of the stage's total.</>
      ) : (
        <>As recorded ({recordedUnit(data.unit)}), as go tool pprof shows it.</>
      )}
      {data.modeReason && <span className="mode-reason"> Chosen automatically: {data.modeReason}.</span>}
      {per && (
        <details className="unit-divisors">
          <summary>
            Divisors of {stage}: {formatValue(per.requests, 'requests')} over {per.profiles.length}{' '}
            {per.profiles.length === 1 ? 'profile' : 'profiles'}
          </summary>
          <ul aria-label={`Per-request divisors of ${stage}`}>
            {per.profiles.map((p) => (
              <li
                key={p.artifactId}
                data-profile={p.filename ?? p.artifactId}
                data-run={p.run?.filename ?? ''}
                data-method={p.method ?? 'none'}
                data-per-request={p.total !== null && p.requests ? p.total / p.requests : ''}
              >
                {p.filename ?? p.artifactId}
                {p.run ? ` ÷ ${p.run.filename}` : ''}
                {p.requests !== null ? ` (${formatValue(p.requests, 'requests')})` : ''}
                {p.total !== null && p.requests
                  ? ` = ${formatValue(p.total / p.requests, `${recordedUnit(data.unit)}/request`)}`
                  : ''}
                {p.description ? ` — ${p.description}` : ''}
              </li>
            ))}
          </ul>
        </details>
      )}
    </div>
  );
}
