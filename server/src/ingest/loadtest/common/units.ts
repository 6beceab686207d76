/**
 * Numbers and units as the load-test tools print them, turned into plain numbers in the model's
 * units (milliseconds, counts, bytes). Text reports print figures with a unit suffix chosen per
 * value ("2.89ms", "1.21s", "2.87k", "89.67MB", Go's "1m2.5s"). Every parser returns null when a
 * token is not a finite number of its kind, so callers decide whether that is an error (it is, for
 * a figure the report must have) or a placeholder (wrk2 prints "-nan" for a rate it could not
 * compute).
 */

/** Milliseconds per time unit, as wrk, bombardier, Go durations and ghz spell them. */
export const TIME_TO_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const NUMBER = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** A plain decimal number token ("123", "4.5", "1.2e+06"); null for "-nan", "inf", "" or words. */
export function parseNumber(token: string): number | null {
  const t = token.trim().replace(/,/g, '');
  if (!NUMBER.test(t)) return null;
  const v = Number(t);
  return Number.isFinite(v) ? v : null;
}

/** "676.00us", "2.89ms", "1.21s", "2.00m" (wrk, wrk2, bombardier) → milliseconds. */
export function parseDurationMs(token: string): number | null {
  const m = /^([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*(ns|us|µs|μs|ms|s|m|h)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]);
  const scale = TIME_TO_MS[m[2]!];
  return Number.isFinite(v) && scale !== undefined ? v * scale : null;
}

/** wrk's metric counts: "2.87k", "14.63k", "1.30M", "784.70" → plain number (k = 1000). */
export function parseMetricCount(token: string): number | null {
  const m = /^([-+]?[\d.]+(?:[eE][-+]?\d+)?)([kMGTP]?)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]);
  const scale = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15 }[m[2]!]!;
  return Number.isFinite(v) ? v * scale : null;
}

/** wrk/bombardier binary byte sizes: "89.67MB", "17.74MB", "512.00B", "1.2KB" → bytes (1 KB = 1024 B). */
export function parseBinaryBytes(token: string): number | null {
  const m = /^([\d.]+)\s*(B|KB|MB|GB|TB|PB)$/.exec(token.trim());
  if (!m) return null;
  const pow = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'].indexOf(m[2]!);
  const v = Number(m[1]);
  return Number.isFinite(v) ? v * 1024 ** pow : null;
}

/** autocannon (pretty-bytes, SI) sizes: "11.2 MB", "0 B", "980 kB" → bytes (1 kB = 1000 B). */
export function parseSiBytes(token: string): number | null {
  const m = /^([\d.,]+)\s*(B|kB|KB|MB|GB|TB|PB)$/.exec(token.trim());
  if (!m) return null;
  const unit = m[2] === 'KB' ? 'kB' : m[2]!;
  const pow = ['B', 'kB', 'MB', 'GB', 'TB', 'PB'].indexOf(unit);
  const v = Number(m[1]!.replace(/,/g, ''));
  return Number.isFinite(v) ? v * 1000 ** pow : null;
}

/** autocannon abbreviates counts of 1000 and more: "17k" → 17000, "1.2M"? not printed, but accepted. */
export function parseAbbrevCount(token: string): number | null {
  const m = /^([\d.,]+)([kKmM]?)$/.exec(token.trim());
  if (!m) return null;
  const v = Number(m[1]!.replace(/,/g, ''));
  const scale = m[2] === '' ? 1 : m[2]!.toLowerCase() === 'k' ? 1e3 : 1e6;
  return Number.isFinite(v) ? v * scale : null;
}

/** Go `time.Duration.String()` text ("1m2.5s", "679.121µs", "0s") to milliseconds, or null. */
export function parseGoDurationMs(text: string): number | null {
  const s = text.trim();
  if (s === '0' || s === '0s') return 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/gy;
  let total = 0;
  let pos = 0;
  let neg = false;
  let body = s;
  if (body.startsWith('-')) {
    neg = true;
    body = body.slice(1);
  }
  re.lastIndex = 0;
  while (pos < body.length) {
    re.lastIndex = pos;
    const m = re.exec(body);
    if (!m) return null;
    total += Number(m[1]) * TIME_TO_MS[m[2]!]!;
    pos = re.lastIndex;
  }
  if (pos === 0) return null;
  return neg ? -total : total;
}

/** A number from a JSON value: a finite number, or a string holding one. */
export function num(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** A number from a CSV cell; 'N/A' and empty cells are null. */
export function cellNum(v: string | undefined): number | null {
  if (v === undefined) return null;
  const t = v.trim();
  if (t === '' || t === 'N/A') return null;
  const n = Number(t);
  return Number.isFinite(n) ? n : null;
}
