import type { DiffResponse, DiffRow, StageRow } from './api-types.ts';
import { formatPauseMs, type GcStageSummary } from './gc-summary.ts';
import { formatN, formatP, type StageBenchVerdict, type Verdict } from './significance.ts';
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
    // With several profiles per stage, a change inside the noise is not a change.
    if (row.noise && !row.noise.cum.significant) continue;
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
    const v = row.significance?.vsPrevious ?? null;
    parts.push(...changeClause('QPS', prev.rps, v?.rps, 'ratio'));
    const lat = (['p95', 'p99', 'p50'] as const).find((k) => prev[k] !== null);
    if (lat) parts.push(...changeClause(lat.toUpperCase(), prev[lat], v?.[lat], 'percent'));
  } else {
    if (row.rps !== null) parts.push(`QPS ${formatRps(row.rps)}`);
    const lat = row.latencyMs.p95 !== null ? ['P95', row.latencyMs.p95] : ['P99', row.latencyMs.p99];
    if (lat[1] !== null) parts.push(`${lat[0]} ${formatMs(lat[1] as number)}`);
    if (row.summary === 'median') parts.push(`medians of ${row.loadTests} runs`);
  }
  if (row.errors) parts.push(`${formatInt(row.errors)} errors`);
  parts.push(...extra);
  if (parts.length === 0) return prev ? 'No figures to compare with the previous stage.' : 'Baseline.';
  return parts.join('; ');
}

/**
 * One figure's clause. Only a significant change is worded as a change ("QPS ×2.38 (p=0.008)"); a change
 * inside the noise says so ("QPS ~ within the noise (p=0.151, n=5+5)"), and a single run says that
 * nothing is known about its noise ("QPS ×1.03 (1 run: no noise estimate)").
 */
function changeClause(
  label: string,
  ratio: number | null,
  v: Verdict | null | undefined,
  kind: 'ratio' | 'percent',
): string[] {
  if (ratio === null) return [];
  const figure = kind === 'ratio' ? formatRatio(ratio) : formatChange(ratio);
  if (!v || v.status === 'missing' || v.status === 'single-run')
    return [`${label} ${figure} (1 run: no noise estimate)`];
  if (v.status === 'significant') return [`${label} ${figure} (${formatP(v.p!)})`];
  const more = v.status === 'need-more-runs' ? `; need ≥ ${v.runsNeeded} runs` : '';
  return [`${label} ~ within the noise (${formatP(v.p!)}, ${formatN(v)}${more})`];
}

/** The GC clause of a stage's summary: "GC STW p99 8.62 ms → 1.53 ms" (vs the previous stage) or "GC STW p99 8.62 ms". */
export function gcChange(prev: GcStageSummary | undefined, cur: GcStageSummary | undefined): string[] {
  if (!cur) return [];
  const now = formatPauseMs(cur.stwPauseMs.p99);
  return [prev ? `GC STW p99 ${formatPauseMs(prev.stwPauseMs.p99)} → ${now}` : `GC STW p99 ${now}`];
}

/**
 * The benchmark clauses of a stage's summary: only units where some benchmark changed significantly
 * ("go test -bench sec/op −12.34 % geomean, 2 of 3 significant").
 */
export function benchChange(verdicts: readonly StageBenchVerdict[] | undefined): string[] {
  return (verdicts ?? []).filter((v) => v.significant).map((v) => `go test -bench ${v.text}`);
}
