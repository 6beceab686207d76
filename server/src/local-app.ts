import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from './app.ts';
import { loadConfig } from './config.ts';
import { IngestError, describeIngestError } from './ingest/errors.ts';
import { addLocalFile } from './services/add-file.ts';

/**
 * A throwaway in-process server over files on this machine (temporary SQLite, analysis on the calling
 * thread): `report`, `check` and `mcp` read capture folders through its API, so local figures are the
 * server's figures. Its files are added as the demo seed adds its own (`addLocalFile`).
 */

/** One stage to load: its name, note and files (`name` is the artifact's file name). */
export interface LocalStage {
  name: string;
  note: string;
  files: { path: string; name: string }[];
}

/** The app, the comparison it holds, and how to drop both. */
export interface LocalApp {
  app: Awaited<ReturnType<typeof buildApp>>;
  comparisonId: string;
  close(): Promise<void>;
}

export async function openLocalComparison(stages: readonly LocalStage[], title: string): Promise<LocalApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-report-'));
  const app = await buildApp(
    loadConfig({
      DATA_DIR: dataDir,
      STAGEDIFF_SEED_DEMO: '0',
      WEB_DIST: join(dataDir, 'no-web'),
      ANALYSIS_WORKERS: '0',
    }),
    { logger: false },
  );
  const close = async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const store = app.ctx.store;
    const { comparison } = await store.createComparison({ title, description: '' });
    for (const st of stages) {
      const stage = await store.createStage(comparison.id, { name: st.name, note: st.note });
      for (const file of st.files) {
        try {
          await addLocalFile(app.ctx, { comparisonId: comparison.id, stageId: stage.id }, file);
        } catch (e) {
          throw new Error(
            e instanceof IngestError ? describeIngestError(e, file.path) : `${file.path}: ${(e as Error).message}`,
          );
        }
      }
    }
    return { app, comparisonId: comparison.id, close };
  } catch (e) {
    await close();
    throw e;
  }
}
