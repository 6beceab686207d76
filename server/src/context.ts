/**
 * What the route plugins share (built once by app.ts): configuration, the store, the analysis layer,
 * metrics and the bounds of a shared server. Its own module, so routes depend on it and not on the app.
 */
import type { Config } from './config.ts';
import type { Store } from './store/index.ts';
import type { Metrics } from './services/metrics.ts';
import type { AnalysisService } from './services/analysis.ts';
import type { AnalysisPool } from './services/analysis-pool.ts';
import type { ResultMemo } from './services/result-memo.ts';
import type { Spool } from './services/spool.ts';
import type { StoredView, ViewCache } from './services/view-cache.ts';
import type { FairShare } from './services/fair-share.ts';
import type { FilterChecker } from './services/filter-check.ts';
import type { Quota } from './services/quota.ts';
import type { Maintenance } from './services/maintenance.ts';
import type { GoProxy } from './services/goproxy.ts';
import type { ViewRecorder } from './services/view-record.ts';

/** A view computed for one request and the requests that asked for the same answer meanwhile. */
export interface ComputedView {
  stored: StoredView;
  /** The answer uncompressed (for a client that takes no stored encoding). */
  body: Buffer;
  tag: string;
  /** What computing it cost beyond its admission cost (charged to the client that started it). */
  extraCost: number;
}

/** What route plugins share: configuration, the store, the analysis layer and metrics. */
export interface AppContext {
  config: Config;
  store: Store;
  metrics: Metrics;
  analysis: AnalysisService;
  /** Where analysis runs: bounded worker processes, so a large profile never stalls or ends the server. */
  pool: AnalysisPool;
  /** Recently served results by exact (revision-holding) key. */
  memo: ResultMemo;
  /** Local disk where uploads land before they are parsed and stored. */
  spool: Spool;
  /** The Go module proxy client of the source view (SOURCE_GOPROXY); null when it is off. */
  goproxy: GoProxy | null;
  /** Computed views as sent: compressed once when stored, failures remembered. */
  views: ViewCache;
  /** Views being computed now, by comparison, revision and canonical key (later requests wait for them). */
  flights: Map<string, Promise<ComputedView>>;
  /** Admission of uncached work per client and per comparison. */
  fairShare: FairShare;
  /** Filter expressions checked off the event loop. */
  filters: FilterChecker;
  /** Storage bounds of uploads (MAX_STORAGE_BYTES, MAX_COMPARISON_BYTES). */
  quota: Quota;
  /** Retention and sweeps of the store, hourly. */
  maintenance: Maintenance;
  /** Reads served from a cache, recorded for retention (throttled). */
  viewRecorder: ViewRecorder;
}
