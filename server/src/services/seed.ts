import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type { AppContext } from '../context.ts';
import { StoreError } from '../store/index.ts';
import type { CaptureRecord } from '../model/capture.ts';
import { SOURCES_ARCHIVE, uploadedFiles } from '../api/capture-files.ts';
import { addLocalFile } from './add-file.ts';
import { demoDir } from '../paths.ts';
import { ServiceError } from './errors.ts';
import { storeSourceArchive } from './sources.ts';

export const DEMO_ID = 'demo';

/**
 * fixtures/demo/manifest.json. A stage lists its files directly (`files`), or names the capture.json
 * records `stagediff capture` wrote (`captures`, paths relative to the demo folder): then its files
 * are those records' load-test and profile files, and the records are attached to the stage.
 */
interface Manifest {
  title?: string;
  description?: string;
  stages: {
    name: string;
    note?: string;
    keyAction?: string;
    files?: { path: string; kind?: string }[];
    captures?: string[];
  }[];
}

/**
 * The files a stage of the manifest holds and its capture records. `path` is relative to the demo
 * folder; `name`, the artifact's filename, is the path inside the stage's folder with `-` for `/`:
 * a stage captured run by run keeps each run in `run-K/`, and its files are named `run-K-wrk.txt`,
 * `run-K-cpu.pb.gz` …, as `stagediff capture --runs N --server` names them.
 */
export function demoStageContent(
  dir: string,
  st: Manifest['stages'][number],
): { files: { path: string; name: string }[]; captures: CaptureRecord[]; sources: string | null } {
  const files = (st.files ?? []).map((f) => ({ path: f.path, name: basename(f.path) }));
  const captures: CaptureRecord[] = [];
  // The stage's sources: each run's capture kept the module files its own profiles name, so the runs'
  // archives hold the same tree seen through slightly different profiles; the largest names the most.
  let sources: string | null = null;
  let sourcesBytes = 0;
  for (const rel of st.captures ?? []) {
    const record = JSON.parse(readFileSync(dir + rel, 'utf8')) as CaptureRecord;
    const base = rel.includes('/') ? rel.slice(0, rel.lastIndexOf('/') + 1) : '';
    const archive = `${base}${SOURCES_ARCHIVE}`;
    if (existsSync(dir + archive)) {
      const size = statSync(dir + archive).size;
      if (size > sourcesBytes) [sources, sourcesBytes] = [archive, size];
    }
    captures.push(record);
    for (const f of uploadedFiles(record)) {
      const path = base + f.path;
      files.push({ path, name: base ? path.split('/').slice(1).join('-') : f.name });
    }
  }
  return { files, captures, sources };
}

/**
 * Seeds the read-only demo comparison at /c/demo from fixtures/demo (the captured optimization
 * story) when the store does not have it yet. Returns null when there is nothing to do. A seed
 * that fails half-way is removed, so the next start tries again from scratch.
 */
export async function seedDemo(
  ctx: AppContext,
  dir = demoDir,
): Promise<{ stages: number; files: number; sourcesRefused: string[] } | null> {
  if (await ctx.store.getComparison(DEMO_ID)) return null;
  const manifestPath = `${dir}manifest.json`;
  if (!existsSync(manifestPath)) return null;
  const m = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  try {
    await ctx.store.createComparison({
      id: DEMO_ID,
      readOnly: true,
      title: m.title ?? 'Demo: Go service optimization',
      description:
        m.description ??
        'A small Go HTTP service taken through four optimization stages, each captured with real tools on one machine: wrk and vegeta load, and CPU, allocation, heap, mutex and block profiles under that load. See fixtures/demo/README.md.',
    });
  } catch (e) {
    // Another replica seeded it first.
    if (e instanceof StoreError && e.code === 'conflict') return null;
    throw e;
  }
  let files = 0;
  const sourcesRefused: string[] = [];
  try {
    for (const st of m.stages) {
      const stage = await ctx.store.createStage(DEMO_ID, { name: st.name, note: st.keyAction ?? st.note ?? '' });
      const content = demoStageContent(dir, st);
      for (const c of content.captures) await ctx.store.addStageCapture(DEMO_ID, stage.id, c);
      for (const file of content.files) {
        const path = dir + file.path;
        if (!existsSync(path)) continue;
        await addLocalFile(ctx, { comparisonId: DEMO_ID, stageId: stage.id }, { path, name: file.name });
        files++;
      }
      // Sources are the Lines tab's text, not the story's figures: settings that refuse them (a small
      // MAX_SOURCE_BYTES, say) leave the stage without, and the server says so.
      if (content.sources)
        try {
          await storeSourceArchive(
            ctx,
            '(demo seed)',
            DEMO_ID,
            stage.id,
            SOURCES_ARCHIVE,
            createReadStream(dir + content.sources),
          );
        } catch (e) {
          if (!(e instanceof ServiceError)) throw e;
          sourcesRefused.push(`${st.name}: ${e.message}`);
        }
    }
  } catch (e) {
    await ctx.store.deleteComparison(DEMO_ID).catch(() => undefined);
    throw e;
  }
  return { stages: m.stages.length, files, sourcesRefused };
}
