import { memo } from 'react';
import { formatInt, formatShare, formatValue } from '../../../server/src/api/format.ts';
import type { Diff, DiffMode } from '../lib/api.ts';
import { hatchColors, legendStops } from '../lib/diff-color.ts';

const MODE_TEXT: Record<DiffMode, string> = {
  absolute: 'Absolute: target − base in the sample unit, as go tool pprof -diff_base.',
  share: 'Share of total: each side divided by its own total, so frames compare as fractions of the profile.',
  normalize: 'Normalized: base scaled so both totals match (pprof -normalize).',
  'per-request': 'Per request: each side divided by the requests its stage’s load test served.',
};

/** The swatch of frames within the run-to-run noise: the flamegraph's hatch, drawn in CSS. */
function hatchStyle(dark: boolean): React.CSSProperties {
  const { ground, stripe } = hatchColors(dark);
  return { background: `repeating-linear-gradient(45deg, ${stripe} 0 2px, ${ground} 2px 5px)` };
}

/**
 * Legend of the diff: the mode it is in (and why, when the server chose it), what its colours mean —
 * the size of each change, and, when the stages' runs were tested, which frames are within the noise
 * (hatched) apart from those below the noise floor (grey) — totals and the noise floor control.
 */
export const DiffLegend = memo(function DiffLegend(props: {
  diff: Diff;
  baseName: string;
  targetName: string;
  noise: number;
  onNoise?: (v: number) => void;
  dark: boolean;
}) {
  const { diff, baseName, targetName, noise, onNoise, dark } = props;
  const modeName = diff.mode === 'per-request' ? 'per request' : diff.mode;
  const tested = diff.noise?.status === 'tested';
  return (
    <aside className="diff-legend" aria-label="Diff legend">
      <div className="legend-mode" data-mode={diff.mode}>
        <strong>Mode: {modeName}</strong> — {MODE_TEXT[diff.mode]}
        {diff.modeReason && <span className="mode-reason"> Chosen automatically: {diff.modeReason}.</span>}
        {diff.perRequest && (
          <span>
            {' '}
            Requests: {baseName} {formatInt(diff.perRequest.baseRequests)}, {targetName}{' '}
            {formatInt(diff.perRequest.targetRequests)} ({diff.perRequest.method}).
          </span>
        )}
      </div>
      {diff.noise && tested && (
        <div className="legend-noise small" data-noise-normalisation={diff.noise.normalisation}>
          Noise: {diff.noise.nBase} + {diff.noise.nTarget} profiles; each function's flat and cum{' '}
          {diff.noise.normalisation === 'raw' ? 'as recorded' : diff.noise.normalisation} per profile, Mann–Whitney U
          test (as benchstat).{' '}
          <span data-tested={diff.noise.tested}>{formatInt(diff.noise.tested)} functions tested</span> (of{' '}
          {formatInt(diff.noise.candidates)}: those whose cost moves by at least {formatShare(diff.noise.floor)} of the
          total across the profiles); a change is significant where its Benjamini–Hochberg q ≤ {diff.noise.alpha}, so at
          most {diff.noise.alpha * 100} % of the significant ones are expected to be chance. Frames and rows not
          significant are hatched; hover for p and q.
        </div>
      )}
      <div className="legend-scale">
        {legendStops(dark).map((s) => (
          <span key={s.label} className="legend-stop">
            <span className="swatch" style={{ background: s.color }} aria-hidden="true" />
            {s.label}
          </span>
        ))}
        {tested && (
          <span className="legend-stop" data-legend="within-noise">
            <span className="swatch" style={hatchStyle(dark)} aria-hidden="true" />
            not significant (q &gt; {diff.noise?.alpha}, or not tested)
          </span>
        )}
        <span className="legend-stop">
          name <span className="marker">[new]</span> / name <span className="marker">[removed]</span>: frame only in{' '}
          {targetName} / {baseName}
        </span>
      </div>
      <div className="legend-totals">
        Red = more in <strong>{targetName}</strong>, blue = less (vs <strong>{baseName}</strong>). Frame width = |base|
        + |target|. Totals: {baseName} {formatValue(diff.baseTotal, diff.unit)} → {targetName}{' '}
        {formatValue(diff.targetTotal, diff.unit)} ({diff.sampleType}, unit {diff.unit}).
        {diff.mode === 'normalize' && diff.scale.base !== 1 && <> Base scaled ×{diff.scale.base.toPrecision(4)}.</>}
      </div>
      {onNoise && (
        <label className="field inline">
          <span>Noise floor</span>
          <input
            type="range"
            min={0}
            max={0.02}
            step={0.0005}
            value={noise}
            aria-label="Noise floor"
            onChange={(e) => onNoise(Number(e.target.value))}
          />
          <span className="muted">changes under {formatShare(noise)} of the larger total are grey</span>
        </label>
      )}
    </aside>
  );
});
