/**
 * Which files of a `stagediff capture` folder go to a server, one rule for every reader: `capture
 * --server`, the demo's seed and a capture folder taken in the browser. Plain data with no run-time
 * imports, so the web bundle imports it as it is.
 */
import type { CaptureFile, CaptureRecord } from '../model/capture.ts';

/** The file in a capture folder holding the module sources its profiles name (`capture --source`). */
export const SOURCES_ARCHIVE = 'sources.tar.gz';

/** Whether a capture's file of this role goes to the server: all but a tool's raw output (vegeta's .bin). */
export function isUploaded(role: CaptureFile['role']): boolean {
  return role !== 'raw';
}

/**
 * The files of a capture that go to a server, in run order: each run's load-test and profile files,
 * with `path` relative to the capture's folder and `name` the artifact's filename. Several runs keep
 * their files in `run-K/`; their names become `run-K-wrk.txt`, `run-K-cpu.pb.gz` …, so the runs of a
 * stage stay apart wherever the capture is uploaded from (capture --server, report --out, the demo).
 */
export function uploadedFiles(record: Pick<CaptureRecord, 'runs'>): { path: string; name: string }[] {
  return record.runs.flatMap((run) =>
    run.files.filter((f) => isUploaded(f.role)).map((f) => ({ path: f.path, name: f.path.replaceAll('/', '-') })),
  );
}
