import { type Profile, sampleTypeIndex } from '../model/profile.ts';
import { flatCum, percentageBase, sortByCum, sortByFlat } from '../analysis/flat-cum.ts';
import { describeProfile } from '../analysis/sample-types.ts';
import { IngestError } from '../ingest/errors.ts';
import { FileError, UsageError, parseFlags, stringFlag } from './flags.ts';
import { loadFile } from './load.ts';
import { formatValue } from '../api/format.ts';
import { table } from './format.ts';
import { FILTER_FLAGS, applyFilters, compileFilterFlags, filterSources } from './filters.ts';
import { hasFilters } from '../analysis/filter.ts';
import type { Flags } from './flags.ts';
import type { Parsed } from '../ingest/detect.ts';
import { DERIVED_KINDS, type DerivedKind } from '../ingest/trace/index.ts';
import { traceReferenceNote } from '../api/words.ts';
import type { TraceModel } from '../model/trace.ts';
import { CallPathNotFound, type FlameNode, callTree } from '../analysis/call-tree.ts';
import { type Granularity, granularityKeys } from '../analysis/granularity.ts';
import { DEFAULT_GRANULARITY, GRANULARITIES, isOneOf } from '../api/options.ts';
import { appendAll } from '../analysis/extent.ts';
import { fullNamesField } from '../analysis/short-names.ts';

/** `--granularity functions|lines|files` (pprof's -functions, -lines, -files); functions by default. */
export function parseGranularity(v: string | undefined): Granularity {
  if (v === undefined) return DEFAULT_GRANULARITY;
  if (!isOneOf(GRANULARITIES, v))
    throw new UsageError(`--granularity must be one of ${GRANULARITIES.join(', ')}, got "${v}"`);
  return v;
}

/** Picks a sample type by name (or the profile's default), refusing unknown names clearly. */
export function pickSampleType(p: Profile, name: string | undefined): number {
  const want = name ?? p.defaultSampleType;
  const i = p.sampleTypes.findIndex((t) => t.type === want);
  if (i < 0) {
    throw new IngestError(
      'malformed',
      `no sample type "${want}" (available: ${p.sampleTypes.map((t) => t.type).join(', ')})`,
    );
  }
  return i;
}

/** The `inspect --json` shape for a profile (the CLI section of docs/architecture.md). */
export function profileInspection(
  p: Profile,
  sampleTypeName: string | undefined,
  topN: number,
  granularity: Granularity = 'functions',
) {
  const i = pickSampleType(p, sampleTypeName);
  const rows = flatCum(p, i, undefined, granularityKeys(p, granularity));
  const top = sortByFlat([...rows]).slice(0, topN);
  const topCum = sortByCum([...rows]).slice(0, topN);
  const totals: Record<string, number> = {};
  // pprof's total (its percentage base): equal to the plain sum unless values are negative
  p.sampleTypes.forEach((t, k) => {
    totals[t.type] = percentageBase(p, k);
  });
  return {
    kind: 'profile' as const,
    format: p.format,
    sampleTypes: p.sampleTypes,
    defaultSampleType: p.defaultSampleType,
    periodType: p.periodType,
    period: p.period,
    durationNanos: p.durationNanos,
    timeNanos: p.timeNanos,
    numSamples: p.stats.numSamples,
    numLocations: p.stats.numLocations,
    numFunctions: p.stats.numFunctions,
    numMappings: p.stats.numMappings,
    totals,
    sampleType: p.sampleTypes[i]!.type,
    unit: p.sampleTypes[i]!.unit,
    ...(granularity !== 'functions' ? { granularity } : {}),
    description: describeProfile(p),
    top,
    topCum,
    // the names as the file writes them, for the rows whose name is pprof's short form
    ...fullNamesField(granularity, [p], top, topCum),
  };
}

/** `{filters: {focus: …}}` when any filter flag was given, else nothing (the output is unchanged). */
export function filterEcho(flags: Flags): { filters?: Record<string, string> } {
  const f = filterSources(flags);
  return Object.keys(f).length > 0 ? { filters: f } : {};
}

export function parseTopN(v: string | undefined): number {
  if (v === undefined) return 20;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new UsageError(`--top needs a non-negative integer, got "${v}"`);
  return n === 0 ? Number.MAX_SAFE_INTEGER : n;
}

/** The `--kind` flag: which profile of an execution trace to read (net, sync, syscall, sched). */
export function parseKindFlag(flags: Flags): DerivedKind | undefined {
  const k = stringFlag(flags, 'kind');
  if (k === undefined) return undefined;
  if (!(DERIVED_KINDS as readonly string[]).includes(k))
    throw new UsageError(`--kind must be one of ${DERIVED_KINDS.join(', ')} (a trace's derived profiles), got "${k}"`);
  return k as DerivedKind;
}

/**
 * A parsed file as a profile to inspect or diff: a trace gives the derived profile `--kind` names
 * (the profile `go tool trace -pprof=KIND` writes); any other file is taken as it is, and `--kind` on
 * anything but a trace is refused.
 */
export function withTraceKind(parsed: Parsed, kind: DerivedKind | undefined, file: string): Parsed {
  if (kind === undefined) return parsed;
  if (parsed.kind !== 'trace')
    throw new UsageError(
      `--kind picks a profile of an execution trace; ${file} is a ${parsed.kind} (${parsed.format})`,
    );
  const profile = parsed.trace.profiles[kind];
  return { kind: 'profile', format: profile.format, profile };
}

/** The `inspect --json` shape of a trace: its summary, and each derived profile's totals. */
export function traceInspection(t: TraceModel) {
  const profiles: Record<string, { samples: number; contentions: number; delayNanos: number }> = {};
  for (const k of DERIVED_KINDS) {
    const p = t.profiles[k];
    profiles[k] = { samples: p.stats.numSamples, contentions: percentageBase(p, 0), delayNanos: percentageBase(p, 1) };
  }
  return { kind: 'trace' as const, format: 'go-trace' as const, ...t.summary, profiles };
}

export async function inspectCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, {
    'sample-type': 'string',
    top: 'string',
    json: 'boolean',
    kind: 'string',
    root: 'string',
    'min-fraction': 'string',
    granularity: 'string',
    ...FILTER_FLAGS,
  });
  if (flags.positionals.length !== 1) throw new UsageError('inspect needs exactly one FILE');
  const granularity = parseGranularity(stringFlag(flags, 'granularity'));
  const file = flags.positionals[0]!;
  const topN = parseTopN(stringFlag(flags, 'top'));
  const root = parseRoot(stringFlag(flags, 'root'));
  const minFraction = parseMinFraction(stringFlag(flags, 'min-fraction'));
  if (minFraction !== undefined && root === undefined) throw new UsageError('--min-fraction applies with --root');
  const filters = compileFilterFlags(flags);
  const kind = parseKindFlag(flags);
  const parsed = withTraceKind(await loadFile(file), kind, file);
  if (hasFilters(filters) && parsed.kind !== 'profile')
    throw new UsageError(`the profile filters (--focus, --tagfocus, …) apply to profiles; ${file} is a ${parsed.kind}`);
  if (granularity !== 'functions' && parsed.kind !== 'profile')
    throw new UsageError(`--granularity applies to profiles; ${file} is a ${parsed.kind}`);
  if (root !== undefined && parsed.kind !== 'profile')
    throw new UsageError(`--root applies to profiles; ${file} is a ${parsed.kind}`);
  let out: unknown;
  try {
    if (parsed.kind === 'profile') {
      const p = applyFilters(parsed.profile, filters);
      const inspection = profileInspection(p, stringFlag(flags, 'sample-type'), topN, granularity);
      out = {
        ...inspection,
        ...filterEcho(flags),
        ...(root !== undefined
          ? {
              subtree: subtree(
                p,
                sampleTypeIndex(p, inspection.sampleType),
                root,
                minFraction ?? DEFAULT_MIN_FRACTION,
                granularity,
              ),
            }
          : {}),
      };
    } else if (parsed.kind === 'loadtest')
      // a file of several runs: each run in the file's order
      out =
        parsed.runs.length === 1
          ? parsed.runs[0]
          : {
              kind: 'loadtest',
              format: parsed.format,
              note: `${parsed.runs.length} runs read from one file`,
              runs: parsed.runs,
            };
    else if (parsed.kind === 'benchmark') out = parsed.benchmark;
    else if (parsed.kind === 'trace') out = traceInspection(parsed.trace);
    else if (parsed.kind === 'schedtrace') out = parsed.schedtrace;
    else if (parsed.kind === 'metrics') out = parsed.metrics;
    else out = parsed.gctrace;
  } catch (e) {
    throw new FileError(file, e);
  }
  if (flags.values.json) {
    let json = JSON.stringify(out, null, 2);
    // JSON numbers may hold any integer, JavaScript's only up to 2^53: write time_nanos's digits
    if (parsed.kind === 'profile' && parsed.profile.timeNanosExact !== undefined)
      json = json.replace(/^ {2}"timeNanos": [-\d.e+]+/m, `  "timeNanos": ${parsed.profile.timeNanosExact}`);
    process.stdout.write(`${json}\n`);
    return 0;
  }
  process.stdout.write(renderText(file, out as Record<string, unknown>));
  return 0;
}

/** The share of a subtree's value under which a frame is too small to draw (the server's default). */
const DEFAULT_MIN_FRACTION = 0.0005;

/** `--root 'main;handler'`: a call path, outermost frame first; '' is the whole tree. */
function parseRoot(v: string | undefined): string[] | undefined {
  if (v === undefined) return undefined;
  return v === '' ? [] : v.split(';');
}

function parseMinFraction(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new UsageError(`--min-fraction needs a number from 0 to 1, got "${v}"`);
  return n;
}

/** The call tree under one call path, re-trimmed at minFraction of its own value. */
function subtree(p: Profile, sampleIndex: number, path: string[], minFraction: number, granularity: Granularity) {
  try {
    const { tree, trim } = callTree(p, sampleIndex, minFraction, {
      root: path,
      keys: granularityKeys(p, granularity),
    });
    return { root: path, minFraction, tree, trim };
  } catch (e) {
    if (e instanceof CallPathNotFound) throw new UsageError(`--root: ${e.message}`);
    throw e;
  }
}

function renderSubtree(s: ReturnType<typeof subtree>, unit: string, total: number): string[] {
  const lines = [
    `Subtree: ${s.root.length > 0 ? s.root.join(' → ') : 'root'}, ${formatValue(s.tree.value, unit)} (${pct(s.tree.value, total)} of the total)`,
  ];
  if (s.trim.prunedNodes > 0)
    lines.push(
      `${pct(s.trim.prunedValue, s.tree.value)} in ${s.trim.prunedNodes} frames under ${s.minFraction * 100}% of it, too small to draw`,
    );
  // Depth first, children in name order, two spaces a level.
  const stack: [FlameNode, number][] = [[s.tree, 0]];
  while (stack.length > 0) {
    const [n, depth] = stack.pop()!;
    lines.push(`${'  '.repeat(depth)}${n.name} ${formatValue(n.value, unit)}`);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push([n.children[i]!, depth + 1]);
  }
  return lines;
}

function renderText(file: string, o: Record<string, unknown>): string {
  if (o.kind === 'profile') {
    const x = o as ReturnType<typeof profileInspection>;
    const unit = x.unit;
    const tot = x.totals[x.sampleType]!;
    const lines = [
      `File: ${file}`,
      `Format: ${x.format} (${x.description.kind} profile), sample types: ${x.sampleTypes.map((t) => `${t.type}/${t.unit}${t.type === x.defaultSampleType ? '*' : ''}`).join(', ')}`,
      `Samples: ${x.numSamples}, locations: ${x.numLocations}, functions: ${x.numFunctions}, duration: ${(x.durationNanos / 1e9).toFixed(2)}s`,
      `Type: ${x.sampleType}, total: ${formatValue(tot, unit)}`,
      ...Object.entries((o as { filters?: Record<string, string> }).filters ?? {}).map(
        ([k, v]) => `Active filter: ${k}=${v}`,
      ),
      '',
      table(
        ['flat', 'flat%', 'cum', 'cum%', 'name'],
        x.top.map((r) => [
          formatValue(r.flat, unit),
          pct(r.flat, tot),
          formatValue(r.cum, unit),
          pct(r.cum, tot),
          r.name,
        ]),
      ),
    ];
    const sub = (o as { subtree?: ReturnType<typeof subtree> }).subtree;
    if (sub) appendAll(lines, ['', ...renderSubtree(sub, unit, tot)]);
    return `${lines.join('\n')}\n`;
  }
  if (o.kind === 'trace') return traceText(file, o as ReturnType<typeof traceInspection>);
  return `${JSON.stringify(o, null, 2)}\n`;
}

function ms(ns: number): string {
  return formatValue(Math.round(ns), 'nanoseconds');
}

function traceText(file: string, t: ReturnType<typeof traceInspection>): string {
  const w = t.schedWait;
  const b = t.blocked;
  const lines = [
    `File: ${file}`,
    `Format: Go execution trace (go ${t.goVersion}), ${t.generations} generation(s), ${t.events} events, span ${ms(t.spanNanos)}${t.startTime ? `, from ${t.startTime}` : ''}`,
    ...(t.incomplete ? [`Incomplete: ${t.incomplete.reason} (read up to byte ${t.incomplete.validBytes})`] : []),
    `Goroutines: ${t.goroutines.atStart} at start, ${t.goroutines.created} created, ${t.goroutines.ended} ended, at most ${t.goroutines.maxAlive} alive; GOMAXPROCS ${t.gomaxprocs ?? '?'}`,
    `Scheduling wait (runnable → running): ${w.count}, mean ${ms(w.meanNanos)}, p50 ${ms(w.p50Nanos)}, p99 ${ms(w.p99Nanos)}, max ${ms(w.maxNanos)}`,
    `GC: ${t.gc.cycles} cycles, mark ${ms(t.gc.markNanos)}, ${t.gc.stw.count} stop-the-world pauses totalling ${ms(t.gc.stw.totalNanos)} (p99 ${ms(t.gc.stw.p99Nanos)}, max ${ms(t.gc.stw.maxNanos)}), ${t.gc.assist.count} assists totalling ${ms(t.gc.assist.totalNanos)}`,
    `Blocked: channel ${ms(b.channel.totalNanos)}, select ${ms(b.select.totalNanos)}, sync ${ms(b.sync.totalNanos)}, network ${ms(b.network.totalNanos)}, sleep ${ms(b.sleep.totalNanos)}, other ${ms(b.other.totalNanos)}; syscalls ${ms(t.syscall.totalNanos)}`,
    `Derived profiles (--kind): ${DERIVED_KINDS.map((k) => `${k} ${ms(t.profiles[k]!.delayNanos)}`).join(', ')}`,
    `Note: ${traceReferenceNote(t.goVersion)}`,
    '',
    table(
      ['goroutines', 'created', 'p50 life', 'p99 life', 'running', 'runnable', 'entry function'],
      t.entryFunctions.functions
        .slice(0, 15)
        .map((f) => [
          String(f.goroutines),
          String(f.created),
          f.lifetime.count > 0 ? ms(f.lifetime.p50Nanos) : '-',
          f.lifetime.count > 0 ? ms(f.lifetime.p99Nanos) : '-',
          ms(f.runningNanos),
          ms(f.runnableNanos),
          f.name || '(no stack seen)',
        ]),
    ),
  ];
  return `${lines.join('\n')}\n`;
}

export function pct(v: number, tot: number): string {
  return tot === 0 ? '-' : `${((100 * v) / Math.abs(tot)).toFixed(2)}%`;
}
