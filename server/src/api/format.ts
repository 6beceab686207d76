/**
 * The one unit formatter: the page, the SVG/PNG images, `stagediff report`, `check`, `inspect` and
 * `diff` all print figures through it, so a value reads the same everywhere. Every function takes a raw
 * figure in an explicit unit and returns display text; null/undefined/NaN become an em dash so tables
 * never show "null". Pure and dependency-free: the browser bundle imports it as the server does.
 */

export const DASH = '—';
const MINUS = '−';

function isNum(v: number | null | undefined): v is number {
  return typeof v === 'number' && Number.isFinite(v);
}

/** Up to `digits` significant digits, trailing zeros dropped (12.0 → "12", 0.0012 → "0.0012"). */
export function sig(v: number, digits = 3): string {
  if (v === 0) return '0';
  const abs = Math.abs(v);
  if (abs >= 10 ** digits) return Math.round(v).toString();
  return Number(v.toPrecision(digits)).toString();
}

function withSign(text: string, v: number): string {
  return v < 0 ? MINUS + text.replace(/^-/, '') : text;
}

/** Nanoseconds → "850 ns", "12.3 µs", "4.5 ms", "1.23 s", "2.5 min". */
export function formatNanos(ns: number | null | undefined): string {
  if (!isNum(ns)) return DASH;
  const a = Math.abs(ns);
  let out: string;
  if (a < 1e3) out = `${sig(a)} ns`;
  else if (a < 1e6) out = `${sig(a / 1e3)} µs`;
  else if (a < 1e9) out = `${sig(a / 1e6)} ms`;
  else if (a < 60e9) out = `${sig(a / 1e9)} s`;
  else out = `${sig(a / 60e9)} min`;
  return ns < 0 ? MINUS + out : out;
}

/** Milliseconds (load-test latency) → "850 µs", "3.19 ms", "1.2 s". */
export function formatMs(ms: number | null | undefined): string {
  if (!isNum(ms)) return DASH;
  return formatNanos(ms * 1e6);
}

/** Bytes → "512 B", "1.5 KiB", "3.2 MiB", "1.1 GiB" (binary multiples, named as such). */
export function formatBytes(b: number | null | undefined): string {
  if (!isNum(b)) return DASH;
  const a = Math.abs(b);
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = a;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const out = `${sig(v)} ${units[i]}`;
  return b < 0 ? MINUS + out : out;
}

/** Counts → "950", "12.3k", "4.5M", "1.2G". */
export function formatCount(n: number | null | undefined): string {
  if (!isNum(n)) return DASH;
  const a = Math.abs(n);
  let out: string;
  if (a < 1e3) out = sig(a, 3);
  else if (a < 1e6) out = `${sig(a / 1e3)}k`;
  else if (a < 1e9) out = `${sig(a / 1e6)}M`;
  else out = `${sig(a / 1e9)}G`;
  return n < 0 ? MINUS + out : out;
}

/**
 * Thousands separators, one formatter for every call: `toLocaleString('en-US')` builds a new one each
 * time, which a page of tables pays for hundreds of times (it showed in the first draw's profile).
 */
const GROUPED = new Intl.NumberFormat('en-US');

/** Integer with thousands separators: 43389 → "43,389". */
export function formatInt(n: number | null | undefined): string {
  if (!isNum(n)) return DASH;
  return withSign(GROUPED.format(Math.round(n)), n);
}

/** Requests per second → "8,590 req/s" (one decimal under 100). */
export function formatRps(rps: number | null | undefined): string {
  if (!isNum(rps)) return DASH;
  const text = rps >= 100 ? GROUPED.format(Math.round(rps)) : sig(rps, 3);
  return `${text} req/s`;
}

/** A fraction (0..1) as a percent: 0.68 → "68 %", 0.042 → "4.2 %", 0.0004 → "0.04 %". */
export function formatShare(f: number | null | undefined): string {
  if (!isNum(f)) return DASH;
  const p = f * 100;
  const a = Math.abs(p);
  let text: string;
  if (a === 0) text = '0';
  else if (a >= 10) text = Math.round(a).toString();
  else if (a >= 1) text = sig(a, 2);
  else text = sig(a, 1);
  return `${p < 0 ? MINUS : ''}${text} %`;
}

/**
 * A ratio new/old as a multiplier: 10.5 → "×10.5", 0.22 → "×0.22", 1.032 → "×1.03". Between 1 and 10
 * it keeps two decimals, so a small change never reads as "×1".
 */
export function formatRatio(r: number | null | undefined): string {
  if (!isNum(r)) return DASH;
  if (r >= 100) return `×${Math.round(r)}`;
  if (r >= 10) return `×${sig(r, 3)}`;
  if (r >= 1) return `×${trimZeros(r.toFixed(2))}`;
  return `×${sig(r, 2)}`;
}

function trimZeros(s: string): string {
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

/** A ratio new/old as a signed percent change: 0.22 → "−78 %", 1.5 → "+50 %", 1 → "±0 %". */
export function formatChange(r: number | null | undefined): string {
  if (!isNum(r)) return DASH;
  const pct = (r - 1) * 100;
  const a = Math.abs(pct);
  if (a < 0.05) return '±0 %';
  const text = a >= 10 ? Math.round(a).toString() : sig(a, 2);
  return `${pct < 0 ? MINUS : '+'}${text} %`;
}

/** A signed percent change between two values (delta % of base); new → "new", removed → "−100 %". */
export function formatDeltaPercent(base: number, target: number): string {
  if (base === 0) return target === 0 ? '±0 %' : 'new';
  return formatChange(target / base);
}

/**
 * Unit-aware formatting of any figure: profile units ("nanoseconds", "bytes", "count", "fraction"), per
 * request or per second of them ("nanoseconds/request", "bytes/s"), load-test units ("req/s", "ms") and
 * benchmark units ("sec/op", "B/op", "B/s", "allocs/op").
 */
export function formatValue(v: number | null | undefined, unit: string): string {
  if (!isNum(v)) return DASH;
  const perRequest = /\/request$/.exec(unit);
  if (perRequest) return `${formatValue(v, unit.slice(0, perRequest.index))}/req`;
  switch (unit) {
    case 'req/s':
      return formatRps(v);
    case 'sec/op':
      return `${formatNanos(v * 1e9)}/op`;
    case 'B/op':
      return `${formatBytes(v)}/op`;
    case 'B/s':
      return `${formatBytes(v)}/s`;
    case 'nanoseconds':
    case 'ns':
      return formatNanos(v);
    case 'microseconds':
    case 'us':
      return formatNanos(v * 1e3);
    case 'milliseconds':
    case 'ms':
      return formatNanos(v * 1e6);
    case 'seconds':
    case 's':
      return formatNanos(v * 1e9);
    case 'bytes':
    case 'B':
      return formatBytes(v);
    case 'fraction':
      return formatShare(v);
    case 'count':
    case '':
      return formatCount(v);
    default: {
      // A rate of a profile unit (per-second normalisation): "12 ms/s".
      const perSecond = /\/s$/.exec(unit);
      if (perSecond && unit !== 'req/s') return `${formatValue(v, unit.slice(0, perSecond.index))}/s`;
      return `${formatCount(v)} ${unit}`;
    }
  }
}

/** Signed value: "+1.2 ms" / "−340 KiB". */
export function formatSignedValue(v: number | null | undefined, unit: string): string {
  if (!isNum(v)) return DASH;
  const text = formatValue(Math.abs(v), unit);
  if (v === 0) return text;
  return (v > 0 ? '+' : MINUS) + text;
}

/** An offset on a time axis, in seconds to the hundredth: "+2.31 s", "−0.95 s", "0 s". */
export function formatOffsetSeconds(s: number | null | undefined): string {
  if (!isNum(s)) return DASH;
  const text = `${Math.abs(s).toFixed(2)} s`;
  if (text === '0.00 s') return '0 s';
  return (s > 0 ? '+' : MINUS) + text;
}

/** Byte size of a file: 1582030 → "1.51 MiB". */
export const formatFileSize = formatBytes;

/** A human noun for a sample type, used in sentences ("68 % of CPU"). */
export function sampleTypeNoun(sampleType: string): string {
  const nouns: Record<string, string> = {
    cpu: 'CPU',
    samples: 'samples',
    alloc_space: 'allocated bytes',
    alloc_objects: 'allocated objects',
    inuse_space: 'in-use memory',
    inuse_objects: 'in-use objects',
    contentions: 'contentions',
    delay: 'delay',
    goroutine: 'goroutines',
    goroutines: 'goroutines',
    wall: 'wall time',
  };
  return nouns[sampleType] ?? sampleType;
}
