import type { MetricLabels, MetricsFile, RawSeries } from '../../model/metrics.ts';

/**
 * One scrape of a metrics endpoint, read into series values: the Prometheus text exposition format
 * (version 0.0.4, what client_golang serves; `# EOF` of OpenMetrics tolerated) or expvar's JSON. And
 * the recorder that keeps a capture's scrapes as a `MetricsFile`.
 */

/** A value of one series in one scrape. */
export type ScrapedValue =
  | { type: 'counter' | 'gauge' | 'untyped'; value: number }
  | { type: 'histogram'; bounds: number[]; buckets: number[]; sum: number | null; count: number | null }
  | { type: 'summary'; quantiles: number[]; values: number[]; sum: number | null; count: number | null };

export interface ScrapedSeries {
  name: string;
  labels: MetricLabels;
  help: string;
  value: ScrapedValue;
}

export class ScrapeError extends Error {}

/** Bounds of one scrape. */
export const SCRAPE_LIMITS = { maxBytes: 16 * 1024 * 1024, maxSeries: 20_000 };

function parseValue(s: string, line: number): number {
  if (s === 'NaN') return Number.NaN;
  if (s === '+Inf' || s === 'Inf') return Number.POSITIVE_INFINITY;
  if (s === '-Inf') return Number.NEGATIVE_INFINITY;
  const n = Number(s);
  if (s === '' || !Number.isFinite(n)) throw new ScrapeError(`line ${line}: "${s}" is not a sample value`);
  return n;
}

function unescapeText(s: string, quoted: boolean): string {
  return s.replace(/\\(.)/g, (_, c: string) =>
    c === 'n' ? '\n' : c === '\\' ? '\\' : quoted && c === '"' ? '"' : `\\${c}`,
  );
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

interface Sample {
  name: string;
  labels: MetricLabels;
  value: number;
}

/** Splits one sample line: name, labels, value (a timestamp after it is ignored). */
function sampleLine(text: string, line: number): Sample {
  const nm = NAME.exec(text);
  if (!nm) throw new ScrapeError(`line ${line}: no metric name`);
  let i = nm[0].length;
  const labels: MetricLabels = {};
  if (text[i] === '{') {
    i++;
    for (;;) {
      while (text[i] === ' ' || text[i] === ',') i++;
      if (text[i] === '}') {
        i++;
        break;
      }
      const ln = /^[a-zA-Z_][a-zA-Z0-9_]*/.exec(text.slice(i));
      if (!ln) throw new ScrapeError(`line ${line}: bad label name`);
      i += ln[0].length;
      while (text[i] === ' ') i++;
      if (text[i] !== '=' || text[i + 1] !== '"')
        throw new ScrapeError(`line ${line}: label ${ln[0]} has no quoted value`);
      i += 2;
      let v = '';
      while (i < text.length && text[i] !== '"') {
        if (text[i] === '\\') {
          v += text.slice(i, i + 2);
          i += 2;
        } else v += text[i++];
      }
      if (text[i] !== '"') throw new ScrapeError(`line ${line}: unterminated label value`);
      i++;
      labels[ln[0]] = unescapeText(v, true);
    }
  }
  const rest = text.slice(i).trim().split(/\s+/);
  if (rest.length < 1 || rest.length > 2) throw new ScrapeError(`line ${line}: expected a value (and a timestamp)`);
  return { name: nm[0], labels, value: parseValue(rest[0]!, line) };
}

function key(name: string, labels: MetricLabels): string {
  return `${name}{${Object.keys(labels)
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')}}`;
}

function without(labels: MetricLabels, drop: string): MetricLabels {
  const out: MetricLabels = {};
  for (const [k, v] of Object.entries(labels)) if (k !== drop) out[k] = v;
  return out;
}

/** Reads a Prometheus text exposition (0.0.4). Throws ScrapeError naming the line it cannot read. */
export function parsePrometheusText(text: string): ScrapedSeries[] {
  if (text.length > SCRAPE_LIMITS.maxBytes)
    throw new ScrapeError(`the answer is larger than ${SCRAPE_LIMITS.maxBytes} bytes`);
  const types = new Map<string, string>();
  const helps = new Map<string, string>();
  const out = new Map<string, ScrapedSeries>();
  const lines = text.split('\n');
  const familyOf = (name: string): { family: string; part: 'bucket' | 'sum' | 'count' | 'value' } => {
    for (const suffix of ['_bucket', '_sum', '_count'] as const) {
      if (!name.endsWith(suffix)) continue;
      const fam = name.slice(0, -suffix.length);
      const t = types.get(fam);
      if (t === 'histogram' || (t === 'summary' && suffix !== '_bucket'))
        return { family: fam, part: suffix.slice(1) as 'bucket' | 'sum' | 'count' };
    }
    return { family: name, part: 'value' };
  };
  for (let n = 0; n < lines.length; n++) {
    const raw = lines[n]!.replace(/\r$/, '');
    const l = raw.trim();
    if (l === '') continue;
    if (l.startsWith('#')) {
      const m = /^#\s+(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(l);
      if (!m) continue;
      if (m[1] === 'TYPE') {
        const t = (m[3] ?? '').trim();
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped', 'unknown'].includes(t))
          throw new ScrapeError(`line ${n + 1}: unknown metric type "${t}"`);
        types.set(m[2]!, t === 'unknown' ? 'untyped' : t);
      } else helps.set(m[2]!, unescapeText(m[3] ?? '', false));
      continue;
    }
    const s = sampleLine(l, n + 1);
    const { family, part } = familyOf(s.name);
    const type = types.get(family) ?? 'untyped';
    const help = helps.get(family) ?? '';
    if (type === 'histogram' || type === 'summary') {
      const labels = without(s.labels, type === 'histogram' ? 'le' : 'quantile');
      const k = key(family, labels);
      let entry = out.get(k);
      if (!entry) {
        entry = {
          name: family,
          labels,
          help,
          value:
            type === 'histogram'
              ? { type: 'histogram', bounds: [], buckets: [], sum: null, count: null }
              : { type: 'summary', quantiles: [], values: [], sum: null, count: null },
        };
        out.set(k, entry);
      }
      const v = entry.value as Extract<ScrapedValue, { type: 'histogram' | 'summary' }>;
      if (part === 'sum') v.sum = s.value;
      else if (part === 'count') v.count = s.value;
      else if (v.type === 'histogram') {
        const le = s.labels.le;
        if (le === undefined) throw new ScrapeError(`line ${n + 1}: a histogram bucket without le`);
        const bound = parseValue(le, n + 1);
        if (bound !== Number.POSITIVE_INFINITY) {
          v.bounds.push(bound);
          v.buckets.push(s.value);
        }
      } else {
        const q = s.labels.quantile;
        if (q === undefined) throw new ScrapeError(`line ${n + 1}: a summary sample without quantile`);
        v.quantiles.push(parseValue(q, n + 1));
        v.values.push(s.value);
      }
    } else {
      const k = key(s.name, s.labels);
      out.set(k, {
        name: s.name,
        labels: s.labels,
        help,
        value: { type: type as 'counter' | 'gauge' | 'untyped', value: s.value },
      });
    }
    if (out.size > SCRAPE_LIMITS.maxSeries) throw new ScrapeError(`more than ${SCRAPE_LIMITS.maxSeries} series`);
  }
  for (const s of out.values()) {
    if (s.value.type !== 'histogram') continue;
    const order = s.value.bounds.map((b, i) => [b, s.value.type === 'histogram' ? s.value.buckets[i]! : 0] as const);
    order.sort((a, b) => a[0] - b[0]);
    s.value.bounds = order.map((x) => x[0]);
    s.value.buckets = order.map((x) => x[1]);
  }
  return [...out.values()];
}

/** memstats fields that only grow (everything else there is a gauge). */
const MEMSTATS_COUNTERS = new Set([
  'TotalAlloc',
  'Mallocs',
  'Frees',
  'Lookups',
  'NumGC',
  'NumForcedGC',
  'PauseTotalNs',
]);

/**
 * Reads expvar's JSON (`/debug/vars`): every number, at any depth, is a series named by its path
 * (`memstats.HeapAlloc`, `demo_http.GET /api/orders.requests`); arrays (memstats' PauseNs ring,
 * BySize) and non-numbers are left out. memstats' cumulative fields are counters.
 */
export function parseExpvar(text: string): ScrapedSeries[] {
  if (text.length > SCRAPE_LIMITS.maxBytes)
    throw new ScrapeError(`the answer is larger than ${SCRAPE_LIMITS.maxBytes} bytes`);
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (e) {
    throw new ScrapeError(`not JSON: ${(e as Error).message}`);
  }
  if (root === null || typeof root !== 'object' || Array.isArray(root)) throw new ScrapeError('not an expvar object');
  const out: ScrapedSeries[] = [];
  const walk = (v: unknown, path: string[], depth: number): void => {
    if (depth > 8) return;
    if (typeof v === 'number' && Number.isFinite(v)) {
      const counter = path.length === 2 && path[0] === 'memstats' && MEMSTATS_COUNTERS.has(path[1]!);
      out.push({
        name: path.join('.'),
        labels: {},
        help: '',
        value: { type: counter ? 'counter' : 'gauge', value: v },
      });
      if (out.length > SCRAPE_LIMITS.maxSeries) throw new ScrapeError(`more than ${SCRAPE_LIMITS.maxSeries} series`);
      return;
    }
    if (v !== null && typeof v === 'object' && !Array.isArray(v))
      for (const [k, x] of Object.entries(v)) walk(x, [...path, k], depth + 1);
  };
  walk(root, [], 0);
  return out;
}

/** Reads a scrape by its content: JSON is expvar, anything else Prometheus text. */
export function parseScrape(body: string): { kind: 'prometheus' | 'expvar'; series: ScrapedSeries[] } {
  return body.trimStart().startsWith('{')
    ? { kind: 'expvar', series: parseExpvar(body) }
    : { kind: 'prometheus', series: parsePrometheusText(body) };
}

/** Builds a `MetricsFile` scrape by scrape: a series missing from a scrape gets null there. */
export class MetricsRecorder {
  private readonly series = new Map<string, RawSeries>();
  private readonly scrapes: MetricsFile['scrapes'] = [];
  private kind: 'prometheus' | 'expvar' | null = null;

  constructor(
    private readonly url: string,
    private readonly intervalMs: number,
    private readonly start: number,
  ) {}

  /** Adds a scrape that started `t` ms after the start and took `ms`; `body` null with `error` for a failed one. */
  add(t: number, ms: number, body: string | null, error: string | null = null): void {
    const i = this.scrapes.length;
    let parsed: ReturnType<typeof parseScrape> | null = null;
    if (body !== null) {
      try {
        parsed = parseScrape(body);
        if (this.kind && parsed.kind !== this.kind)
          throw new ScrapeError(`answered ${parsed.kind}, before ${this.kind}`);
        this.kind = parsed.kind;
      } catch (e) {
        error = (e as Error).message;
        parsed = null;
      }
    }
    this.scrapes.push({ t: Math.round(t), ms: Math.round(ms), error: parsed ? null : (error ?? 'no answer') });
    for (const s of parsed?.series ?? []) {
      const k = key(s.name, s.labels);
      let r = this.series.get(k);
      if (!r) {
        r = this.empty(s, i);
        this.series.set(k, r);
      }
      this.put(r, s.value, i);
    }
    for (const r of this.series.values()) this.pad(r, i + 1);
  }

  private empty(s: ScrapedSeries, n: number): RawSeries {
    const nulls = () => new Array(n).fill(null);
    const v = s.value;
    if (v.type === 'histogram')
      return {
        name: s.name,
        labels: s.labels,
        type: 'histogram',
        help: s.help,
        bounds: v.bounds,
        buckets: nulls(),
        sum: nulls(),
        count: nulls(),
      };
    if (v.type === 'summary')
      return {
        name: s.name,
        labels: s.labels,
        type: 'summary',
        help: s.help,
        quantiles: v.quantiles,
        values: nulls(),
        sum: nulls(),
        count: nulls(),
      };
    return { name: s.name, labels: s.labels, type: v.type, help: s.help, values: nulls() };
  }

  private put(r: RawSeries, v: ScrapedValue, i: number): void {
    const num = (x: number | null) => (x === null || Number.isFinite(x) ? x : null);
    if (r.type === 'histogram' && v.type === 'histogram') {
      // buckets are kept against the bounds the series started with (they do not change in practice)
      r.buckets[i] = r.bounds.map((b) => {
        const j = v.bounds.indexOf(b);
        return j >= 0 ? v.buckets[j]! : Number.NaN;
      });
      if (r.buckets[i]!.some((x) => Number.isNaN(x))) r.buckets[i] = null;
      r.sum[i] = num(v.sum);
      r.count[i] = num(v.count);
    } else if (r.type === 'summary' && v.type === 'summary') {
      r.values[i] = r.quantiles.map((q) => {
        const j = v.quantiles.indexOf(q);
        return j >= 0 && Number.isFinite(v.values[j]!) ? v.values[j]! : 0;
      });
      r.sum[i] = num(v.sum);
      r.count[i] = num(v.count);
    } else if ((r.type === 'counter' || r.type === 'gauge' || r.type === 'untyped') && 'value' in v) {
      r.values[i] = num(v.value);
    }
  }

  private pad(r: RawSeries, n: number): void {
    const arrays =
      r.type === 'histogram'
        ? [r.buckets, r.sum, r.count]
        : r.type === 'summary'
          ? [r.values, r.sum, r.count]
          : [r.values];
    for (const a of arrays) while (a.length < n) (a as unknown[]).push(null);
  }

  /** The file, once the window is over. */
  file(): MetricsFile {
    return {
      format: 'stagediff-metrics',
      version: 1,
      source: { url: this.url, kind: this.kind ?? 'prometheus' },
      intervalMs: this.intervalMs,
      start: new Date(this.start).toISOString(),
      scrapes: this.scrapes,
      series: [...this.series.values()],
    };
  }
}
