/**
 * A folder written by `stagediff capture --out` (or several of them), taken in the browser as the CLI's
 * `--server` would upload it: the files its capture.json records list as load tests, profiles, execution
 * traces and runtime metrics, named by their path in the folder ("run-3/cpu.pb.gz" → "run-3-cpu.pb.gz"),
 * each labelled with its run ("run 3 of 6"); the records themselves kept as the stage's capture details;
 * and the sources capture kept beside a record (sources.tar.gz) as the stage's sources. The pure part:
 * which file is what.
 */
import { SOURCES_ARCHIVE, isUploaded } from '../../../server/src/api/capture-files.ts';
import type { CaptureRecord } from './api.ts';

export const CAPTURE_FILE = 'capture.json';

/** A file as picked: its path inside what was picked ("baseline/run-1/cpu.pb.gz", or just "cpu.pb.gz"), and its size. */
export interface PickedPath {
  path: string;
  size?: number;
}

/** A capture record read from the capture.json at `dir` ("" at the top; else ending in "/"). */
export interface FoundRecord {
  dir: string;
  record: CaptureRecord;
}

export interface PlannedFile<F extends PickedPath> {
  picked: F;
  /** The file's name in the stage: its path below the folder picked, "/" as "-". */
  name: string;
  /** "run 3 of 6" ("wrk run 3 of 6" when the folder holds captures of several loads); null outside any record. */
  run: string | null;
}

export interface CapturePlan<F extends PickedPath> {
  records: FoundRecord[];
  /** What to upload, in run order. */
  files: PlannedFile<F>[];
  /** Files a record lists that were not picked: "run-2/cpu.pb.gz (run 2 of 6)". */
  missing: string[];
  /**
   * The stage's sources: the sources.tar.gz beside a record (several runs' folders each hold one of the
   * same tree, each naming what its own profiles sampled: the largest names the most), or null.
   */
  sources: F | null;
  /** Picked files the plan does not upload (raw outputs, the records themselves, other runs' sources). */
  left: string[];
}

/** The folder part of a path: "a/b/c.txt" → "a/b/", "c.txt" → "". */
function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i + 1);
}

/** The first folder every path shares ("baseline/"), or "": the folder that was picked or dropped. */
export function pickedRoot(paths: readonly string[]): string {
  if (paths.length === 0) return '';
  const first = paths[0]!;
  const i = first.indexOf('/');
  if (i < 0) return '';
  const root = first.slice(0, i + 1);
  return paths.every((p) => p.startsWith(root)) ? root : '';
}

/** The stage's file name for a picked path: below the picked folder, "/" as "-" (as `capture --server` names it). */
export function stageFileName(path: string, root: string): string {
  return (path.startsWith(root) ? path.slice(root.length) : path).replaceAll('/', '-');
}

/**
 * A source archive among picked or dropped files, by its name (`src.zip`, `sources.tar.gz`, `app.tgz`):
 * the stage's sources, sent as `upload --source` sends them, not a file to read as a profile or load test
 * (no profile or load-test output is named so: pprof's own compressed files end in `.pb.gz`).
 */
export function isSourceArchiveName(path: string): boolean {
  return /\.(?:tar\.gz|tgz|zip)$/i.test(path);
}

/** Is this a capture record? A parsed capture.json, checked for what the plan reads. */
export function asCaptureRecord(v: unknown): CaptureRecord | null {
  if (!v || typeof v !== 'object') return null;
  const r = v as Partial<CaptureRecord>;
  if (r.schema !== 'stagediff-capture/1' || !Array.isArray(r.runs) || !r.load || typeof r.load !== 'object')
    return null;
  for (const run of r.runs) if (!run || typeof run !== 'object' || !Array.isArray(run.files)) return null;
  return v as CaptureRecord;
}

/** What identifies a load: runs of one load are repeats, numbered together. */
function loadKey(r: CaptureRecord): string {
  return r.load.kind === 'command' ? r.load.command : r.load.equivalentCommand;
}

function loadName(r: CaptureRecord): string {
  return r.load.kind === 'command' ? (r.load.tool ?? 'load') : 'built-in load';
}

/**
 * The plan for a picked folder holding capture records: each record's files a server takes (all but raw
 * outputs), by run, and the sources beside them. Runs of the same load (the same command) are numbered together in the order they were captured —
 * one record of six runs, or six records of one run each ("run-1/" … "run-6/", as a script capturing
 * stage by stage writes them) read alike.
 */
export function planCapture<F extends PickedPath>(
  picked: readonly F[],
  records: readonly FoundRecord[],
): CapturePlan<F> {
  const root = pickedRoot(picked.map((p) => p.path));
  const byPath = new Map(picked.map((p) => [p.path, p]));
  const series = new Map<string, { record: CaptureRecord; dir: string; run: CaptureRecord['runs'][number] }[]>();
  const ordered = [...records].sort(
    (a, b) =>
      (a.record.startedAt < b.record.startedAt ? -1 : a.record.startedAt > b.record.startedAt ? 1 : 0) ||
      (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0),
  );
  for (const { dir, record } of ordered) {
    const key = loadKey(record);
    const list = series.get(key) ?? [];
    for (const run of record.runs) list.push({ record, dir, run });
    series.set(key, list);
  }
  const named = series.size > 1;
  const files: PlannedFile<F>[] = [];
  const missing: string[] = [];
  const used = new Set<string>();
  for (const runs of series.values()) {
    runs.forEach(({ record, dir, run }, i) => {
      const label = `${named ? `${loadName(record)} ` : ''}run ${i + 1} of ${runs.length}`;
      for (const f of run.files) {
        if (!isUploaded(f.role)) continue;
        const path = dir + f.path;
        const p = byPath.get(path);
        if (!p) {
          missing.push(`${stageFileName(path, root)} (${label})`);
          continue;
        }
        if (used.has(path)) continue;
        used.add(path);
        files.push({ picked: p, name: stageFileName(path, root), run: label });
      }
    });
  }
  let sources: F | null = null;
  for (const { dir } of ordered) {
    const p = byPath.get(dir + SOURCES_ARCHIVE);
    if (p && (sources === null || (p.size ?? 0) > (sources.size ?? 0))) sources = p;
  }
  if (sources) used.add(sources.path);
  const left = picked.filter((p) => !used.has(p.path)).map((p) => stageFileName(p.path, root));
  return { records: ordered, files, missing, sources, left };
}

/** The capture.json files among picked paths, and the folder each describes. */
export function captureFiles<F extends PickedPath>(picked: readonly F[]): { picked: F; dir: string }[] {
  return picked
    .filter((p) => p.path === CAPTURE_FILE || p.path.endsWith(`/${CAPTURE_FILE}`))
    .map((p) => ({ picked: p, dir: dirOf(p.path) }));
}
