/**
 * The source view: one function's lines in two stages. The figures are the diff's at line granularity
 * (each `fn file:line` row, in the diff's mode, with its verdict); each stage's file comes from its own
 * stored sources, matched by module-relative suffix, and the two versions are aligned by a line diff.
 * A file the stage's sources lack whose path names a module version (a dependency) or GOROOT (the
 * standard library) comes, when SOURCE_GOPROXY is set, from that module's zip on the proxy (goproxy.ts);
 * the standard library's from the toolchain module of the stage's Go release (goReleaseOf).
 */
import type { Query } from '../api/endpoints.ts';
import type { DiffRow, SourceRow, SourceSide, SourceView } from '../api/views.ts';
import { inModule, packageOf, SourceIndex } from '../sources/match.ts';
import { alignLines, splitLines } from '../sources/line-diff.ts';
import {
  foreignFile,
  GO_RELEASE,
  hasToolchainModule,
  type ModuleFile,
  TOOLCHAIN_MODULE,
  toolchainDirective,
  toolchainVersion,
} from '../sources/module-path.ts';
import type { ComparisonTree, StageWithArtifacts } from '../store/index.ts';
import type { AnalysisService } from './analysis.ts';
import { loadStageSources } from './sources.ts';
import { findStage } from './stage-profiles.ts';
import { choice, compileFilters } from './view-queries.ts';

/** Lines shown around the function's sampled lines. */
const CONTEXT = 3;
/** How far above its first sampled line the function's `func` line is looked for. */
const FUNC_LOOKBACK = 300;

interface Place {
  file: string;
  line: number;
  row: DiffRow;
}

/** The function's rows, by file and line, out of a diff at line granularity. */
function functionPlaces(rows: readonly DiffRow[], fn: string): Place[] {
  const out: Place[] = [];
  for (const row of rows) {
    if (!row.name.startsWith(`${fn} `)) continue;
    const m = /^(.*):(\d+)$/.exec(row.name.slice(fn.length + 1));
    if (m) out.push({ file: m[1]!, line: Number(m[2]), row });
  }
  return out.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}

/** The file a side's samples of the function fall in most (by cum), or null when none do. */
function mainFile(places: Place[], side: 'base' | 'target'): string | null {
  const byFile = new Map<string, number>();
  for (const p of places) {
    const v = Math.abs(p.row[side].cum) + Math.abs(p.row[side].flat);
    if (v > 0) byFile.set(p.file, (byFile.get(p.file) ?? 0) + v);
  }
  let best: string | null = null;
  for (const [f, v] of byFile)
    if (best === null || v > byFile.get(best)! || (v === byFile.get(best)! && f < best)) best = f;
  return best;
}

interface Side {
  stage: StageWithArtifacts;
  file: string | null;
  path: string | null;
  /** The module path of the stage's sources ('' when unknown). */
  modulePath: string;
  lines: string[] | null;
  hasSources: boolean;
  revision: string;
  dirty: boolean | null;
  textFrom: SourceSide['textFrom'];
  module: SourceSide['module'];
  goVersion: SourceSide['goVersion'];
  problem: string | null;
  /** The problem may go away (a proxy failure): the view is not kept in the cache. */
  transient: boolean;
  /** line → figures, in `file`. */
  figures: Map<number, { flat: number; cum: number; row: DiffRow }>;
}

type GoRelease = NonNullable<SourceSide['goVersion']>;

/**
 * The Go release a stage was built with, for its standard-library files: what the binary itself
 * reported (client_golang's `go_info{version}` in the stage's runtime metrics), else the server's
 * SOURCE_GO_VERSION, else the `toolchain` line of the stage's go.mod (the least the build used: said so).
 */
async function goReleaseOf(
  svc: AnalysisService,
  stage: StageWithArtifacts,
  sources: { files: Map<string, Buffer> } | null,
): Promise<GoRelease | null> {
  for (const a of stage.artifacts) {
    if (a.kind !== 'metrics') continue;
    const parsed = await svc.models.get(a).catch(() => null);
    if (parsed?.kind !== 'metrics') continue;
    for (const s of parsed.metrics.series) {
      const v = s.name === 'go_info' ? s.labels.version?.split(' ')[0] : undefined;
      if (v && GO_RELEASE.test(v)) return { version: v, from: 'metrics' };
    }
  }
  const setting = svc.modules?.goVersion;
  if (setting) return { version: setting, from: 'setting' };
  const goMod = sources?.files.get('go.mod');
  const directive = goMod ? toolchainDirective(goMod.toString('utf8')) : null;
  if (directive && GO_RELEASE.test(directive)) return { version: directive, from: 'go.mod' };
  return null;
}

async function side(
  svc: AnalysisService,
  tree: ComparisonTree,
  stage: StageWithArtifacts,
  places: Place[],
  which: 'base' | 'target',
  fn: string,
): Promise<Side> {
  const file = mainFile(places, which);
  const figures = new Map<number, { flat: number; cum: number; row: DiffRow }>();
  for (const p of places)
    if (p.file === file) figures.set(p.line, { flat: p.row[which].flat, cum: p.row[which].cum, row: p.row });
  const loaded = await loadStageSources(svc.store, tree.comparison.id, stage.id);
  const out: Side = {
    stage,
    file,
    path: null,
    modulePath: loaded?.sources.modulePath ?? '',
    lines: null,
    hasSources: loaded !== null,
    revision: loaded?.sources.revision ?? '',
    dirty: loaded?.sources.dirty ?? null,
    textFrom: 'none',
    module: null,
    goVersion: null,
    problem: null,
    transient: false,
    figures,
  };
  if (file === null) return out;
  const own = loaded?.sources.modulePath ?? '';
  const foreign = ownPackage(fn, own) ? null : foreignFile(file, fn);
  // The stage's own sources hold its module's files; a path naming a module version or GOROOT is never one.
  if (loaded && inModule(fn, own) && foreign === null) {
    out.path = new SourceIndex(loaded.files.keys()).match(file);
    if (out.path !== null) {
      out.lines = splitLines(loaded.files.get(out.path)!.toString('utf8'));
      out.textFrom = 'sources';
      return out;
    }
  }
  const modules = svc.modules;
  if (!foreign || !modules) return out;
  let req: ModuleFile;
  if (foreign.kind === 'module') req = foreign.file;
  else {
    const release = await goReleaseOf(svc, stage, loaded);
    if (!release) {
      out.problem = `${foreign.path} is a standard-library file, and no Go release is known for this stage (runtime metrics with go_info, SOURCE_GO_VERSION, or a toolchain line in its go.mod would say)`;
      return out;
    }
    out.goVersion = release;
    if (!hasToolchainModule(release.version)) {
      out.problem = `${foreign.path} is a standard-library file of ${release.version}, which has no toolchain module (Go 1.21.0 and later have)`;
      return out;
    }
    req = {
      module: TOOLCHAIN_MODULE,
      version: toolchainVersion(release.version, modules.platform),
      path: `src/${foreign.path}`,
    };
  }
  const got = await modules.files.file(req);
  if (!got.ok) {
    out.problem = got.problem;
    out.transient = true;
    return out;
  }
  out.path = req.path;
  out.lines = splitLines(got.text);
  out.textFrom = 'proxy';
  out.module = { module: req.module, version: req.version, fetched: got.from === 'proxy' };
  return out;
}

/**
 * A profile's file name as the answer gives it: relative to its module, never the capture machine's
 * directories. The stored file a side matched (module-relative), else the path inside the module
 * version or the standard library a Go path names (`…/pkg/mod/m@v1.2.0/x.go` → `x.go`,
 * `/usr/local/go/src/net/http/server.go` → `net/http/server.go`), or below the stage's module path
 * (a `-trimpath` name); an absolute path nothing places is its file name alone.
 */
function relativeFile(file: string, sides: readonly Side[], fn: string): string {
  for (const s of sides) if (s.file === file && s.path !== null && s.textFrom === 'sources') return s.path;
  for (const s of sides)
    if (s.modulePath !== '' && file.startsWith(`${s.modulePath}/`)) return file.slice(s.modulePath.length + 1);
  const foreign = foreignFile(file, fn);
  if (foreign) return foreign.kind === 'std' ? foreign.path : foreign.file.path;
  const f = file.replace(/\\/g, '/');
  return f.startsWith('/') || /^[A-Za-z]:\//.test(f) ? f.slice(f.lastIndexOf('/') + 1) : file;
}

/** Whether a function's package is the stage's own module's (known only when its sources name it). */
function ownPackage(fn: string, modulePath: string): boolean {
  if (modulePath === '') return false;
  const pkg = packageOf(fn);
  return pkg === modulePath || pkg.startsWith(`${modulePath}/`);
}

/** The lines of a side worth showing: its sampled lines with context, from the function's `func` line. */
function window(s: Side): [number, number] | null {
  if (!s.lines || s.figures.size === 0) return null;
  const sampled = [...s.figures.keys()].filter((l) => l >= 1 && l <= s.lines!.length);
  if (sampled.length === 0) return null;
  let lo = Math.min(...sampled);
  const hi = Math.min(s.lines.length, Math.max(...sampled) + CONTEXT);
  for (let l = lo; l >= Math.max(1, lo - FUNC_LOOKBACK); l--)
    if (/^func\b/.test(s.lines[l - 1]!)) {
      lo = l;
      break;
    }
  return [Math.max(1, lo - (lo === Math.min(...sampled) ? CONTEXT : 0)), hi];
}

function figuresAt(s: Side, line: number): { line: number; flat: number; cum: number } {
  const f = s.figures.get(line);
  return { line, flat: f?.flat ?? 0, cum: f?.cum ?? 0 };
}

function verdictOf(row: DiffRow | undefined): SourceRow['verdict'] {
  return row?.verdict ?? null;
}

/**
 * The view, and whether it may be kept in the cache: not when a side's text is missing for a reason
 * that may pass (a proxy failure, remembered for SOURCE_GOPROXY_RETRY_SECONDS, is asked again after).
 */
export async function sourceView(
  svc: AnalysisService,
  tree: ComparisonTree,
  q: Query<'source'>,
): Promise<{ view: SourceView; keep: boolean }> {
  const d = (
    await svc.diffResult(tree, {
      base: q.base,
      target: q.target,
      ...choice(q),
      mode: q.mode ?? 'auto',
      root: [],
      minFraction: 0,
      maxNodes: 1,
      filters: compileFilters(q),
      granularity: 'lines',
    })
  ).view;
  const places = functionPlaces(d.top, q.fn);
  const base = await side(svc, tree, findStage(tree, q.base, 'base'), places, 'base', q.fn);
  const target = await side(svc, tree, findStage(tree, q.target, 'target'), places, 'target', q.fn);
  const rows: SourceRow[] = [];
  const wb = window(base);
  const wt = window(target);
  const aligned = base.lines !== null && target.lines !== null && (wb !== null || wt !== null);
  if (aligned) {
    const all = alignLines(base.lines!, target.lines!);
    const inB = (l: number) => wb !== null && l >= wb[0] && l <= wb[1];
    const inT = (l: number) => wt !== null && l >= wt[0] && l <= wt[1];
    let first = -1;
    let last = -1;
    all.forEach((r, i) => {
      const hit = (r.kind !== 'added' && inB(r.a + 1)) || (r.kind !== 'removed' && inT(r.b + 1));
      if (hit) {
        if (first < 0) first = i;
        last = i;
      }
    });
    const sameKey = base.file === target.file;
    for (const r of first < 0 ? [] : all.slice(first, last + 1)) {
      const b = r.kind !== 'added' ? figuresAt(base, r.a + 1) : null;
      const t = r.kind !== 'removed' ? figuresAt(target, r.b + 1) : null;
      const verdict =
        r.kind === 'same' && sameKey && r.a === r.b
          ? verdictOf(target.figures.get(r.b + 1)?.row ?? base.figures.get(r.a + 1)?.row)
          : null;
      rows.push({
        change: r.kind,
        file: null,
        base: b,
        target: t,
        baseText: r.kind !== 'added' ? base.lines![r.a]! : null,
        targetText: r.kind !== 'removed' ? target.lines![r.b]! : null,
        deltaFlat: (t?.flat ?? 0) - (b?.flat ?? 0),
        deltaCum: (t?.cum ?? 0) - (b?.cum ?? 0),
        verdict,
      });
    }
  } else {
    const textOf = (s: Side, file: string, line: number): string | null =>
      s.lines && s.file === file && line >= 1 && line <= s.lines.length ? s.lines[line - 1]! : null;
    for (const p of places)
      rows.push({
        change: 'unaligned',
        file: relativeFile(p.file, [base, target], q.fn),
        base: { line: p.line, flat: p.row.base.flat, cum: p.row.base.cum },
        target: { line: p.line, flat: p.row.target.flat, cum: p.row.target.cum },
        baseText: textOf(base, p.file, p.line),
        targetText: textOf(target, p.file, p.line),
        deltaFlat: p.row.deltaFlat,
        deltaCum: p.row.deltaCum,
        verdict: verdictOf(p.row),
      });
  }
  const out = (s: Side): SourceSide => ({
    stageId: s.stage.id,
    stageName: s.stage.name,
    file: s.file === null ? null : relativeFile(s.file, [s, base, target], q.fn),
    path: s.path,
    hasSources: s.hasSources,
    revision: s.revision,
    dirty: s.dirty,
    textFrom: s.textFrom,
    module: s.module,
    goVersion: s.goVersion,
    problem: s.problem,
  });
  const view: SourceView = {
    fn: q.fn,
    mode: d.mode,
    modeReason: d.modeReason,
    kind: d.kind,
    unit: d.unit,
    sampleType: d.sampleType,
    perRequest: d.perRequest,
    noise: d.noise,
    base: out(base),
    target: out(target),
    aligned,
    rows,
  };
  return { view, keep: !base.transient && !target.transient };
}
