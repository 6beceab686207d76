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
import { goSumHashes, requiredModules } from '../sources/go-mod.ts';
import { functionEnd } from '../sources/go-extent.ts';
import { alignWindows, splitLines } from '../sources/line-diff.ts';
import {
  foreignFile,
  GO_RELEASE,
  hasToolchainModule,
  type ModuleFile,
  TOOLCHAIN_MODULE,
  toolchainDirective,
  toolchainVersion,
} from '../sources/module-path.ts';
import type { SourceViewLimits } from '../config.ts';
import type { ComparisonTree, StageWithArtifacts } from '../store/index.ts';
import type { AnalysisService } from './analysis.ts';
import { loadStageSources } from './sources.ts';
import { findStage } from './stage-profiles.ts';
import { choice, compileFilters } from './view-queries.ts';

/** Lines shown around the function's sampled lines. */
const CONTEXT = 3;
/** How far above its first sampled line the function's `func` line is looked for. */
const FUNC_LOOKBACK = 300;
/** How far below its `func` line the function's closing brace is looked for. */
const FUNC_LOOKAHEAD = 3000;
/** Fewer unshown lines than this between shown ones are shown too. */
const MIN_GAP = 3;
/** Bytes of source text read that cost one more unit of the client's analysis budget. */
export const COST_BYTES = 256 * 1024;
/** Lines aligned that cost one more unit. */
export const COST_LINES = 1000;

/**
 * What a source view costs its client (ANALYSIS_CLIENT_JOBS_PER_MINUTE), counted by size: 1 like any
 * view, and 1 more for each COST_BYTES of source text it read (both sides' files, split into lines)
 * and each COST_LINES lines it aligned. A view of a usual file costs 1; one of a million-line file
 * several, so one client's large views cannot take the workers from everyone.
 */
export function sourceViewCost(bytes: number, alignedLines: number): number {
  return 1 + Math.floor(bytes / COST_BYTES) + Math.floor(alignedLines / COST_LINES);
}

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
  /** Bytes of the text `lines` came from (0 without text). */
  bytes: number;
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
    bytes: 0,
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
      const bytes = loaded.files.get(out.path)!;
      out.bytes = bytes.length;
      out.lines = splitLines(bytes.toString('utf8'));
      out.textFrom = 'sources';
      return out;
    }
  }
  const modules = svc.modules;
  if (!foreign || !modules) return out;
  let req: ModuleFile;
  if (foreign.kind === 'module') {
    const allowed = moduleAllowed(loaded?.files ?? null, foreign.file);
    if ('problem' in allowed) {
      out.problem = allowed.problem;
      return out;
    }
    req = allowed.req;
  } else {
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
    // The visitor's words: never the proxy's address or answer (those are in the server's log).
    out.problem = got.reason;
    out.transient = true;
    return out;
  }
  out.path = req.path;
  out.bytes = got.text.length;
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

/**
 * A dependency's file is fetched only for a module version the stage's own go.mod requires (or
 * replaces to), and, when its sources hold a go.sum, only with the hash go.sum records for its zip
 * (the text is given only when the zip matches it): a profile cannot make the server fetch, with the
 * operator's proxy credentials, a module the stage's build never used.
 */
function moduleAllowed(files: Map<string, Buffer> | null, file: ModuleFile): { req: ModuleFile } | { problem: string } {
  const id = `${file.module}@${file.version}`;
  const goMod = files?.get('go.mod');
  if (!goMod)
    return {
      problem: `source unavailable: ${id} is fetched only for a stage whose sources hold the go.mod requiring it`,
    };
  if (!requiredModules(goMod.toString('utf8')).get(file.module)?.has(file.version))
    return { problem: `source unavailable: the stage's go.mod does not require ${id}` };
  const goSum = files?.get('go.sum');
  if (!goSum) return { req: file };
  const sum = goSumHashes(goSum.toString('utf8')).get(id);
  if (!sum) return { problem: `source unavailable: the stage's go.sum has no hash for ${id}` };
  return { req: { ...file, sum } };
}

/** Whether a function's package is the stage's own module's (known only when its sources name it). */
function ownPackage(fn: string, modulePath: string): boolean {
  if (modulePath === '') return false;
  const pkg = packageOf(fn);
  return pkg === modulePath || pkg.startsWith(`${modulePath}/`);
}

/**
 * The lines of a side worth showing, flagged (index = line − 1): each sampled line with `context` lines
 * either side, and with `lookback` the function's `func` line and everything down to its first sampled
 * line — with `whole` too, everything down to the function's closing brace (the whole function, when its
 * end is found below its last sampled line); gaps of a few lines are shown rather than left out. Null
 * without text or samples in it.
 */
function shownLines(s: Side, context: number, lookback: boolean, whole = false): Uint8Array | null {
  if (!s.lines || s.figures.size === 0) return null;
  const n = s.lines.length;
  const show = new Uint8Array(n);
  let first = Number.POSITIVE_INFINITY;
  let lastSampled = 0;
  for (const l of s.figures.keys()) {
    if (l < 1 || l > n) continue;
    if (l < first) first = l;
    if (l > lastSampled) lastSampled = l;
    for (let i = Math.max(1, l - context); i <= Math.min(n, l + context); i++) show[i - 1] = 1;
  }
  if (first === Number.POSITIVE_INFINITY) return null;
  if (lookback)
    for (let l = first; l >= Math.max(1, first - FUNC_LOOKBACK); l--)
      if (/^func\b/.test(s.lines[l - 1]!)) {
        show.fill(1, l - 1, first);
        const end = whole ? functionEnd(s.lines, l, FUNC_LOOKAHEAD) : null;
        if (end !== null && end >= lastSampled) {
          // The whole function and nothing past its closing brace (the context of its last lines would
          // show the next function's first).
          show.fill(1, l - 1, end);
          show.fill(0, end);
        }
        break;
      }
  // A gap shorter than MIN_GAP lines is shown: its `elided` row would take as much room.
  let last = -1;
  for (let i = 0; i < n; i++) {
    if (!show[i]) continue;
    if (last >= 0 && i - last - 1 > 0 && i - last - 1 < MIN_GAP) show.fill(1, last + 1, i);
    last = i;
  }
  return show;
}

/** Whether a sample of the side falls on a line of its text. */
function sampledInText(s: Side): boolean {
  if (!s.lines) return false;
  for (const l of s.figures.keys()) if (l >= 1 && l <= s.lines.length) return true;
  return false;
}

/** A line's text cut at `max` characters (never inside a surrogate pair), and whether it was. */
function clip(text: string | null, max: number): { text: string | null; clipped: boolean } {
  if (text === null || text.length <= max) return { text, clipped: false };
  const end = /[\ud800-\udbff]/.test(text[max - 1]!) ? max - 1 : max;
  return { text: text.slice(0, end), clipped: true };
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
): Promise<{ view: SourceView; keep: boolean; cost: number }> {
  const d = (
    await svc.diffResult(tree, {
      base: q.base,
      target: q.target,
      ...choice(q),
      mode: q.mode,
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
  const limits = svc.sourceView;
  let rows: SourceRow[] = [];
  let limited: string | null = null;
  let alignedLines = 0;
  const aligned = base.lines !== null && target.lines !== null && (sampledInText(base) || sampledInText(target));
  if (aligned) {
    // The whole function; past the row bound, the sampled lines with context; past it, the sampled
    // lines alone; past it still, cut.
    rows = alignedRows(base, target, limits, CONTEXT, true, true);
    alignedLines += rows.length;
    if (shownRows(rows) > limits.maxRows) {
      rows = alignedRows(base, target, limits, CONTEXT, true);
      alignedLines += rows.length;
    }
    if (shownRows(rows) > limits.maxRows) {
      rows = alignedRows(base, target, limits, 0, false);
      alignedLines += rows.length;
      limited = `context lines left out: the function has more sampled lines than SOURCE_VIEW_MAX_ROWS (${limits.maxRows}) rows`;
    }
  } else {
    const textOf = (s: Side, file: string, line: number): string | null =>
      s.lines && s.file === file && line >= 1 && line <= s.lines.length ? s.lines[line - 1]! : null;
    for (const p of places) {
      const b = clip(textOf(base, p.file, p.line), limits.maxLineChars);
      const t = clip(textOf(target, p.file, p.line), limits.maxLineChars);
      rows.push({
        change: 'unaligned',
        file: relativeFile(p.file, [base, target], q.fn),
        base: { line: p.line, flat: p.row.base.flat, cum: p.row.base.cum },
        target: { line: p.line, flat: p.row.target.flat, cum: p.row.target.cum },
        baseText: b.text,
        targetText: t.text,
        deltaFlat: p.row.deltaFlat,
        deltaCum: p.row.deltaCum,
        verdict: verdictOf(p.row),
        ...(b.clipped || t.clipped ? { clipped: true } : {}),
      });
    }
  }
  if (shownRows(rows) > limits.maxRows) {
    const cut = cutRows(rows, limits.maxRows, base, target, aligned);
    rows = cut.rows;
    limited = `${cut.left} sampled line${cut.left === 1 ? '' : 's'} left out: the view shows at most SOURCE_VIEW_MAX_ROWS (${limits.maxRows}) rows`;
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
    highlightChars: limits.highlightChars,
    limited,
  };
  return {
    view,
    keep: !base.transient && !target.transient,
    cost: sourceViewCost(base.bytes + target.bytes, alignedLines),
  };
}

/** Rows that show a line (not `elided`). */
function shownRows(rows: readonly SourceRow[]): number {
  let n = 0;
  for (const r of rows) if (r.change !== 'elided') n++;
  return n;
}

function elidedRow(base: number, target: number): SourceRow {
  return {
    change: 'elided',
    file: null,
    base: null,
    target: null,
    baseText: null,
    targetText: null,
    deltaFlat: 0,
    deltaCum: 0,
    verdict: null,
    elided: { base, target },
  };
}

/**
 * Both versions aligned over the lines shown (sampled lines with `context` either side, or with `whole`
 * each version's whole function), each stretch
 * between them one `elided` row: the work and the answer grow with the sampled lines, not the files.
 */
function alignedRows(
  base: Side,
  target: Side,
  limits: SourceViewLimits,
  context: number,
  lookback: boolean,
  whole = false,
): SourceRow[] {
  const a = base.lines!;
  const b = target.lines!;
  const showA = shownLines(base, context, lookback, whole) ?? new Uint8Array(a.length);
  const showB = shownLines(target, context, lookback, whole) ?? new Uint8Array(b.length);
  const sameKey = base.file === target.file;
  const rows: SourceRow[] = [];
  for (const r of alignWindows(a, b, showA, showB, limits.maxAlignLines)) {
    if (r.kind === 'elided') {
      rows.push(elidedRow(r.a, r.b));
      continue;
    }
    const bf = r.kind !== 'added' ? figuresAt(base, r.a + 1) : null;
    const tf = r.kind !== 'removed' ? figuresAt(target, r.b + 1) : null;
    const verdict =
      r.kind === 'same' && sameKey && r.a === r.b
        ? verdictOf(target.figures.get(r.b + 1)?.row ?? base.figures.get(r.a + 1)?.row)
        : null;
    const bt = clip(r.kind !== 'added' ? a[r.a]! : null, limits.maxLineChars);
    const tt = clip(r.kind !== 'removed' ? b[r.b]! : null, limits.maxLineChars);
    rows.push({
      change: r.kind,
      file: null,
      base: bf,
      target: tf,
      baseText: bt.text,
      targetText: tt.text,
      deltaFlat: (tf?.flat ?? 0) - (bf?.flat ?? 0),
      deltaCum: (tf?.cum ?? 0) - (bf?.cum ?? 0),
      verdict,
      ...(bt.clipped || tt.clipped ? { clipped: true } : {}),
    });
  }
  return rows;
}

/**
 * The first `max` shown rows, then one `elided` row for the rest: the lines of each version after the
 * last row kept (aligned), or the file:line rows left out (unaligned). Also how many of those had samples.
 */
function cutRows(
  rows: readonly SourceRow[],
  max: number,
  base: Side,
  target: Side,
  aligned: boolean,
): { rows: SourceRow[]; left: number } {
  const kept: SourceRow[] = [];
  let i = 0;
  for (let shown = 0; i < rows.length && shown < max; i++) {
    kept.push(rows[i]!);
    if (rows[i]!.change !== 'elided') shown++;
  }
  let left = 0;
  let leftRows = 0;
  for (let j = i; j < rows.length; j++) {
    const r = rows[j]!;
    if (r.change === 'elided') continue;
    leftRows++;
    if (r.base?.flat || r.base?.cum || r.target?.flat || r.target?.cum) left++;
  }
  if (!aligned) kept.push(elidedRow(leftRows, leftRows));
  else {
    let lastA = 0;
    let lastB = 0;
    for (const r of kept) {
      if (r.base) lastA = r.base.line;
      if (r.target) lastB = r.target.line;
    }
    kept.push(elidedRow(base.lines!.length - lastA, target.lines!.length - lastB));
  }
  return { rows: kept, left };
}
