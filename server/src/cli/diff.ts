import { termText } from '../api/untrusted-text.ts';
import { diffProfiles } from '../analysis/diff.ts';
import { compareBenchmarks } from '../analysis/benchstat.ts';
import type { BenchmarkDiff } from '../model/benchmark.ts';
import { IngestError } from '../ingest/errors.ts';
import { FileError, UsageError, parseFlags, stringFlag } from './flags.ts';
import { loadFile } from './load.ts';
import {
  filterEcho,
  parseGranularity,
  parseKindFlag,
  parseTopN,
  pickSampleType,
  pct,
  withTraceKind,
} from './inspect.ts';
import { keysOf } from '../analysis/granularity.ts';
import { FILTER_FLAGS, applyFilters, compileFilterFlags } from './filters.ts';
import { hasFilters } from '../analysis/filter.ts';
import { total } from '../analysis/flat-cum.ts';
import { type Profile, sampleTypeIndex } from '../model/profile.ts';
import { formatValue } from '../api/format.ts';
import { table } from './format.ts';
import { fullNamesField } from '../analysis/short-names.ts';

export async function diffCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, {
    'sample-type': 'string',
    top: 'string',
    normalize: 'boolean',
    json: 'boolean',
    kind: 'string',
    granularity: 'string',
    ...FILTER_FLAGS,
  });
  if (flags.positionals.length !== 2) throw new UsageError('diff needs BASE and TARGET');
  const granularity = parseGranularity(stringFlag(flags, 'granularity'));
  const [baseFile, targetFile] = flags.positionals as [string, string];
  const topN = parseTopN(stringFlag(flags, 'top'));
  const filters = compileFilterFlags(flags);
  const kind = parseKindFlag(flags);
  const base = withTraceKind(await loadFile(baseFile), kind, baseFile);
  const target = withTraceKind(await loadFile(targetFile), kind, targetFile);
  if (base.kind === 'benchmark' && target.kind === 'benchmark') {
    if (hasFilters(filters))
      throw new UsageError('the profile filters (--focus, --tagfocus, …) apply to profiles, not benchmarks');
    if (granularity !== 'functions') throw new UsageError('--granularity applies to profiles, not benchmarks');
    const d = compareBenchmarks(base.benchmark, target.benchmark);
    process.stdout.write(flags.values.json ? `${JSON.stringify(d, null, 2)}\n` : renderBenchDiff(d));
    return 0;
  }
  if (base.kind === 'trace' || target.kind === 'trace')
    throw new UsageError(
      'diff of execution traces needs --kind net|sync|syscall|sched (the derived profile to compare)',
    );
  if (base.kind !== 'profile')
    throw new FileError(
      baseFile,
      new IngestError('unsupported', `is a ${base.kind} (${base.format}); diff compares two profiles`),
    );
  if (target.kind !== 'profile')
    throw new FileError(
      targetFile,
      new IngestError('unsupported', `is a ${target.kind} (${target.format}); diff compares two profiles`),
    );
  let sampleType: string;
  try {
    sampleType = target.profile.sampleTypes[pickSampleType(target.profile, stringFlag(flags, 'sample-type'))]!.type;
  } catch (e) {
    throw new FileError(targetFile, e);
  }
  let d: ReturnType<typeof diffProfiles>;
  try {
    // pprof filters the merged (base negated + target) profile; filtering is per sample and per
    // frame, so filtering each side first gives the same figures.
    d = diffProfiles(applyFilters(base.profile, filters), applyFilters(target.profile, filters), {
      sampleType,
      mode: flags.values.normalize ? 'normalize' : 'absolute',
      keys: keysOf(granularity),
      // the command prints rows only
      tree: false,
      ...(hasFilters(filters) ? { scaleTotals: unfilteredTotals(base.profile, target.profile, sampleType) } : {}),
    });
  } catch (e) {
    throw new FileError(baseFile, e);
  }
  const top = d.rows
    .filter((r) => r.deltaFlat !== 0 || r.deltaCum !== 0)
    .slice(0, topN)
    .map((r) => ({
      name: r.name,
      base: r.base,
      target: r.target,
      deltaFlat: r.deltaFlat,
      deltaCum: r.deltaCum,
      status: r.status,
    }));
  const out = {
    sampleType: d.sampleType,
    unit: d.unit,
    mode: d.mode,
    ...(granularity !== 'functions' ? { granularity } : {}),
    baseTotal: d.baseTotal,
    targetTotal: d.targetTotal,
    ...filterEcho(flags),
    top,
    // the names as the files write them, for the rows whose name is pprof's short form
    ...fullNamesField(granularity, [base.profile, target.profile], top),
  };
  if (flags.values.json) {
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
    return 0;
  }
  const u = d.unit;
  process.stdout.write(
    [
      `Base: ${baseFile} (${formatValue(d.baseTotal, u)})`,
      `Target: ${targetFile} (${formatValue(d.targetTotal, u)})`,
      `Type: ${termText(d.sampleType)}, mode: ${d.mode}; changes relative to the base total`,
      '',
      table(
        ['Δflat', 'Δflat%', 'Δcum', 'Δcum%', 'status', 'name'],
        top.map((r) => [
          formatValue(r.deltaFlat, u),
          pct(r.deltaFlat, d.baseTotal),
          formatValue(r.deltaCum, u),
          pct(r.deltaCum, d.baseTotal),
          r.status,
          r.name,
        ]),
      ),
      '',
    ].join('\n'),
  );
  return 0;
}

function unfilteredTotals(base: Profile, target: Profile, sampleType: string): { base: number; target: number } {
  const t = (p: Profile) => total(p, Math.max(0, sampleTypeIndex(p, sampleType)));
  return { base: t(base), target: t(target) };
}

/** A benchstat-like table: medians ± CI per side, change and p-value, `~` when not significant. */
function renderBenchDiff(d: BenchmarkDiff): string {
  const rows = d.rows.map((r) => [
    r.pkg,
    r.name,
    r.unit,
    side(r.base),
    side(r.target),
    !r.significant
      ? '~'
      : r.deltaPercent === null
        ? '?'
        : `${r.deltaPercent > 0 ? '+' : ''}${r.deltaPercent.toFixed(2)}%`,
    `p=${r.p.toFixed(3)} n=${r.n}`,
  ]);
  return `${table(['pkg', 'benchmark', 'unit', 'base', 'target', 'vs base', ''], rows)}\n`;
}

function side(s: { median: number; ci: number | null }): string {
  return `${s.median.toPrecision(4)} ± ${s.ci === null ? '∞' : `${(s.ci * 100).toFixed(0)}%`}`;
}
