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

/** A run's figures of one load: what the load panel groups charts by. */
export interface LoadRunLike {
  format: string;
  summary: { meta: { tool?: string; rate?: number | null; connections?: number | null } };
}

/** Tools whose runs send at a set rate whatever the answers (vegeta attacks at -rate, wrk2 at -R). */
const FIXED_RATE_FORMATS = /^(vegeta|wrk2)/;

/**
 * The load model a run applied, as the stage table's rule reads it: a fixed rate (open loop: requests
 * sent at a set pace whatever the answers) or a closed loop (each connection waits for its answer, so
 * throughput is what the service gives). Runs of different tools or settings are never one chart.
 * `rate` is the rate asked for, where the file records it.
 */
export function loadModel(r: LoadRunLike): { key: string; title: string; fixed: boolean; rate: number | null } {
  const m = r.summary.meta;
  const tool = m.tool || r.format;
  const rate = typeof m.rate === 'number' && m.rate > 0 ? m.rate : null;
  // A requests counter read for a stage imported from a profiler: the traffic clients sent (open, as
  // a fixed rate is), not a load tool's loop.
  if (r.format === 'prometheus')
    return {
      key: `${r.format}\u0000served`,
      title: 'Served traffic (a Prometheus requests counter)',
      fixed: true,
      rate: null,
    };
  if (rate !== null || FIXED_RATE_FORMATS.test(r.format))
    return {
      key: `${r.format}\u0000rate\u0000${rate ?? ''}`,
      title: `Fixed rate${rate !== null ? ` ${rate.toLocaleString('en-US')} req/s` : ''} (${tool})`,
      fixed: true,
      rate,
    };
  const c = typeof m.connections === 'number' && m.connections > 0 ? m.connections : null;
  return {
    key: `${r.format}\u0000closed\u0000${c ?? ''}`,
    title: `Closed loop${c !== null ? `, ${c} connection${c === 1 ? '' : 's'}` : ''} (${tool})`,
    fixed: false,
    rate: null,
  };
}

/** One x of a band: the median of the runs' values there, their range, and how many runs had one. */
export interface BandPoint {
  x: number;
  median: number;
  lo: number;
  hi: number;
  n: number;
}

function median(sorted: number[]): number {
  const m = sorted.length >> 1;
  return sorted.length % 2 ? (sorted[m] as number) : ((sorted[m - 1] as number) + (sorted[m] as number)) / 2;
}

/**
 * Runs of one stage as a band: at each x any run has a value, the median of those values and their
 * range. Runs line up by x (second since their start; a percentile's position), as their tool reports it.
 */
export function band(runs: readonly (readonly [number, number | null])[][]): BandPoint[] {
  const at = new Map<number, number[]>();
  for (const run of runs)
    for (const [x, v] of run) {
      if (v === null || !Number.isFinite(v)) continue;
      const list = at.get(x);
      if (list) list.push(v);
      else at.set(x, [v]);
    }
  return [...at]
    .sort((a, b) => a[0] - b[0])
    .map(([x, vs]) => {
      const s = vs.sort((a, b) => a - b);
      return { x, median: median(s), lo: s[0] as number, hi: s[s.length - 1] as number, n: s.length };
    });
}

/**
 * The per-second throughput a fixed-rate run achieved, against the rate offered: the lowest and
 * highest full second (the last second of a run is cut short, so it is left out), and whether every
 * second stayed within `tolerance` of the offered rate.
 */
export function achievedRate(
  timelines: readonly (readonly { rps: number }[])[],
  offered: number,
  tolerance = 0.02,
): { min: number; max: number; held: boolean } | null {
  const full = timelines.flatMap((t) => t.slice(0, Math.max(1, t.length - 1)).map((b) => b.rps));
  if (full.length === 0) return null;
  const min = Math.min(...full);
  const max = Math.max(...full);
  return { min, max, held: min >= offered * (1 - tolerance) && max <= offered * (1 + tolerance) };
}
