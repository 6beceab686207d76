import type { FrameKeys } from './frame-keys.ts';
import type { Profile } from '../model/profile.ts';

/**
 * The names `go tool pprof` prints by default. When it loads a profile, pprof tidies each function
 * name that its symbol name (system_name) repeats and that looks like C++ already demangled: one
 * holding `[`, `]`, `<`, `>` or `::`, unless it holds `.<` (Java's `Class.<init>`) or `]).` (a Go
 * method of a generic type, `pkg.(*T[…]).M`). From such a name it drops every balanced
 * parenthesised group (argument lists) and then every balanced angle-bracketed group (template
 * arguments). So Go's `sync.OnceValue[go.shape.func() int]` prints as `sync.OnceValue[go.shape.func int]`.
 * Only `-symbolize=none` shows the names as written; stagediff shows the short form where pprof
 * does and keeps the full one (hover, exports).
 */
export function pprofShortName(name: string, systemName: string): string {
  if (name !== '' && systemName !== name) return name;
  if (!looksDemangled(name)) return name;
  return dropGroups(dropGroups(name, '(', ')'), '<', '>');
}

function looksDemangled(s: string): boolean {
  if (s.includes('.<') || s.includes(']).')) return false;
  return /[<>[\]]/.test(s) || s.includes('::');
}

/**
 * Removes each outermost balanced open…close group; a close without its open leaves the name as it
 * was, an open never closed stays (as pprof's own rule has it).
 */
function dropGroups(name: string, open: string, close: string): string {
  let out = name;
  let depth = 0;
  let first = 0;
  for (let i = 0; i < out.length; i++) {
    const c = out[i];
    if (c === open) {
      depth++;
      if (depth === 1) first = i;
    } else if (c === close) {
      depth--;
      if (depth < 0) return out;
      if (depth === 0) {
        out = out.slice(0, first) + out.slice(i + 1);
        i = first - 1;
      }
    }
  }
  return out;
}

/**
 * Function keys by the names as the profile writes them (`go tool pprof -symbolize=none`'s rows):
 * for an export that must carry full names, and for answers recorded without pprof's shortening.
 */
export function writtenNameKeys(p: Profile): FrameKeys {
  const ids = new Map<string, number>();
  const keys: string[] = [];
  const frameKey = new Uint32Array(p.frames.length);
  for (let i = 0; i < p.frames.length; i++) {
    const f = p.frames[i]!;
    const k = f.fullName ?? f.name;
    let id = ids.get(k);
    if (id === undefined) {
      id = keys.length;
      keys.push(k);
      ids.set(k, id);
    }
    frameKey[i] = id;
  }
  return { keys, frameKey };
}

/**
 * The key a user's name stands for: the name itself when it is one, else pprof's short form of it (a
 * full name typed or pasted where the views show the short one); -1 when neither is a key.
 */
export function keyIdOf(keys: readonly string[], name: string): number {
  const i = keys.indexOf(name);
  if (i >= 0) return i;
  const short = pprofShortName(name, name);
  return short === name ? -1 : keys.indexOf(short);
}

const fullCache = new WeakMap<Profile, Map<string, string[]>>();

/** Each short name of a profile with the full names it stands for (several only when pprof merged them). */
function fullNameIndex(p: Profile): Map<string, string[]> {
  let m = fullCache.get(p);
  if (m) return m;
  m = new Map();
  for (const f of p.frames) {
    if (f.fullName === undefined) continue;
    const list = m.get(f.name);
    if (!list) m.set(f.name, [f.fullName]);
    else if (!list.includes(f.fullName)) list.push(f.fullName);
  }
  fullCache.set(p, m);
  return m;
}

/**
 * The full names behind those of `names` that are pprof's short form, over one or more profiles (a
 * diff's two sides): what hover texts and exports show beside a row's name. Undefined when none is
 * shortened, so answers about profiles without such names stay as they were.
 */
export function fullNamesOf(
  profiles: readonly Profile[],
  names: Iterable<string>,
): Record<string, string[]> | undefined {
  const indexes = profiles.map(fullNameIndex).filter((m) => m.size > 0);
  if (indexes.length === 0) return undefined;
  let out: Record<string, string[]> | undefined;
  for (const n of names) {
    for (const m of indexes) {
      const list = m.get(n);
      if (!list) continue;
      out ??= Object.create(null) as Record<string, string[]>;
      const have = out[n];
      if (!have) out[n] = list.slice();
      else for (const x of list) if (!have.includes(x)) have.push(x);
    }
  }
  return out;
}

/**
 * `{fullNames: {short: [full…]}}` for an answer's function rows whose name is pprof's short form (an
 * export keeps the names as written beside the ones shown), else nothing; other granularities' keys
 * are not function names.
 */
export function fullNamesField(
  granularity: string,
  profiles: readonly Profile[],
  ...rowLists: readonly (readonly { name: string }[])[]
): { fullNames?: Record<string, string[]> } {
  if (granularity !== 'functions') return {};
  const names = new Set<string>();
  for (const rows of rowLists) for (const r of rows) names.add(r.name);
  const fullNames = fullNamesOf(profiles, names);
  return fullNames ? { fullNames } : {};
}

/** The names of a tree's nodes (a flame graph's or a diff's, bounded by its trimming). */
export function treeNames(root: { name: string; children: readonly unknown[] }): Set<string> {
  const out = new Set<string>();
  const stack: { name: string; children: readonly unknown[] }[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    out.add(n.name);
    for (const c of n.children) stack.push(c as { name: string; children: readonly unknown[] });
  }
  return out;
}
