import type { DiffResponse, DiffRow, StageRow } from './api-types.ts';
import { formatPauseMs, type GcStageSummary } from './gc-summary.ts';
import { formatChange, formatInt, formatMs, formatRatio, formatRps, formatShare, sampleTypeNoun } from './format.ts';

/** One function's share of the profile total in both stages (fractions 0..1). */
export interface ShareChange {
  name: string;
  base: number;
  target: number;
  status: DiffRow['status'];
}

function shareOf(value: number, total: number, unit: string): number {
  if (unit === 'fraction') return value;
  return total > 0 ? value / total : 0;
}

/**
 * Pick the functions whose cumulative share changed most between two stages. Frames near 100 % on both
 * sides (main, the server loop) are skipped: they say nothing. Functions whose shares are within two
 * points of an already picked one are taken as the same call chain and skipped too.
 */
export function biggestShareChanges(diff: DiffResponse, limit = 2, minChange = 0.02): ShareChange[] {
  const candidates: (ShareChange & { score: number; flatScore: number })[] = [];
  for (const row of diff.top) {
    if (row.status === 'unchanged') continue;
    const base = shareOf(row.base.cum, diff.baseTotal, diff.unit);
    const target = shareOf(row.target.cum, diff.targetTotal, diff.unit);
    if (Math.min(base, target) > 0.9) continue;
    const score = Math.abs(target - base);
    if (score < minChange) continue;
    const flatScore = Math.abs(
      shareOf(row.target.flat, diff.targetTotal, diff.unit) - shareOf(row.base.flat, diff.baseTotal, diff.unit),
    );
    candidates.push({ name: row.name, base, target, status: row.status, score, flatScore });
  }
  candidates.sort((a, b) => b.score - a.score || b.flatScore - a.flatScore || a.name.localeCompare(b.name));
  const picked: ShareChange[] = [];
  for (const c of candidates) {
    if (picked.length >= limit) break;
    if (picked.some((p) => Math.abs(p.base - c.base) < 0.02 && Math.abs(p.target - c.target) < 0.02)) continue;
    picked.push({ name: c.name, base: c.base, target: c.target, status: c.status });
  }
  return picked;
}

function describeShare(c: ShareChange, noun: string): string {
  if (c.status === 'new' || c.base === 0) return `${c.name}: new, ${formatShare(c.target)} of ${noun}`;
  if (c.status === 'removed' || c.target === 0) return `${c.name}: ${formatShare(c.base)} of ${noun} → gone`;
  return `${c.name}: ${formatShare(c.base)} → ${formatShare(c.target)} of ${noun}`;
}

/**
 * The generated "what changed" sentence for one stage, e.g.
 * "encoding/json.Marshal: 68 % → 4 % of CPU; QPS ×10.5; P95 −78 %".
 * `diff` is the profile diff previous → this stage (any mode) or null when either side has no profile.
 * The first stage (no vsPrevious) gets a description of its own figures instead.
 * `extra` adds clauses from other artifacts (e.g. the GC pause change, see gcChange).
 */
export function whatChanged(row: StageRow, diff: DiffResponse | null, extra: readonly string[] = []): string {
  const parts: string[] = [];
  if (diff) {
    const noun = sampleTypeNoun(diff.sampleType);
    for (const c of biggestShareChanges(diff)) parts.push(describeShare(c, noun));
  }
  const prev = row.vsPrevious;
  if (prev) {
    if (prev.rps !== null) parts.push(`QPS ${formatRatio(prev.rps)}`);
    if (prev.p95 !== null) parts.push(`P95 ${formatChange(prev.p95)}`);
    else if (prev.p99 !== null) parts.push(`P99 ${formatChange(prev.p99)}`);
    else if (prev.p50 !== null) parts.push(`P50 ${formatChange(prev.p50)}`);
  } else {
    if (row.rps !== null) parts.push(`QPS ${formatRps(row.rps)}`);
    const lat = row.latencyMs.p95 !== null ? ['P95', row.latencyMs.p95] : ['P99', row.latencyMs.p99];
    if (lat[1] !== null) parts.push(`${lat[0]} ${formatMs(lat[1] as number)}`);
  }
  if (row.errors) parts.push(`${formatInt(row.errors)} errors`);
  parts.push(...extra);
  if (parts.length === 0) return prev ? 'No figures to compare with the previous stage.' : 'Baseline.';
  return parts.join('; ');
}

/** The GC clause of a stage's summary: "GC STW p99 8.62 ms → 1.53 ms" (vs the previous stage) or "GC STW p99 8.62 ms". */
export function gcChange(prev: GcStageSummary | undefined, cur: GcStageSummary | undefined): string[] {
  if (!cur) return [];
  const now = formatPauseMs(cur.stwPauseMs.p99);
  return [prev ? `GC STW p99 ${formatPauseMs(prev.stwPauseMs.p99)} → ${now}` : `GC STW p99 ${now}`];
}
