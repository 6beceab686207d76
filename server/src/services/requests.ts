import type { PerRequest, ProfileRequests } from '../api/changes.ts';
import type { Artifact, StageWithArtifacts } from '../store/index.ts';
import { type LoadTestRun, summaryRuns } from '../model/loadtest.ts';
import type { CaptureFile, CaptureRecord } from '../model/capture.ts';
import { type StageRunSet, stageRps } from './stage-runs.ts';
import { type StoredProfileSummary, summaryOf } from './stage-profiles.ts';

/*
 * The per-request divisor, one rule for every view and figure (api/changes.ts `DivisorMethod`): each
 * profile is divided by the requests served during its own window, counted from
 * 1. a load test with absolute times whose per-second timeline covers the window (partial seconds pro
 *    rata); else
 * 2. the run it was captured with: the load test of the same `stagediff capture` run (matched by the
 *    files' sha256 in the stage's capture records), else — when the stage holds as many runs of its
 *    headline tool as profiles of the kind — the run at the same position in upload order: that run's
 *    req/s × the profile's duration; else
 * 3. the stage's median req/s × the profile's duration.
 * A profile without a duration (a snapshot) has no divisor. A merged profile is divided by the sum.
 */

/** The requests a timeline with absolute times served inside [startMs, startMs + durMs), or null. */
export function requestsInWindow(run: LoadTestRun, startMs: number, durMs: number): number | null {
  const started = run.summary.meta.startedAt;
  const t0 = typeof started === 'number' ? started : typeof started === 'string' ? Date.parse(started) : Number.NaN;
  if (!Number.isFinite(t0) || !run.timeline || run.timeline.length === 0) return null;
  const t1 = t0 + (run.timeline[run.timeline.length - 1]!.t + 1) * 1000;
  // The run must span the whole window (one bucket of slack each side), not merely touch it.
  if (startMs < t0 - 1000 || startMs + durMs > t1 + 1000) return null;
  let n = 0;
  for (const b of run.timeline) {
    const bs = t0 + b.t * 1000;
    const overlap = Math.max(0, Math.min(bs + 1000, startMs + durMs) - Math.max(bs, startMs));
    n += (b.requests * overlap) / 1000;
  }
  return n > 0 ? n : null;
}

/** The entry of a file in the stage's capture records (what `stagediff capture` wrote about it), by sha256. */
export function captureFileOf(st: StageWithArtifacts, a: Artifact): CaptureFile | null {
  for (const rec of st.captures as CaptureRecord[])
    for (const run of rec?.runs ?? []) {
      const f = (run?.files ?? []).find((x) => x.sha256 === a.sha256 && x.role !== 'loadtest');
      if (f) return f;
    }
  return null;
}

/** The load-test artifact captured in the same `stagediff capture` run as a profile, a trace or a metrics series, by sha256. */
export function capturedWith(st: StageWithArtifacts, profile: Artifact): Artifact | null {
  for (const rec of st.captures as CaptureRecord[]) {
    for (const run of rec?.runs ?? []) {
      const files = run?.files ?? [];
      if (
        !files.some(
          (f) => (f.role === 'profile' || f.role === 'trace' || f.role === 'metrics') && f.sha256 === profile.sha256,
        )
      )
        continue;
      for (const f of files) {
        if (f.role !== 'loadtest') continue;
        const a = st.artifacts.find((x) => x.kind === 'loadtest' && x.sha256 === f.sha256);
        if (a) return a;
      }
    }
  }
  return null;
}

/**
 * Each profile's requests by the rule above. `loadTests` are the stage's parsed load tests (only those
 * with absolute times and a timeline matter for rule 1); `runSet` its row runs.
 */
export function profileRequests(
  st: StageWithArtifacts,
  profiles: Artifact[],
  loadTests: { artifact: Artifact; run: LoadTestRun }[],
  runSet: StageRunSet,
): ProfileRequests[] {
  const paired = runSet.used.length === profiles.length ? runSet.used : null;
  const rps = stageRps(runSet);
  return profiles.map((a, i) => {
    const s: StoredProfileSummary = summaryOf(a);
    const durMs = (s.durationNanos ?? 0) / 1e6;
    const none: ProfileRequests = { artifactId: a.id, requests: null, method: null, description: null };
    if (!(durMs > 0)) return none;
    const startMs = (s.timeNanos ?? 0) / 1e6;
    if (startMs > 0)
      for (const lt of loadTests) {
        const n = requestsInWindow(lt.run, startMs, durMs);
        if (n !== null)
          return {
            artifactId: a.id,
            requests: n,
            method: 'timeline',
            description: `timeline of ${lt.run.format} within the profile's window`,
          };
      }
    const captured = capturedWith(st, a);
    const own = captured ? (summaryRuns(captured.summary)[0]?.summary ?? null) : (paired?.[i]?.summary ?? null);
    const ownRps = own?.rps ?? null;
    if (ownRps !== null && ownRps > 0)
      return {
        artifactId: a.id,
        requests: (ownRps * durMs) / 1000,
        method: 'paired-run',
        description: "its run's rps × the profile's duration",
      };
    if (rps !== null && rps > 0)
      return {
        artifactId: a.id,
        requests: (rps * durMs) / 1000,
        method: 'stage-rps',
        description: `stage rps (${rps.toFixed(1)}/s) × profile duration (${(durMs / 1000).toFixed(2)} s)`,
      };
    return none;
  });
}

/** A stage's divisor for a set of profiles: each profile's, their sum, and whether all were measured. */
export function perRequest(each: ProfileRequests[]): PerRequest {
  const complete = each.length > 0 && each.every((e) => e.requests !== null);
  return {
    requests: complete ? each.reduce((a, e) => a + e.requests!, 0) : null,
    measured: complete && each.every((e) => e.method === 'timeline' || e.method === 'paired-run'),
    profiles: each,
  };
}

/** One line for a divisor: the method when all profiles share it, else how many used which. */
export function describeDivisor(d: PerRequest): string {
  const texts = [...new Set(d.profiles.map((p) => p.description ?? 'none'))];
  if (d.profiles.length === 1) return texts[0]!;
  return `${d.profiles.length} profiles, each: ${texts.join('; ')}`;
}
