import { formatInt, formatMs, formatNanos, formatRps, formatValue } from '../../../server/src/api/format.ts';
import { kindedArtifact } from '../../../server/src/api/summaries.ts';
import type {
  Artifact,
  BenchmarkArtifactSummary,
  GcTrace,
  MetricsArtifactSummary,
  TraceArtifactSummary,
} from './api.ts';
import { KIND_LABELS } from './profile-kinds.ts';

type GcTraceSummary = GcTrace['summary'];

/** Key numbers of an uploaded artifact in one line, e.g. "CPU profile · 5 s · cpu 7.01 s". */
export function describeArtifact(a: Pick<Artifact, 'kind' | 'format' | 'summary'>): string {
  if (!a.summary || typeof a.summary !== 'object') return a.kind;
  // Summaries recorded by older versions may lack a field added since: every field is read as optional.
  const k = kindedArtifact(a);
  if (k.kind === 'profile') {
    const p = k.summary;
    const st = p.sampleTypes?.find((t) => t.type === p.defaultSampleType) ?? p.sampleTypes?.[0];
    const parts = [`${KIND_LABELS[p.kind] ?? p.kind ?? 'unknown kind of'} profile`];
    if (p.durationNanos) parts.push(formatNanos(p.durationNanos));
    if (st && p.totals) parts.push(`${st.type} ${formatValue(p.totals[st.type] ?? null, st.unit)}`);
    return parts.join(' · ');
  }
  if (k.kind === 'loadtest') {
    const l = k.summary;
    const lat = l.latencyMs ?? { p50: null, p95: null, p99: null };
    const parts = [`${formatRps(l.rps)}`, `${formatInt(l.requests)} requests`];
    if (lat.p50 !== null) parts.push(`P50 ${formatMs(lat.p50)}`);
    if (lat.p95 !== null) parts.push(`P95 ${formatMs(lat.p95)}`);
    if (lat.p99 !== null) parts.push(`P99 ${formatMs(lat.p99)}`);
    if (l.errors) parts.push(`${formatInt(l.errors)} errors`);
    return parts.join(' · ');
  }
  if (k.kind === 'benchmark') {
    const b: Partial<BenchmarkArtifactSummary> = k.summary;
    const names = b.names?.length ?? 0;
    return `go test -bench · ${names} benchmark${names === 1 ? '' : 's'} · ${b.benchmarks ?? 0} series${b.config?.pkg ? ` · ${b.config.pkg}` : ''}`;
  }
  if (k.kind === 'gctrace') {
    const g: Partial<GcTraceSummary> = k.summary;
    const parts = [`gctrace · ${formatInt(g.cycles ?? 0)} GC cycles`];
    if (g.forcedCycles) parts.push(`${formatInt(g.forcedCycles)} forced`);
    if (g.stwPauseMs) parts.push(`STW p99 ${formatMs(g.stwPauseMs.p99)}`);
    return parts.join(' · ');
  }
  if (k.kind === 'trace') {
    const t: Partial<TraceArtifactSummary> = k.summary;
    const parts = [`execution trace (go ${t.goVersion ?? '?'})`];
    if (t.spanNanos) parts.push(formatNanos(t.spanNanos));
    if (t.schedWait) parts.push(`sched wait p99 ${formatNanos(t.schedWait.p99Nanos)}`);
    if (t.gc) parts.push(`${formatInt(t.gc.cycles)} GC cycles`);
    if (t.incomplete) parts.push('incomplete');
    return parts.join(' · ');
  }
  if (k.kind === 'schedtrace') return 'GODEBUG=schedtrace log';
  if (k.kind === 'metrics') {
    const m: Partial<MetricsArtifactSummary> = k.summary;
    return `runtime metrics · ${formatInt(m.scrapes ?? 0)} scrapes · ${formatInt(m.series ?? 0)} series`;
  }
  return a.kind;
}
