import type { FastifyInstance } from 'fastify';
import { Readable } from 'node:stream';
import type { FileResult } from '../api/resources.ts';
import type { AppContext } from '../context.ts';
import { IngestError } from '../ingest/errors.ts';
import { ProfilerError, runProfilerImport } from '../services/profilers/index.ts';
import { storeOne } from './artifacts.ts';
import { requireEditToken } from './auth.ts';
import { route } from './contract.ts';
import { ApiError } from './errors.ts';

const iso = (ms: number) => new Date(ms).toISOString();

/** "Add from a profiler": the server fetches a window from a continuous profiler into a stage. */
export default async function profilerImportRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  route(app, 'importFromProfiler', async (req, reply) => {
    const { id, stageId } = req.params;
    await requireEditToken(ctx.store, req, id);
    if (!(await ctx.store.getStage(id, stageId)))
      throw new ApiError(404, 'not-found', `comparison ${id} has no stage ${stageId}`);
    // A client that goes away stops the fetching.
    const gone = new AbortController();
    req.raw.on('close', () => {
      if (!reply.sent) gone.abort();
    });
    let outcome: Awaited<ReturnType<typeof runProfilerImport>>;
    try {
      // The fetching is one of the client's jobs in flight (ANALYSIS_CLIENT_JOBS), as a parse is, so
      // one address cannot start imports without bound; the files are then stored as uploads are.
      outcome = await ctx.fairShare.parse(req.ip, () =>
        runProfilerImport(
          ctx.config.profilers,
          req.body,
          { maxDecompressedBytes: ctx.config.maxDecompressedBytes },
          gone.signal,
        ),
      );
    } catch (e) {
      if (e instanceof ProfilerError) throw new ApiError(e.status, e.code, e.message, e.param);
      if (e instanceof IngestError)
        throw new ApiError(502, 'profiler-failed', `the profiler sent a profile stagediff cannot read: ${e.message}`);
      throw e;
    }
    const outcomes: { result: FileResult; status: number }[] = [];
    for (const f of outcome.files)
      outcomes.push(await storeOne(ctx, req.ip, id, stageId, f.filename, Readable.from([f.bytes])));
    const results = outcomes.map((o) => o.result);
    const body = {
      runs: outcome.runs.map((r) => ({
        run: r.run + 1,
        requested: { start: iso(r.requested.startMs), end: iso(r.requested.endMs) },
        covered: r.covered
          ? { start: iso(r.covered.startMs), end: iso(r.covered.endMs), seconds: r.covered.seconds }
          : null,
        profiles: r.profiles.map((p) => ({
          kind: p.kind,
          mode: p.mode,
          query: p.query,
          scrapes: p.scrapes,
          from: iso(p.fromMs),
          to: iso(p.toMs),
          total: p.total,
          seriesTotal: p.seriesTotal,
          filename: p.filename,
        })),
        requests: r.requests
          ? {
              requests: r.requests.requests,
              from: iso(r.requests.fromMs),
              to: iso(r.requests.toMs),
              query: r.requests.evaluated,
              filename: r.requests.filename,
            }
          : null,
      })),
      skippedTypes: outcome.skippedTypes,
      results,
    };
    if (results.length > 0 && !results.some((r) => r.ok)) {
      const first = outcomes.find((o) => !o.result.ok)!;
      return reply
        .status(first.status)
        .send({ error: (first.result as Extract<FileResult, { ok: false }>).error, ...body });
    }
    return reply.send(body);
  });
}
