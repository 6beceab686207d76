/**
 * Pure helpers for the load-test charts and the trajectory view.
 */

/** HdrHistogram-style x coordinate of a percentile: 1 / (1 − p), p in 0..1 (50 → 2, 99 → 100, 99.9 → 1000). */
export function percentileToX(percentile: number): number {
  const p = Math.min(percentile / 100, 0.999999);
  return 1 / (1 - p);
}

/** Axis label for an x = 1/(1−p) tick: 2 → "50 %", 100 → "99 %", 1000 → "99.9 %". */
export function xToPercentileLabel(x: number): string {
  const p = (1 - 1 / x) * 100;
  const text = p >= 99 ? Number(p.toPrecision(6)).toString() : Math.round(p).toString();
  return `${text} %`;
}

/** Points of a latency distribution for a log-x chart: [x, ms]; percentiles ≥ 100 are dropped. */
export function percentileCurve(dist: { percentile: number; ms: number }[]): [number, number][] {
  return dist
    .filter((d) => d.percentile > 0 && d.percentile < 100 && Number.isFinite(d.ms))
    .sort((a, b) => a.percentile - b.percentile)
    .map((d) => [percentileToX(d.percentile), d.ms]);
}

/** Relative-time series: t (seconds since the run start) → value; null values become gaps. */
export function relativeSeries<T extends { t: number }>(
  buckets: T[],
  pick: (b: T) => number | null | undefined,
): [number, number | null][] {
  if (buckets.length === 0) return [];
  const t0 = Math.min(...buckets.map((b) => b.t));
  return buckets.map((b) => {
    const v = pick(b);
    return [b.t - t0, typeof v === 'number' && Number.isFinite(v) ? v : null];
  });
}

/** SVG polyline points for a sparkline of values (nulls skipped), in a width × height box. */
export function sparklinePoints(
  values: (number | null)[],
  width: number,
  height: number,
  pad = 2,
  /** The value range the height spans (default: 0 or below to the largest value). */
  range?: { min: number; max: number },
): string {
  const present = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (present.length === 0) return '';
  const max = range?.max ?? Math.max(...present);
  const min = range?.min ?? Math.min(0, ...present);
  const span = max - min || 1;
  const n = values.length;
  const pts: string[] = [];
  values.forEach((v, i) => {
    if (v === null || !Number.isFinite(v)) return;
    const x = n === 1 ? width / 2 : pad + (i * (width - 2 * pad)) / (n - 1);
    const y = height - pad - ((v - min) / span) * (height - 2 * pad);
    pts.push(`${x.toFixed(1)},${y.toFixed(1)}`);
  });
  return pts.join(' ');
}
