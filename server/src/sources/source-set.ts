/**
 * A stage's source set: the exact bytes of a Go module's source files, by module-relative path, with
 * the module path, the commit and whether the tree was dirty. Only text source files are kept: `.go`,
 * assembly (`.s`), cgo's C (`.c`, `.h`), `go.mod` and `go.sum` (the module proxy checks dependencies'
 * zips against it); tests' data and binaries are not.
 */

export interface SourceLimits {
  /** Bytes of all kept files together. */
  maxSourceBytes: number;
  /** Bytes of one file. */
  maxSourceFileBytes: number;
  /** Files kept. */
  maxSourceFiles: number;
  /** Entries of an archive read, kept or not. */
  maxSourceArchiveEntries: number;
}

export interface SourceSet {
  modulePath: string;
  revision: string;
  dirty: boolean | null;
  /** Module-relative, `/`-separated path → exact bytes. */
  files: Map<string, Buffer>;
}

/** Longest path a source set keeps. */
export const MAX_PATH_CHARS = 1024;

const KEPT_SUFFIXES = ['.go', '.s', '.c', '.h'];

/** Whether a file (by its path) is one a source set keeps. */
export function isSourceFile(path: string): boolean {
  const base = path.slice(path.lastIndexOf('/') + 1);
  if (base === 'go.mod' || base === 'go.sum') return true;
  return KEPT_SUFFIXES.some((s) => base.endsWith(s) && base.length > s.length);
}

/**
 * Checks a path taken from an archive or a file list, returning its clean `/`-separated form, or the
 * problem: absolute paths, `..` segments, backslashes, NUL and other control characters are refused.
 */
export function checkSourcePath(raw: string): { path: string } | { problem: string } {
  if (raw.includes('\\')) return { problem: 'has a backslash in its path' };
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(raw)) return { problem: 'has a control character in its path' };
  if (raw.startsWith('/') || /^[A-Za-z]:/.test(raw)) return { problem: 'has an absolute path' };
  if (raw.length > MAX_PATH_CHARS) return { problem: `has a path longer than ${MAX_PATH_CHARS} characters` };
  const parts: string[] = [];
  for (const p of raw.split('/')) {
    if (p === '' || p === '.') continue;
    if (p === '..') return { problem: 'has a ".." path segment (it would leave the archive)' };
    parts.push(p);
  }
  // '' is the archive's root (e.g. tar's "./"): a directory, never a file.
  return { path: parts.join('/') };
}

/** The `module` directive of a go.mod file, or '' when it has none. */
export function modulePathOf(goMod: Buffer | string): string {
  const text = typeof goMod === 'string' ? goMod : goMod.toString('utf8');
  for (const line of text.split('\n')) {
    const m = /^\s*module\s+("([^"]+)"|`([^`]+)`|(\S+))/.exec(line.replace(/\/\/.*$/, ''));
    if (m) return (m[2] ?? m[3] ?? m[4] ?? '').trim();
  }
  return '';
}

/**
 * Makes archive paths module-relative: when a go.mod lies in a directory (the shallowest one, e.g. an
 * archive's `project-1.2/` prefix), files under that directory lose the prefix and files outside it are
 * dropped. Returns the module path too.
 */
export function rootAtModule(files: Map<string, Buffer>): { modulePath: string; files: Map<string, Buffer> } {
  let root: string | null = null;
  for (const p of files.keys()) {
    if (p !== 'go.mod' && !p.endsWith('/go.mod')) continue;
    const dir = p.slice(0, p.length - 'go.mod'.length);
    if (
      root === null ||
      dir.split('/').length < root.split('/').length ||
      (dir.length < root.length && dir.split('/').length === root.split('/').length)
    )
      root = dir;
  }
  if (root === null) return { modulePath: '', files };
  const out = new Map<string, Buffer>();
  for (const [p, b] of files) if (p.startsWith(root)) out.set(p.slice(root.length), b);
  return { modulePath: modulePathOf(out.get('go.mod')!), files: out };
}
