import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import type { CaptureRecord } from '../model/capture.ts';
import { uploadedFiles } from '../api/capture-files.ts';
import { type ComparisonSource, injectSource } from '../client/comparison-source.ts';

/**
 * Folders written by `stagediff capture --out`, read as a comparison: their stages found from the
 * capture records, their files loaded into a throwaway in-process server (local-app.ts) that
 * `report`, `check` and `mcp` then read through the API.
 */

/** The part of a `capture.json` record (written by `stagediff capture --out`) that a report reads. */
type CaptureFolderRecord = Pick<CaptureRecord, 'stage' | 'note' | 'startedAt' | 'runs'>;

/** One stage found in capture folders: its name, note and files, first-captured time for ordering. */
interface LocalStage {
  name: string;
  note: string;
  startedAt: string;
  files: { path: string; name: string }[];
}

function readRecord(file: string): CaptureFolderRecord {
  let r: CaptureFolderRecord;
  try {
    r = JSON.parse(readFileSync(file, 'utf8')) as CaptureFolderRecord;
  } catch (e) {
    throw new Error(`${file}: not a capture record (${(e as Error).message})`);
  }
  if (typeof r?.stage !== 'string' || !Array.isArray(r.runs))
    throw new Error(`${file}: not a capture record (no "stage" and "runs")`);
  return r;
}

/** capture.json files in DIR, or in its sub-folders (two levels), in path order. */
function findRecords(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    const here = join(d, 'capture.json');
    if (existsSync(here)) out.push(here);
    if (depth === 0) return;
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1)))
      if (e.isDirectory()) walk(join(d, e.name), depth - 1);
  };
  walk(dir, 2);
  return out;
}

/**
 * Stages from `--out` folders: each folder is one capture (its capture.json) or holds several in
 * sub-folders. Records naming the same stage form one stage (e.g. a wrk capture and a fixed-rate
 * capture of it). Order: the folders' order on the command line, then first capture time within one.
 */
export function stagesFromFolders(dirs: string[]): LocalStage[] {
  const byName = new Map<string, LocalStage>();
  for (const dir of dirs) {
    const abs = resolve(dir);
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new Error(`--out ${dir}: no such folder`);
    const records = findRecords(abs).map((f) => ({ file: f, r: readRecord(f) }));
    if (records.length === 0)
      throw new Error(
        `--out ${dir}: no capture.json in it or its sub-folders (write one with stagediff capture --out)`,
      );
    records.sort((a, b) => (a.r.startedAt ?? '').localeCompare(b.r.startedAt ?? ''));
    for (const { file, r } of records) {
      let st = byName.get(r.stage);
      if (!st) {
        st = { name: r.stage, note: r.note ?? '', startedAt: r.startedAt ?? '', files: [] };
        byName.set(r.stage, st);
      }
      for (const f of uploadedFiles(r)) {
        const p = join(dirname(file), f.path);
        if (!existsSync(p)) throw new Error(`${file}: lists ${f.path}, which is not there`);
        // Named by the path inside the folder given (run-1-wrk.txt), so the runs of a stage stay apart.
        st.files.push({ path: p, name: relative(abs, p).replaceAll(sep, '-') });
      }
    }
  }
  return [...byName.values()];
}

/** Capture folders loaded into a throwaway in-process server: the app, the comparison, and how to drop both. */
export type LoadedFolders = import('../local-app.ts').LocalApp;

/** Loads capture folders into a throwaway in-process server and reads it through app.inject. */
export async function folderSource(dirs: string[], title: string): Promise<ComparisonSource> {
  const loaded = await loadFolders(dirs, title);
  return { ...injectSource(loaded.app, loaded.comparisonId, null), close: loaded.close };
}

/** Loads capture folders into a throwaway in-process server (temporary SQLite, analysis on this thread). */
export async function loadFolders(dirs: string[], title: string): Promise<LoadedFolders> {
  const stages = stagesFromFolders(dirs);
  const { openLocalComparison } = await import('../local-app.ts');
  return openLocalComparison(stages, title);
}
