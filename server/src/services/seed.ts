import { existsSync, readFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import type { AppContext } from '../app.ts';
import { ingest } from '../ingest/detect.ts';
import '../ingest/registry.ts';
import { StoreError } from '../store/index.ts';
import { artifactSummary } from './analysis.ts';
import { demoDir } from '../paths.ts';

export const DEMO_ID = 'demo';

interface Manifest {
  title?: string;
  description?: string;
  stages: { name: string; note?: string; keyAction?: string; files: { path: string; kind?: string }[] }[];
}

/**
 * Seeds the read-only demo comparison at /c/demo from fixtures/demo (the captured optimization
 * story) when the store does not have it yet. Returns null when there is nothing to do. A seed
 * that fails half-way is removed, so the next start tries again from scratch.
 */
export async function seedDemo(ctx: AppContext, dir = demoDir): Promise<{ stages: number; files: number } | null> {
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
  try {
    for (const st of m.stages) {
      const stage = await ctx.store.createStage(DEMO_ID, { name: st.name, note: st.keyAction ?? st.note ?? '' });
      for (const f of st.files) {
        const path = dir + f.path;
        if (!existsSync(path)) continue;
        const ref = await ctx.store.putBlob(createReadStream(path), ctx.config.maxUploadBytes);
        const parsed = await ingest({ name: basename(path), path });
        await ctx.store.addArtifact({
          comparisonId: DEMO_ID,
          stageId: stage.id,
          kind: parsed.kind,
          format: parsed.format,
          filename: basename(path),
          summary: artifactSummary(parsed),
          blob: ref,
        });
        files++;
      }
    }
  } catch (e) {
    await ctx.store.deleteComparison(DEMO_ID).catch(() => undefined);
    throw e;
  }
  return { stages: m.stages.length, files };
}
