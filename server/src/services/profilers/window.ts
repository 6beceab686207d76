import { ProfilerError } from './guarded-fetch.ts';
import type { Scrape } from './parca.ts';

/**
 * How a window of a continuous profiler's scrapes becomes N runs (pure: no fetching).
 *
 * - Delta types (CPU): a scrape belongs to the window when it starts AND ends inside it; each covered
 *   scrape goes to the run whose equal sub-window holds its midpoint, so a run is whole scrapes. A
 *   run's covered window is its first scrape's start to its last one's end, its covered seconds the
 *   sum of its scrapes' spans.
 * - Cumulative types (allocs, mutex, block as Parca scrapes them): run k is a later snapshot minus an
 *   earlier one, among the snapshots inside the window (`cumulativePairs`), so the runs add up to
 *   last − first of the window; each type is scraped at its own moment, so a run's boundary is the
 *   first snapshot at or after the run's covered start (its requested start when no delta type was
 *   scraped).
 * - Snapshot types (heap, goroutine): the snapshot nearest the run's end boundary.
 */

export interface Span {
  startMs: number;
  endMs: number;
}

export interface RunPlan {
  run: number;
  requested: Span;
  /** The covered window of the delta scrapes (null when none was scraped). */
  covered: (Span & { seconds: number }) | null;
}

/** Equal sub-windows of [fromMs, toMs). */
export function subWindows(fromMs: number, toMs: number, runs: number): Span[] {
  const out: Span[] = [];
  for (let k = 0; k < runs; k++)
    out.push({
      startMs: fromMs + Math.round(((toMs - fromMs) * k) / runs),
      endMs: fromMs + Math.round(((toMs - fromMs) * (k + 1)) / runs),
    });
  return out;
}

/** The delta scrapes inside the window (start and end), each with the run it falls to. */
export function assignScrapes(scrapes: Scrape[], windows: Span[]): Scrape[][] {
  const from = windows[0]!.startMs;
  const to = windows[windows.length - 1]!.endMs;
  const byRun: Scrape[][] = windows.map(() => []);
  for (const s of scrapes) {
    if (s.startMs < from || s.startMs + s.durationMs > to) continue;
    const mid = s.startMs + s.durationMs / 2;
    const k = windows.findIndex((w) => mid >= w.startMs && mid < w.endMs);
    if (k >= 0) byRun[k]!.push(s);
  }
  return byRun;
}

/** Covered milliseconds of delta scrapes: each instant once (several targets scraped together cover it once). */
export function coveredMs(scrapes: Scrape[]): number {
  const byStart = new Map<number, number>();
  for (const s of scrapes) byStart.set(s.startMs, Math.max(byStart.get(s.startMs) ?? 0, s.durationMs));
  let sum = 0;
  for (const d of byStart.values()) sum += d;
  return sum;
}

/** The runs of a window from the lead delta type's scrapes (null: no delta type). */
export function planRuns(fromMs: number, toMs: number, runs: number, lead: Scrape[] | null): RunPlan[] {
  const windows = subWindows(fromMs, toMs, runs);
  if (!lead) return windows.map((w, run) => ({ run, requested: w, covered: null }));
  const byRun = assignScrapes(lead, windows);
  const total = byRun.reduce((a, r) => a + r.length, 0);
  const empty = byRun.findIndex((r) => r.length === 0);
  if (empty >= 0)
    throw new ProfilerError(
      422,
      'too-few-scrapes',
      `runs: the window holds ${total} whole scrape${total === 1 ? '' : 's'} (start and end inside it) and run ${empty + 1} of ${runs} (${new Date(windows[empty]!.startMs).toISOString()} to ${new Date(windows[empty]!.endMs).toISOString()}) got none: ask for fewer runs or a longer window`,
      'runs',
    );
  return byRun.map((scrapes, run) => {
    const startMs = scrapes[0]!.startMs;
    const endMs = scrapes.reduce((a, s) => Math.max(a, s.startMs + s.durationMs), 0);
    const seconds = coveredMs(scrapes) / 1000;
    return { run, requested: windows[run]!, covered: { startMs, endMs, seconds } };
  });
}

/** The boundaries runs take cumulative differences at: N + 1 instants. */
export function boundaries(plan: RunPlan[]): number[] {
  const out = plan.map((r) => (r.covered ? r.covered.startMs : r.requested.startMs));
  const last = plan[plan.length - 1]!;
  out.push(last.covered ? last.covered.endMs : last.requested.endMs);
  return out;
}

/** The snapshot time nearest `t` (ties: the earlier). */
export function nearest(times: number[], t: number): number {
  let best = times[0]!;
  for (const x of times) if (Math.abs(x - t) < Math.abs(best - t)) best = x;
  return best;
}

/**
 * For each run, the [first, last] snapshot times of a cumulative type among its snapshots inside the
 * window: the first run starts at the window's first snapshot, the last ends at its last one, and
 * each boundary between runs is the first snapshot at or after that run's start (so the runs add up
 * to last − first of the window); a 422 naming the type when a run would get no snapshot of its own.
 */
export function cumulativePairs(
  times: number[],
  fromMs: number,
  toMs: number,
  bounds: number[],
  type: string,
): [number, number][] {
  const inside = [...new Set(times.filter((t) => t >= fromMs && t <= toMs))].sort((a, b) => a - b);
  const n = bounds.length - 1;
  const picks = bounds.map((b, k) => {
    if (inside.length === 0) return Number.NaN;
    if (k === 0) return inside[0]!;
    if (k === n) return inside[inside.length - 1]!;
    return inside.find((t) => t >= b) ?? inside[inside.length - 1]!;
  });
  const pairs: [number, number][] = [];
  for (let k = 0; k < n; k++) {
    if (!(picks[k]! < picks[k + 1]!))
      throw new ProfilerError(
        422,
        'too-few-scrapes',
        `runs: ${type} is cumulative, so each run is the difference of two of its snapshots, and the window holds ${inside.length} snapshot${inside.length === 1 ? '' : 's'} for ${n} runs (run ${k + 1} would have none of its own): ask for fewer runs or a longer window`,
        'runs',
      );
    pairs.push([picks[k]!, picks[k + 1]!]);
  }
  return pairs;
}
