/**
 * "The code change" of a pair of stages (api/changes.ts CodeChange): the Go functions each stage's
 * sources declare, compared by their text (sources/go-functions.ts), each edited, added or removed one
 * with its cost in both stages and the verdict of the engine's per-function diff; then the functions
 * where a change of cost starts (the change engine's origins, FunctionChanges) whose code did not change
 * and whose cost moved significantly: the indirect effects of the change.
 */
import type { CodeChange, CodeFunction, CodeStatus, FunctionChanges, Verdict } from '../api/changes.ts';
import type { DiffRow } from '../api/views.ts';
import {
  declarationCandidates,
  type GoFunction,
  goFunctions,
  goPackageName,
  goSymbolPackage,
} from '../sources/go-functions.ts';
import { alignLines, splitLines } from '../sources/line-diff.ts';
import type { ComparisonTree, StageWithArtifacts } from '../store/index.ts';
import type { AnalysisService, NoiseTest } from './analysis.ts';
import { loadStageSources } from './sources.ts';

/** Most rows of each list (the largest changes first). */
export const CODE_CHANGE_MAX_ROWS = 40;
/** Rows of `closest` when no unchanged-code function changed significantly. */
const CLOSEST_ROWS = 3;

interface Declared {
  file: string;
  fn: GoFunction;
}

interface SideCode {
  files: Set<string>;
  modulePath: string;
  revision: string;
  dirty: boolean | null;
  goFiles: number;
  /** Declared functions by their profile name. */
  functions: Map<string, Declared>;
  /** The symbol packages its files declare (`main`, `example.com/m/codec`). */
  packages: Set<string>;
}

function readSide(s: {
  sources: { modulePath: string; revision: string; dirty: boolean | null };
  files: Map<string, Buffer>;
}): SideCode {
  const functions = new Map<string, Declared>();
  const packages = new Set<string>();
  let goFiles = 0;
  const paths = [...s.files.keys()].filter((p) => p.endsWith('.go') && !p.endsWith('_test.go')).sort();
  for (const path of paths) {
    const text = s.files.get(path)!.toString('utf8');
    const name = goPackageName(text);
    if (name === null) continue;
    goFiles++;
    const pkg = goSymbolPackage(s.sources.modulePath, path, name);
    packages.add(pkg);
    for (const fn of goFunctions(text, pkg)) if (!functions.has(fn.name)) functions.set(fn.name, { file: path, fn });
  }
  return {
    files: new Set(s.files.keys()),
    modulePath: s.sources.modulePath,
    revision: s.sources.revision,
    dirty: s.sources.dirty,
    goFiles,
    functions,
    packages,
  };
}

/** The package part of a profile's function name (`example.com/m/codec.(*T).M` → `example.com/m/codec`). */
function symbolPackage(name: string): string {
  const slash = name.lastIndexOf('/');
  const dot = name.indexOf('.', slash + 1);
  return dot < 0 ? name : name.slice(0, dot);
}

/** How many lines of the declaration were added and removed between the two texts. */
function lineChanges(a: string, b: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const x of alignLines(splitLines(a), splitLines(b))) {
    if (x.kind === 'added') added++;
    else if (x.kind === 'removed') removed++;
  }
  return { added, removed };
}

const noRows = (
  status: CodeChange['status'],
  message: string,
  fc: FunctionChanges,
  base: SideCode | null = null,
  target: SideCode | null = null,
): CodeChange => ({
  status,
  message,
  base: base && ref(base),
  target: target && ref(target),
  kind: fc.kind,
  normalisation: fc.normalisation,
  unit: fc.unit,
  changed: [],
  tested: 0,
  indirect: [],
  closest: [],
});

function ref(s: SideCode): NonNullable<CodeChange['base']> {
  return { modulePath: s.modulePath, revision: s.revision, dirty: s.dirty, goFiles: s.goFiles };
}

/** The per-function diff the change engine's functions come from: every function's row and verdict. */
export interface FunctionDiff {
  rows: readonly DiffRow[];
  noise: NoiseTest | null;
  /** Factors turning each side's figures into the functions' normalisation (per second: 1e9 / duration). */
  scaleBase: number;
  scaleTarget: number;
}

/**
 * The code change of base → target, or null when neither stage has sources. `functions` is the change
 * engine's per-function result for the pair (its kind, normalisation and origins) and `diff` the diff
 * it was read from, whose rows give every function's cost.
 */
export async function codeChange(
  svc: AnalysisService,
  tree: ComparisonTree,
  base: StageWithArtifacts,
  target: StageWithArtifacts,
  functions: FunctionChanges,
  diff: FunctionDiff | null,
): Promise<CodeChange | null> {
  const bs = await loadStageSources(svc.store, tree.comparison.id, base.id);
  const ts = await loadStageSources(svc.store, tree.comparison.id, target.id);
  const b = bs && readSide(bs);
  const t = ts && readSide(ts);
  if (!b && !t) return null;
  if (!b || !t) {
    const missing = [!b ? base.name : null, !t ? target.name : null].filter((x) => x !== null);
    return noRows(
      'no-sources',
      `${missing.map((n) => `"${n}"`).join(' and ')} ${missing.length > 1 ? 'have' : 'has'} no sources: capture with --source DIR, or add a source archive to the stage`,
      functions,
      b,
      t,
    );
  }
  if (functions.status !== 'ok' || !functions.kind)
    return noRows('no-profiles', functions.message ?? 'no per-function diff of the two stages', functions, b, t);

  if (!diff) return noRows('no-profiles', 'no per-function diff of the two stages', functions, b, t);
  const sb = diff.scaleBase;
  const st = diff.scaleTarget;
  const rows = new Map<string, DiffRow>(diff.rows.map((r) => [r.name, r]));
  const verdictOf = (name: string): Verdict | null => diff.noise?.cum.get(name) ?? null;
  const costs = (name: string) => {
    const r = rows.get(name);
    const bv = r && r.base.cum !== 0 ? r.base.cum * sb : null;
    const tv = r && r.target.cum !== 0 ? r.target.cum * st : null;
    const delta = (tv ?? 0) - (bv ?? 0);
    return { base: bv, target: tv, delta, deltaPercent: bv ? (delta / bv) * 100 : null };
  };

  // One clean revision on both sides is one code: what one capture kept and the other did not is sampling.
  const sameCode = b.revision !== '' && b.revision === t.revision && b.dirty === false && t.dirty === false;
  /** A declared function's code status, or null when neither side declares it. */
  const declared = (name: string): CodeStatus | null => {
    const x = b.functions.get(name);
    const y = t.functions.get(name);
    if (sameCode && (x || y)) return 'same';
    if (x && y) return x.fn.text === y.fn.text ? 'same' : 'edited';
    if (y) return 'added';
    if (x) return 'removed';
    return null;
  };
  const ownPackage = (name: string) => {
    const pkg = symbolPackage(name);
    return b.packages.has(pkg) || t.packages.has(pkg);
  };
  /** Where a profile's function stands: its own declaration's, or its enclosing function's (a closure). */
  const statusOf = (name: string): CodeStatus | null => {
    if (!ownPackage(name)) return 'outside';
    for (const c of declarationCandidates(name)) {
      const st = declared(c);
      if (st) return st;
    }
    return null;
  };

  const row = (name: string, code: CodeStatus): CodeFunction => {
    const x = b.functions.get(name);
    const y = t.functions.get(name);
    const lc = code === 'edited' && x && y ? lineChanges(x.fn.text, y.fn.text) : { added: 0, removed: 0 };
    return {
      name,
      code,
      file: y?.file ?? x?.file ?? null,
      fileOnBothSides: y ? b.files.has(y.file) : x ? t.files.has(x.file) : false,
      baseLines: x ? { start: x.fn.start, end: x.fn.end } : null,
      targetLines: y ? { start: y.fn.start, end: y.fn.end } : null,
      linesAdded: lc.added,
      linesRemoved: lc.removed,
      ...costs(name),
      verdict: verdictOf(name),
    };
  };
  const bySize = (x: CodeFunction, y: CodeFunction) => {
    const sampled = (r: CodeFunction) => (r.base !== null || r.target !== null ? 0 : 1);
    return sampled(x) - sampled(y) || Math.abs(y.delta) - Math.abs(x.delta) || (x.name < y.name ? -1 : 1);
  };

  const changed: CodeFunction[] = [];
  for (const name of new Set([...b.functions.keys(), ...t.functions.keys()])) {
    const code = declared(name)!;
    if (code !== 'same') changed.push(row(name, code));
  }
  changed.sort(bySize);

  // Where a cost change starts (the engine's origins), in code that did not change.
  const unchanged = (name: string) => {
    const s = statusOf(name);
    return s === 'same' || s === 'outside' ? s : null;
  };
  const seen = new Set<string>();
  const origins: CodeFunction[] = [];
  for (const o of functions.changes) {
    const s = unchanged(o.name);
    if (!s || seen.has(o.name)) continue;
    seen.add(o.name);
    origins.push(row(o.name, s));
  }
  const indirect = origins.filter((r) => r.verdict?.status === 'significant').sort(bySize);
  let closest: CodeFunction[] = [];
  if (indirect.length === 0) {
    // None: the unchanged-code functions nearest to a significant change, with their p.
    const candidates = [...origins];
    for (const [name, v] of diff.noise?.cum ?? []) {
      if (seen.has(name) || v.p === null) continue;
      const s = unchanged(name);
      if (s) candidates.push(row(name, s));
    }
    const p = (r: CodeFunction) => r.verdict?.q ?? r.verdict?.p ?? 2;
    closest = candidates
      .filter((r) => r.verdict?.p !== null && r.verdict?.p !== undefined)
      .sort((x, y) => p(x) - p(y) || bySize(x, y))
      .slice(0, CLOSEST_ROWS);
  }
  return {
    status: 'ok',
    message: null,
    base: ref(b),
    target: ref(t),
    kind: functions.kind,
    normalisation: functions.normalisation,
    unit: functions.unit,
    changed: changed.slice(0, CODE_CHANGE_MAX_ROWS),
    tested: diff.noise?.noise.tested ?? 0,
    indirect: indirect.slice(0, CODE_CHANGE_MAX_ROWS),
    closest,
  };
}
