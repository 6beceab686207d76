/**
 * RFC 3339 timestamps as the Go tools write them (vegeta, k6, ghz), read into whole Unix seconds
 * and nanoseconds kept apart (nanosecond epoch values exceed 2^53). A string reader and a byte
 * reader for million-row logs, which share one set of rules.
 */

let cachedPrefix = '';
let cachedPrefixSec = 0;

/**
 * Parses an RFC 3339 timestamp ("2026-11-22T01:39:41.764020722Z", any fraction length, Z or ±hh:mm)
 * found in `s` between `from` and `to` into [whole Unix seconds, nanoseconds]. Returns null when the
 * text is not such a timestamp. Nanosecond epoch values exceed 2^53, so callers keep seconds and
 * nanoseconds apart. The date-time prefix of the previous call is cached: in a log it changes once
 * per second, so most rows cost no Date arithmetic.
 */
export function parseRfc3339(s: string, from = 0, to = s.length): [number, number] | null {
  if (to - from < 20 || s.charCodeAt(from + 4) !== 45) return null;
  const sep = s.charCodeAt(from + 10);
  if (sep !== 84 && sep !== 32) return null;
  let sec: number;
  if (cachedPrefix.length === 19 && s.startsWith(cachedPrefix, from)) sec = cachedPrefixSec;
  else {
    const prefix = s.slice(from, from + 19);
    const y = +prefix.slice(0, 4),
      mo = +prefix.slice(5, 7),
      d = +prefix.slice(8, 10);
    const h = +prefix.slice(11, 13),
      mi = +prefix.slice(14, 16),
      se = +prefix.slice(17, 19);
    if (![y, mo, d, h, mi, se].every(Number.isInteger)) return null;
    sec = Date.UTC(y, mo - 1, d, h, mi, se) / 1000;
    if (!Number.isFinite(sec)) return null;
    cachedPrefix = prefix;
    cachedPrefixSec = sec;
  }
  let i = from + 19;
  let ns = 0;
  if (s.charCodeAt(i) === 46) {
    i++;
    let digits = 0;
    while (i < to) {
      const c = s.charCodeAt(i);
      if (c < 48 || c > 57) break;
      if (digits < 9) {
        ns = ns * 10 + (c - 48);
        digits++;
      }
      i++;
    }
    for (; digits < 9; digits++) ns *= 10;
  }
  if (i === to - 1 && (s.charCodeAt(i) === 90 || s.charCodeAt(i) === 122)) return [sec, ns];
  const m = /^([+-])(\d\d):?(\d\d)$/.exec(s.slice(i, to));
  if (!m) return null;
  const off = (Number(m[2]) * 3600 + Number(m[3]) * 60) * (m[1] === '+' ? 1 : -1);
  return [sec - off, ns];
}

/** The result of `parseRfc3339Bytes` (module-level, so a million-row loop allocates nothing). */
export const rfc3339 = { sec: 0, ns: 0 };

const bytePrefix = new Uint8Array(19);
let bytePrefixSet = false;
let bytePrefixSec = 0;

/**
 * `parseRfc3339` on raw bytes b[from, to): true with `rfc3339.sec`/`rfc3339.ns` set, false where
 * `parseRfc3339` would return null. Same rules and same results: an ASCII date-time prefix is
 * compared byte by byte with the previous one (it changes once a second in a log), and any
 * prefix that is new or not plain ASCII goes through `parseRfc3339` itself, so the two can never
 * disagree on what a timestamp means.
 */
export function parseRfc3339Bytes(b: Uint8Array, from: number, to: number): boolean {
  if (to - from < 20) return false; // bytes >= characters, so the text is shorter than 20 too
  let same = bytePrefixSet;
  for (let k = 0; same && k < 19; k++) if (b[from + k] !== bytePrefix[k]) same = false;
  if (!same) return slowBytes(b, from, to);
  let i = from + 19;
  let ns = 0;
  if (b[i] === 46) {
    i++;
    let digits = 0;
    while (i < to) {
      const c = b[i]!;
      if (c < 48 || c > 57) break;
      if (digits < 9) {
        ns = ns * 10 + (c - 48);
        digits++;
      }
      i++;
    }
    for (; digits < 9; digits++) ns *= 10;
  }
  if (i === to - 1 && (b[i] === 90 || b[i] === 122)) {
    rfc3339.sec = bytePrefixSec;
    rfc3339.ns = ns;
    return true;
  }
  // a numeric zone offset (rare in logs): the string parser has the rules
  return slowBytes(b, from, to);
}

function slowBytes(b: Uint8Array, from: number, to: number): boolean {
  let ascii = true;
  for (let k = from; k < to; k++) if (b[k]! > 127) ascii = false;
  const text = Buffer.from(b.buffer, b.byteOffset + from, to - from).toString(ascii ? 'latin1' : 'utf8');
  const r = parseRfc3339(text);
  if (!r) return false;
  if (ascii) {
    // parseRfc3339 has just cached this prefix and its seconds (before any zone offset)
    for (let k = 0; k < 19; k++) bytePrefix[k] = b[from + k]!;
    bytePrefixSet = true;
    bytePrefixSec = cachedPrefixSec;
  }
  rfc3339.sec = r[0];
  rfc3339.ns = r[1];
  return true;
}
