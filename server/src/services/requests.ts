import type { PerRequest, ProfileRequests } from '../api/changes.ts';
import type { Artifact, StageWithArtifacts } from '../store/index.ts';
import { type LoadTestRun, summaryRuns } from '../model/loadtest.ts';
import type { CaptureFile, CaptureRecord } from '../model/capture.ts';
import type { RunRef, StageRunSet } from './stage-runs.ts';
import { summaryOf } from './stage-profiles.ts';
import { type StoredProfileSummary, kinded } from '../model/artifact-summary.ts';

/*
 * The per-request divisor, one rule for every view and figure (api/changes.ts `DivisorMethod`): each
 * profile is divided by the requests served during its own window, counted from
 * 1. the run it was captured with: the load test of the same `stagediff capture` run (matched by the
 *    files' sha256 in the stage's capture records); else the headline run whose file name carries the
 *    profile's run number (`cpu-5.pb.gz` / `wrk-5.txt`, `run-5-cpu.pb.gz` / `run-5-wrk.txt`), when exactly
 *    one does; else, for a stage of one run and one profile, that run: its req/s × the profile's duration; else
 * 2. a load test with absolute times whose per-second timeline covers the window (partial seconds pro
 *    rata); else
 * else no per-request value, with the reason no run was its own: a stage's median req/s times the
 * profile's duration would be a guess, and one pair's figures would then be divided by another run's.
 * Never the order the files were uploaded in (a browser uploads in parallel). A profile without a
 * duration (a snapshot) has no divisor. A merged profile is divided by the sum.
 */

/**
 * Kinds whose profiles with a window are stamped with the window's end: net/http/pprof's `?seconds=N`
 * takes two snapshots and writes their difference with the second one's time, while a CPU profile (and
 * the profiles derived from a trace) carry the time their window started.
 */
const END_STAMPED: ReadonlySet<string> = new Set(['allocs', 'heap', 'mutex', 'block', 'goroutine']);

/**
 * The run number a file's name says, or null: `run-5` (`run_5`, `run5`) anywhere in the name, else a
 * word followed by `-5`/`_5` just before the extension (`cpu-5.pb.gz`, `wrk_5.txt`).
 */
export function runNumberOf(filename: string): number | null {
  const run = /(?:^|[^A-Za-z0-9])run[-_ ]?(\d{1,6})(?![0-9])/i.exec(filename);
  if (run) return Number(run[1]);
  const tail = /^[A-Za-z][A-Za-z0-9]*[-_](\d{1,6})(?:\.[A-Za-z0-9.]+)?$/.exec(filename);
  return tail ? Number(tail[1]) : null;
}

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
  // Runs a name can point at: the headline runs each alone in its file, by run number (a number two
  // files share points at neither).
  const byNumber = new Map<number, RunRef | null>();
  for (const r of runSet.used) {
    if (r.runInFile !== null) continue;
    const n = runNumberOf(r.artifact.filename);
    if (n !== null) byNumber.set(n, byNumber.has(n) ? null : r);
  }
  // One headline run and one profile: a stage of one run (one folder), whatever the names.
  const only = runSet.used.length === 1 && profiles.length === 1 ? runSet.used[0]! : null;
  return profiles.map((a) => {
    const s: StoredProfileSummary = summaryOf(a);
    const durMs = (s.durationNanos ?? 0) / 1e6;
    const base = { artifactId: a.id, filename: a.filename };
    const none: ProfileRequests = { ...base, requests: null, method: null, description: null, run: null };
    if (!(durMs > 0)) return { ...none, description: 'a snapshot (no window): no per-request value' };
    const runOf = (artifact: Artifact) => ({ artifactId: artifact.id, filename: artifact.filename });
    const paired = (summary: LoadTestRun['summary'] | null, artifact: Artifact, how: string): ProfileRequests | null =>
      summary?.rps != null && summary.rps > 0
        ? {
            ...base,
            requests: (summary.rps * durMs) / 1000,
            method: 'paired-run',
            description: `${how}: its req/s × the profile's duration`,
            run: runOf(artifact),
          }
        : null;
    const captured = capturedWith(st, a);
    const capturedRun = captured && kinded(captured);
    if (captured && capturedRun?.kind === 'loadtest') {
      const r = paired(
        summaryRuns(capturedRun.summary)[0]?.summary ?? null,
        captured,
        `captured with ${captured.filename}`,
      );
      if (r) return r;
    }
    const n = runNumberOf(a.filename);
    const named = n !== null ? byNumber.get(n) : undefined;
    if (named) {
      const r = paired(named.summary, named.artifact, `run ${n} by name: ${named.artifact.filename}`);
      if (r) return r;
    }
    const startMs = (s.timeNanos ?? 0) / 1e6 - (END_STAMPED.has(s.kind) ? durMs : 0);
    if (startMs > 0)
      for (const lt of loadTests) {
        const c = requestsInWindow(lt.run, startMs, durMs);
        if (c !== null)
          return {
            ...base,
            requests: c,
            method: 'timeline',
            description: `timeline of ${lt.run.format} within the profile's window`,
            run: runOf(lt.artifact),
          };
      }
    if (only) {
      const r = paired(only.summary, only.artifact, `the stage's only run, ${only.artifact.filename}`);
      if (r) return r;
    }
    const why =
      n === null
        ? 'no capture record, no run number in its name, no load-test timeline over its window'
        : named === null
          ? `no capture record; run ${n} is in the names of several load tests`
          : `no capture record, no load test named run ${n}, no load-test timeline over its window`;
    return { ...none, description: `no per-request value: ${why}` };
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
