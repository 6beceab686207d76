/**
 * A small Prometheus registry: counters and summaries (sum + count) with optional labels, rendered
 * in the text exposition format at /metrics. Per process: each replica reports its own.
 */
export class Metrics {
  private readonly counters = new Map<string, number>();
  private readonly sums = new Map<string, { sum: number; count: number }>();
  private readonly gauges = new Map<string, { help: string; read: () => number }>();
  private readonly help: Record<string, string> = {
    stagediff_http_requests_total: 'HTTP requests by method, route and status code.',
    stagediff_upload_bytes_total: 'Bytes of uploaded files stored.',
    stagediff_uploads_total: 'Uploaded files by outcome.',
    stagediff_parse_seconds: 'Time spent parsing uploaded files.',
    stagediff_model_cache_hits_total: 'Parsed-model cache hits (in process).',
    stagediff_model_cache_misses_total: 'Parsed-model cache misses (in process).',
    stagediff_result_cache_hits_total: 'Derived-result cache hits (shared store).',
    stagediff_result_cache_misses_total: 'Derived-result cache misses (shared store).',
    stagediff_analysis_timeouts_total: 'Analysis and parse jobs stopped at their deadline (ANALYSIS_TIMEOUT_MS).',
    stagediff_analysis_memory_kills_total:
      'Analysis and parse jobs stopped at the worker heap limit (ANALYSIS_MAX_HEAP_MB).',
    stagediff_analysis_worker_restarts_total: 'Analysis workers replaced after a timeout, a memory kill or a crash.',
    stagediff_analysis_rejected_total:
      'Analysis jobs refused before they ran, by reason: queue-full (503), client-jobs, client-rate, comparison-jobs (429).',
    stagediff_analysis_jobs_total: 'Analysis jobs started for views that missed the cache, by view.',
    stagediff_analysis_failures_replayed_total:
      'Requests answered with a remembered failure of the same view at the same revision (no job run).',
    stagediff_result_cache_write_failures_total:
      'Derived-result cache writes that failed (a full disk, an unavailable database): the answer was served anyway.',
    stagediff_retention_removed_total: 'Comparisons removed by retention (RETENTION_DAYS).',
    stagediff_goproxy_fetches_total:
      'Module zips fetched from SOURCE_GOPROXY by outcome: ok, refused (no such version, too large, a hostile zip), transient (a timeout, a 5xx).',
    stagediff_goproxy_files_total:
      'Module files the source view asked the server for, by where the answer came from: cache, proxy, remembered-failure.',
  };

  /** A value read when /metrics is rendered (queue lengths, cache sizes). */
  gauge(name: string, help: string, read: () => number): void {
    this.gauges.set(name, { help, read });
  }

  inc(name: string, labels: Record<string, string | number> = {}, by = 1): void {
    const k = key(name, labels);
    this.counters.set(k, (this.counters.get(k) ?? 0) + by);
  }

  observe(name: string, value: number, labels: Record<string, string | number> = {}): void {
    const k = key(name, labels);
    const s = this.sums.get(k) ?? { sum: 0, count: 0 };
    s.sum += value;
    s.count++;
    this.sums.set(k, s);
  }

  render(): string {
    const out: string[] = [];
    const seen = new Set<string>();
    const head = (name: string, type: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      if (this.help[name]) out.push(`# HELP ${name} ${this.help[name]}`);
      out.push(`# TYPE ${name} ${type}`);
    };
    for (const [k, v] of [...this.counters].sort()) {
      head(k.split('{')[0]!, 'counter');
      out.push(`${k} ${v}`);
    }
    for (const [k, v] of [...this.sums].sort()) {
      const [name, rest] = splitKey(k);
      head(name, 'summary');
      out.push(`${name}_sum${rest} ${v.sum}`, `${name}_count${rest} ${v.count}`);
    }
    for (const [name, g] of [...this.gauges].sort()) {
      out.push(`# HELP ${name} ${g.help}`, `# TYPE ${name} gauge`, `${name} ${g.read()}`);
    }
    return `${out.join('\n')}\n`;
  }
}

function key(name: string, labels: Record<string, string | number>): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`,
  );
  return parts.length ? `${name}{${parts.join(',')}}` : name;
}

function splitKey(k: string): [string, string] {
  const i = k.indexOf('{');
  return i < 0 ? [k, ''] : [k.slice(0, i), k.slice(i)];
}
