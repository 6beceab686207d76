import type { Label, Profile } from '../model/profile.ts';
import { type GoRegexp, GoRegexpError, compileGoRegexp } from './go-regexp.ts';

/*
 * pprof's tag (label) filters, with `go tool pprof -tagfocus/-tagignore/-tagshow/-taghide` semantics:
 *
 * - tagfocus / tagignore keep / drop whole samples by their labels. The value is `[KEY=]FILTER`. A
 *   FILTER that reads as a number range — `32kb` (equal), `:64kb` (at most), `4mb:` (at least),
 *   `12kb:64mb` (between, inclusive), units of bytes or time or none — is matched against numeric
 *   labels, each converted to the filter's unit from the unit its key carries in the profile. Any
 *   other FILTER is a comma-separated list of Go regular expressions: with a KEY, a sample matches
 *   when one of them matches one of that key's string values; without, when every one of them matches
 *   some `key:value` of the sample's string labels.
 * - tagshow / taghide are Go regular expressions on label keys: labels whose key does not match
 *   tagshow, or matches taghide, are removed from the samples (the samples stay).
 */

/** A sample-level predicate on a label set, as pprof compiles -tagfocus/-tagignore. */
export interface TagMatcher {
  readonly source: string;
  /** Numeric range filters read labels' units across the whole profile: bind them to one first. */
  bind(numLabelUnits: Map<string, string>): (labels: readonly Label[]) => boolean;
}

export class TagFilterError extends Error {}

// ---- pprof's measurement units (bytes, time, GCU), as its -tagfocus ranges and -tags read them ----

interface Unit {
  name: string;
  aliases: string[];
  factor: number;
}
interface UnitType {
  defaultUnit: Unit;
  units: Unit[];
}
const UNIT_TYPES: UnitType[] = [
  {
    units: [
      { name: 'B', aliases: ['b', 'byte'], factor: 1 },
      { name: 'kB', aliases: ['kb', 'kbyte', 'kilobyte'], factor: 2 ** 10 },
      { name: 'MB', aliases: ['mb', 'mbyte', 'megabyte'], factor: 2 ** 20 },
      { name: 'GB', aliases: ['gb', 'gbyte', 'gigabyte'], factor: 2 ** 30 },
      { name: 'TB', aliases: ['tb', 'tbyte', 'terabyte'], factor: 2 ** 40 },
      { name: 'PB', aliases: ['pb', 'pbyte', 'petabyte'], factor: 2 ** 50 },
    ],
    defaultUnit: { name: 'B', aliases: ['b', 'byte'], factor: 1 },
  },
  {
    units: [
      { name: 'ns', aliases: ['ns', 'nanosecond'], factor: 1 },
      { name: 'us', aliases: ['μs', 'us', 'microsecond'], factor: 1e3 },
      { name: 'ms', aliases: ['ms', 'millisecond'], factor: 1e6 },
      { name: 's', aliases: ['s', 'sec', 'second'], factor: 1e9 },
      { name: 'hrs', aliases: ['hour', 'hr'], factor: 3.6e12 },
    ],
    defaultUnit: { name: 's', aliases: [], factor: 1e9 },
  },
  {
    units: [
      { name: 'n*GCU', aliases: ['nanogcu'], factor: 1e-9 },
      { name: 'u*GCU', aliases: ['microgcu'], factor: 1e-6 },
      { name: 'm*GCU', aliases: ['milligcu'], factor: 1e-3 },
      { name: 'GCU', aliases: ['gcu'], factor: 1 },
      { name: 'k*GCU', aliases: ['kilogcu'], factor: 1e3 },
      { name: 'M*GCU', aliases: ['megagcu'], factor: 1e6 },
      { name: 'G*GCU', aliases: ['gigagcu'], factor: 1e9 },
      { name: 'T*GCU', aliases: ['teragcu'], factor: 1e12 },
      { name: 'P*GCU', aliases: ['petagcu'], factor: 1e15 },
    ],
    defaultUnit: { name: 'GCU', aliases: [], factor: 1 },
  },
];

function sniffUnit(t: UnitType, unit: string): Unit | null {
  let u = unit.toLowerCase();
  // Go measures the length in bytes: "μs" is three.
  if (Buffer.byteLength(u, 'utf8') > 2 && u.endsWith('s')) u = u.slice(0, -1);
  return t.units.find((x) => x.aliases.includes(u)) ?? null;
}

function autoScale(t: UnitType, v: number): [number, string] | null {
  let f = 0;
  let name = '';
  for (const u of t.units)
    if (u.factor >= f && v / u.factor >= 1) {
      f = u.factor;
      name = u.name;
    }
  return f === 0 ? null : [v / f, name];
}

/** pprof's measurement.Scale: a value in `from` expressed in `to` ("minimum"/"auto": a readable unit). */
export function scaleMeasurement(value: number, from: string, to: string): [number, string] {
  if (value < 0) {
    const [v, u] = scaleMeasurement(-value, from, to);
    return [-v, u];
  }
  for (const t of UNIT_TYPES) {
    const f = sniffUnit(t, from);
    if (!f) continue;
    const v = value * f.factor;
    if (to === 'minimum' || to === 'auto') {
      const a = autoScale(t, v);
      return a ?? [v / t.defaultUnit.factor, t.defaultUnit.name];
    }
    const tu = sniffUnit(t, to);
    if (!tu) return [v / t.defaultUnit.factor, t.defaultUnit.name];
    return [v / tu.factor, tu.name];
  }
  return ['count', 'sample', 'unit', 'minimum', 'auto'].includes(to) ? [value, ''] : [value, to];
}

/** Go's %.2f, then pprof's trim of ".00" (measurement.ScaledLabel). */
export function scaledLabel(value: number, from: string, to: string): string {
  const [v, u] = scaleMeasurement(value, from, to);
  const s = v.toFixed(2).replace(/\.00$/, '');
  if (s === '0' || s === '-0') return '0';
  return s + u;
}

/**
 * The unit of each numeric label key, as pprof decides it: the first unit any of its values carries,
 * else `bytes` for the keys `alignment` and `request`, else the key's own name.
 */
export function numLabelUnits(p: Profile): Map<string, string> {
  const used = new Uint8Array(p.labelSets.length);
  for (let s = 0; s < p.sampleLabelSet.length; s++) used[p.sampleLabelSet[s]!] = 1;
  const units = new Map<string, string>();
  const seen = new Set<string>();
  p.labelSets.forEach((set, i) => {
    if (!used[i]) return;
    for (const l of set) {
      if (l.num === undefined) continue;
      seen.add(l.key);
      if (l.numUnit && !units.has(l.key)) units.set(l.key, l.numUnit);
    }
  });
  for (const k of seen) if (!units.has(k)) units.set(k, k === 'alignment' || k === 'request' ? 'bytes' : k);
  return units;
}

/** A string label as pprof sees it (a label with neither a string nor a number is none). */
function isString(l: Label): l is Label & { str: string } {
  return l.num === undefined && l.str !== undefined && l.str !== '';
}

/** pprof's parseTagFilterRange: null when the text is not a range (it is then regular expressions). */
function parseRange(filter: string): ((v: number, unit: string) => boolean) | null {
  const rx = /([+-]?[0-9]+)([A-Za-z]+)?/g;
  const ranges: RegExpExecArray[] = [];
  for (let m = rx.exec(filter); m && ranges.length < 2; m = rx.exec(filter)) ranges.push(m);
  if (ranges.length === 0) return null;
  const num = (s: string): number => {
    const n = Number(s);
    if (!Number.isSafeInteger(n)) throw new TagFilterError(`the number ${s} is out of range`);
    return n;
  };
  const [value, unit] = scaleMeasurement(num(ranges[0]![1]!), ranges[0]![2] ?? '', ranges[0]![2] ?? '');
  const inUnit = (v: number, u: string): number | null => {
    const [sv, su] = scaleMeasurement(v, u, unit);
    return su === unit ? sv : null;
  };
  if (ranges.length === 1) {
    const match = ranges[0]![0];
    if (filter === match)
      return (v, u) => {
        const sv = inUnit(v, u);
        return sv !== null && sv === value;
      };
    if (filter === `${match}:`)
      return (v, u) => {
        const sv = inUnit(v, u);
        return sv !== null && sv >= value;
      };
    if (filter === `:${match}`)
      return (v, u) => {
        const sv = inUnit(v, u);
        return sv !== null && sv <= value;
      };
    return null;
  }
  if (filter !== `${ranges[0]![0]}:${ranges[1]![0]}`) return null;
  const [value2, unit2] = scaleMeasurement(num(ranges[1]![1]!), ranges[1]![2] ?? '', unit);
  if (unit2 !== unit) return null;
  return (v, u) => {
    const sv = inUnit(v, u);
    return sv !== null && sv >= value && sv <= value2;
  };
}

/**
 * Compiles a -tagfocus/-tagignore value (`[KEY=]FILTER`) as pprof does. Throws TagFilterError naming
 * the expression Go would refuse.
 */
export function compileTagFilter(value: string, maxLength = Number.POSITIVE_INFINITY): TagMatcher {
  const eq = value.indexOf('=');
  const wantKey = eq >= 0 ? value.slice(0, eq) : '';
  const filter = eq >= 0 ? value.slice(eq + 1) : value;
  const range = parseRange(filter);
  if (range) {
    return {
      source: value,
      bind: (units) => {
        const ok = (l: Label) => l.num !== undefined && range(l.num, units.get(l.key) ?? '');
        return wantKey === ''
          ? (labels) => labels.some(ok)
          : (labels) => labels.some((l) => l.key === wantKey && ok(l));
      },
    };
  }
  const res: GoRegexp[] = filter.split(',').map((src) => {
    try {
      return compileGoRegexp(src, { maxLength });
    } catch (e) {
      if (e instanceof GoRegexpError)
        throw new TagFilterError(
          e.tooComplex ? `"${src}" ${e.message}` : `"${src}" is not a valid Go regular expression: ${e.message}`,
        );
      throw e;
    }
  });
  const match =
    wantKey === ''
      ? (labels: readonly Label[]) => res.every((re) => labels.some((l) => isString(l) && re.test(`${l.key}:${l.str}`)))
      : (labels: readonly Label[]) => {
          const vals = labels.filter((l) => l.key === wantKey && isString(l));
          return vals.length > 0 && res.some((re) => vals.some((l) => re.test(l.str!)));
        };
  return { source: value, bind: () => match };
}

export interface TagFilters {
  tagfocus?: TagMatcher;
  tagignore?: TagMatcher;
  tagshow?: GoRegexp;
  taghide?: GoRegexp;
}

export function hasTagFilters(f: TagFilters): boolean {
  return !!(f.tagfocus || f.tagignore || f.tagshow || f.taghide);
}

/**
 * Applies tag filters as pprof does after its name filters: samples kept by tagfocus and not dropped
 * by tagignore (each judged once per distinct label set), then labels removed by tagshow/taghide.
 * A profile without tag filters is returned as is.
 */
export function filterProfileByTags(p: Profile, f: TagFilters): Profile {
  if (!hasTagFilters(f)) return p;
  let out = p;
  if (f.tagfocus || f.tagignore) {
    const units = numLabelUnits(p);
    const focus = f.tagfocus?.bind(units);
    const ignore = f.tagignore?.bind(units);
    const keepSet = p.labelSets.map((set) => (!focus || focus(set)) && !ignore?.(set));
    const kept: number[] = [];
    for (let s = 0; s < p.sampleLabelSet.length; s++) if (keepSet[p.sampleLabelSet[s]!]) kept.push(s);
    if (kept.length !== p.sampleLabelSet.length) {
      const idx = Uint32Array.from(kept);
      out = {
        ...p,
        sampleStack: idx.map((s) => p.sampleStack[s]!),
        values: p.values.map((col) => Float64Array.from(idx, (s) => col[s]!)),
        sampleLabelSet: idx.map((s) => p.sampleLabelSet[s]!),
        stats: { ...p.stats, numSamples: kept.length },
      };
    }
  }
  if (f.tagshow || f.taghide) {
    const keep = (key: string) => (!f.tagshow || f.tagshow.test(key)) && !f.taghide?.test(key);
    out = { ...out, labelSets: out.labelSets.map((set) => set.filter((l) => keep(l.key))) };
  }
  return out;
}
