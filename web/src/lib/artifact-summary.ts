import { formatInt, formatMs, formatNanos, formatRps, formatValue } from '../../../server/src/api/format.ts';
import type { Artifact, BenchmarkArtifactSummary, GcTrace, ProfileSummary, Reply } from './api.ts';
import { KIND_LABELS } from './profile-kinds.ts';

type LoadTestSummary = Reply<'timeline'>['stages'][number]['runs'][number]['summary'];
type GcTraceSummary = GcTrace['summary'];

/** Key numbers of an uploaded artifact in one line, e.g. "CPU profile · 5 s · cpu 7.01 s". */
export function describeArtifact(a: Pick<Artifact, 'kind' | 'format' | 'summary'>): string {
  const s = a.summary as Record<string, unknown> | null;
  if (!s || typeof s !== 'object') return a.kind;
  if (a.kind === 'profile') {
    const p = s as unknown as ProfileSummary;
    const st = p.sampleTypes?.find((t) => t.type === p.defaultSampleType) ?? p.sampleTypes?.[0];
    const parts = [`${KIND_LABELS[p.kind] ?? p.kind ?? 'unknown kind of'} profile`];
    if (p.durationNanos) parts.push(formatNanos(p.durationNanos));
    if (st && p.totals) parts.push(`${st.type} ${formatValue(p.totals[st.type] ?? null, st.unit)}`);
    return parts.join(' · ');
  }
  if (a.kind === 'loadtest') {
    const l = s as unknown as LoadTestSummary;
    const lat = l.latencyMs ?? { p50: null, p95: null, p99: null };
    const parts = [`${formatRps(l.rps)}`, `${formatInt(l.requests)} requests`];
    if (lat.p50 !== null) parts.push(`P50 ${formatMs(lat.p50)}`);
    if (lat.p95 !== null) parts.push(`P95 ${formatMs(lat.p95)}`);
    if (lat.p99 !== null) parts.push(`P99 ${formatMs(lat.p99)}`);
    if (l.errors) parts.push(`${formatInt(l.errors)} errors`);
    return parts.join(' · ');
  }
  if (a.kind === 'benchmark') {
    const b = s as unknown as Partial<BenchmarkArtifactSummary>;
    const names = b.names?.length ?? 0;
    return `go test -bench · ${names} benchmark${names === 1 ? '' : 's'} · ${b.benchmarks ?? 0} series${b.config?.pkg ? ` · ${b.config.pkg}` : ''}`;
  }
  if (a.kind === 'gctrace') {
    const g = s as unknown as Partial<GcTraceSummary>;
    const parts = [`gctrace · ${formatInt(g.cycles ?? 0)} GC cycles`];
    if (g.forcedCycles) parts.push(`${formatInt(g.forcedCycles)} forced`);
    if (g.stwPauseMs) parts.push(`STW p99 ${formatMs(g.stwPauseMs.p99)}`);
    return parts.join(' · ');
  }
  return a.kind;
}
