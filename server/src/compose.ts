import { join } from 'node:path';
import { type Config, storeConfig } from './config.ts';
import type { AppContext } from './context.ts';
import { type Store, openStore } from './store/index.ts';
import { Metrics } from './services/metrics.ts';
import { ModelCache } from './services/models.ts';
import { AnalysisService } from './services/analysis.ts';
import { AnalysisPool } from './services/analysis-pool.ts';
import { ResultMemo } from './services/result-memo.ts';
import { ViewRecorder } from './services/view-record.ts';
import { Spool } from './services/spool.ts';
import { GoProxy } from './services/goproxy.ts';
import { ViewCache } from './services/view-cache.ts';
import { FairShare } from './services/fair-share.ts';
import { FilterChecker } from './services/filter-check.ts';
import { Quota } from './services/quota.ts';
import { Maintenance } from './services/maintenance.ts';

/**
 * The composition root: opens the store and wires every service of one process into the context the
 * routes are handed (app.ts puts HTTP around it). `store` is one already opened (tests share one
 * between two apps to act as two replicas); without it the settings' store is opened here.
 */
export async function buildContext(config: Config, given?: Store): Promise<AppContext> {
  const store = given ?? (await openStore(storeConfig(config)));
  const metrics = new Metrics();
  const models = new ModelCache(store, metrics, config.maxDecompressedBytes, {
    maxBytes: (config.analysisMaxHeapMb * 1024 * 1024) / 4,
  });
  const analysis = new AnalysisService(store, models);
  const spool = new Spool(join(config.dataDir, 'spool'));
  // What a crashed process left half-written (never a file another live process is writing).
  spool.sweepAbandoned();
  // The module proxy (SOURCE_GOPROXY): one client for the process; workers ask it over their channel.
  const goproxy = config.sourceGoproxy ? new GoProxy({ config, store, spool, metrics }) : null;
  const sourcing = { goVersion: config.sourceGoVersion, platform: config.sourceGoPlatform };
  if (goproxy) analysis.modules = { files: goproxy, ...sourcing };
  analysis.sourceView = config.sourceView;
  const pool = new AnalysisPool(
    {
      ...storeConfig(config),
      maxDecompressedBytes: config.maxDecompressedBytes,
      sourceView: config.sourceView,
      ...(goproxy ? { goproxy: sourcing } : {}),
    },
    // A store handed in by a caller (tests acting as replicas) may not be reachable from a worker's own connection.
    given && !config.databaseUrl && store.dialect === 'postgres' ? 0 : config.analysisWorkers,
    analysis,
    {
      timeoutMs: config.analysisTimeoutMs,
      maxHeapMb: config.analysisMaxHeapMb,
      queueMax: config.analysisQueueMax,
      niceness: config.analysisNiceness,
      moduleWaitMs: config.sourceGoproxyWaitMs,
    },
    metrics,
    goproxy,
  );
  const memo = new ResultMemo(config.resultMemoMaxBytes);
  const maintenance = new Maintenance(store, metrics, { retentionDays: config.retentionDays });
  const ctx: AppContext = {
    config,
    store,
    metrics,
    analysis,
    pool,
    memo,
    spool,
    goproxy,
    views: new ViewCache(
      store,
      memo,
      metrics,
      `timeout=${config.analysisTimeoutMs},heap=${config.analysisMaxHeapMb},workers=${config.analysisWorkers > 0}`,
    ),
    flights: new Map(),
    fairShare: new FairShare(
      {
        clientJobs: config.analysisClientJobs,
        clientJobsPerMinute: config.analysisClientJobsPerMinute,
        comparisonJobs: config.analysisComparisonJobs,
      },
      metrics,
    ),
    filters: new FilterChecker(config.analysisWorkers === 0),
    quota: new Quota(store, config),
    maintenance,
    viewRecorder: new ViewRecorder(store),
  };

  return ctx;
}
