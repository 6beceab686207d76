import type { ModeNote, PerRequest } from '../api/changes.ts';
import type { CaptureRecord } from '../model/capture.ts';
import type { StageWithArtifacts } from '../store/index.ts';
import { runNumberOf } from './requests.ts';

/*
 * A deletion that changes a pair's mode says so. A stage keeps its capture records when one of its files
 * is deleted, so a profile whose record names a load test the stage no longer holds lost the run it was
 * captured with; a profile named for run N (cpu-5.pb.gz) whose stage holds no load test of run N lost
 * the run its name pointed at (deleted, or never uploaded: nothing else says which). Either way its
 * requests are now an estimate, and the pair reads absolute by default (requests.ts, the diff's `auto`).
 */

/** The load-test file a profile was captured with by its stage's capture records, when the stage no longer holds it. */
function deletedCapturedRun(st: StageWithArtifacts, sha256: string): string | null {
  const held = new Set(st.artifacts.filter((a) => a.kind === 'loadtest').map((a) => a.sha256));
  for (const rec of st.captures as CaptureRecord[])
    for (const run of rec?.runs ?? []) {
      const files = run?.files ?? [];
      if (!files.some((f) => f.role !== 'loadtest' && f.sha256 === sha256)) continue;
      const loads = files.filter((f) => f.role === 'loadtest');
      if (loads.length > 0 && !loads.some((f) => held.has(f.sha256))) return loads[0]!.path;
    }
  return null;
}

/** Notes for the profiles of each side that lost their own run, with the pair's mode. */
export function modeNotes(
  sides: { side: 'base' | 'target'; stage: StageWithArtifacts; divisor: PerRequest }[],
): ModeNote[] {
  const measured = sides.every((s) => s.divisor.measured);
  const mode = measured ? 'per-request' : 'absolute';
  const consequence = measured
    ? 'its figures per request are an estimate'
    : 'its figures per request are an estimate, and the pair reads absolute (not per request) by default';
  const notes: ModeNote[] = [];
  for (const { side, stage, divisor } of sides) {
    const runNumbers = new Set(
      stage.artifacts.filter((a) => a.kind === 'loadtest').map((a) => runNumberOf(a.filename)),
    );
    for (const p of divisor.profiles) {
      if (p.method === 'paired-run' || p.method === 'timeline') continue;
      const a = stage.artifacts.find((x) => x.id === p.artifactId);
      if (!a) continue;
      const profile = { artifactId: a.id, filename: a.filename };
      const captured = deletedCapturedRun(stage, a.sha256);
      if (captured !== null) {
        notes.push({
          kind: 'run-deleted',
          side,
          stage: stage.name,
          profile,
          run: captured,
          mode,
          message: `${stage.name}: ${a.filename} was captured with ${captured}, which was deleted from the stage: ${consequence}.`,
        });
        continue;
      }
      const n = runNumberOf(a.filename);
      // Only where the stage's load tests are named by run (so the name was a pairing, not a coincidence).
      if (n !== null && !runNumbers.has(n) && [...runNumbers].some((x) => x !== null))
        notes.push({
          kind: 'run-missing',
          side,
          stage: stage.name,
          profile,
          run: `run ${n}`,
          mode,
          message: `${stage.name}: ${a.filename} is named for run ${n}, and no load test of run ${n} is in the stage (deleted, or never uploaded): ${consequence}.`,
        });
    }
  }
  return notes;
}
