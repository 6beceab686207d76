import { type Profile, sampleTypeIndex } from '../model/profile.ts';
import { flatCum, percentageBase, sortByCum, sortByFlat } from '../analysis/flat-cum.ts';
import { describeProfile } from '../analysis/sample-types.ts';
import { IngestError } from '../ingest/errors.ts';
import { FileError, UsageError, parseFlags, stringFlag } from './main.ts';
import { loadFile } from './load.ts';
import { formatValue } from '../api/format.ts';
import { table } from './format.ts';
import { FILTER_FLAGS, applyFilters, compileFilterFlags, filterSources } from './filters.ts';
import { hasFilters } from '../analysis/filter.ts';
import type { Flags } from './main.ts';
import { CallPathNotFound, type FlameNode, callTree } from '../analysis/call-tree.ts';

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

/** The `inspect --json` shape for a profile (see DESIGN.md, CLI contract). */
export function profileInspection(p: Profile, sampleTypeName: string | undefined, topN: number) {
  const i = pickSampleType(p, sampleTypeName);
  const rows = flatCum(p, i);
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
    description: describeProfile(p),
    top: sortByFlat([...rows]).slice(0, topN),
    topCum: sortByCum([...rows]).slice(0, topN),
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

export async function inspectCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, {
    'sample-type': 'string',
    top: 'string',
    json: 'boolean',
    root: 'string',
    'min-fraction': 'string',
    ...FILTER_FLAGS,
  });
  if (flags.positionals.length !== 1) throw new UsageError('inspect needs exactly one FILE');
  const file = flags.positionals[0]!;
  const topN = parseTopN(stringFlag(flags, 'top'));
  const root = parseRoot(stringFlag(flags, 'root'));
  const minFraction = parseMinFraction(stringFlag(flags, 'min-fraction'));
  if (minFraction !== undefined && root === undefined) throw new UsageError('--min-fraction applies with --root');
  const filters = compileFilterFlags(flags);
  const parsed = await loadFile(file);
  if (hasFilters(filters) && parsed.kind !== 'profile')
    throw new UsageError(`--focus/--ignore/--hide/--show apply to profiles; ${file} is a ${parsed.kind}`);
  if (root !== undefined && parsed.kind !== 'profile')
    throw new UsageError(`--root applies to profiles; ${file} is a ${parsed.kind}`);
  let out: unknown;
  try {
    if (parsed.kind === 'profile') {
      const p = applyFilters(parsed.profile, filters);
      const inspection = profileInspection(p, stringFlag(flags, 'sample-type'), topN);
      out = {
        ...inspection,
        ...filterEcho(flags),
        ...(root !== undefined
          ? {
              subtree: subtree(p, sampleTypeIndex(p, inspection.sampleType), root, minFraction ?? DEFAULT_MIN_FRACTION),
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
function subtree(p: Profile, sampleIndex: number, path: string[], minFraction: number) {
  try {
    const { tree, trim } = callTree(p, sampleIndex, minFraction, { root: path });
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
    if (sub) lines.push('', ...renderSubtree(sub, unit, tot));
    return `${lines.join('\n')}\n`;
  }
  return `${JSON.stringify(o, null, 2)}\n`;
}

export function pct(v: number, tot: number): string {
  return tot === 0 ? '-' : `${((100 * v) / Math.abs(tot)).toFixed(2)}%`;
}
