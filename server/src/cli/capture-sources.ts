/**
 * `capture --source`: the exact bytes of the module's source files that the captured profiles name,
 * with the module path, `git rev-parse HEAD` and whether the tree is dirty, written to the capture
 * folder as sources.tar.gz (what `stagediff upload --source` and the server read).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { parsePprof } from '../ingest/pprof/index.ts';
import { SOURCE_META } from '../sources/archive.ts';
import { SourceIndex, inModule } from '../sources/match.ts';
import { isSourceFile, modulePathOf, type SourceLimits } from '../sources/source-set.ts';
import { tarGz } from '../sources/tar-writer.ts';

export { SOURCES_ARCHIVE } from '../api/capture-files.ts';

/** The directory of the go.mod governing `dir` (itself or an ancestor), or null. */
export function findModuleRoot(dir: string): string | null {
  for (let d = resolve(dir); ; d = dirname(d)) {
    if (existsSync(join(d, 'go.mod'))) return d;
    if (dirname(d) === d) return null;
  }
}

/** The module's source files, module-relative; nested modules, hidden folders and testdata are left out. */
export function listModuleFiles(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, e.name);
      if (e.isDirectory()) {
        if (e.name.startsWith('.') || e.name.startsWith('_') || e.name === 'testdata' || e.name === 'node_modules')
          continue;
        if (existsSync(join(full, 'go.mod'))) continue; // another module
        walk(full);
      } else if (e.isFile()) {
        const rel = relative(root, full).split(sep).join('/');
        if (isSourceFile(rel)) out.push(rel);
      }
    }
  };
  walk(root);
  return out.sort();
}

function git(root: string, args: string[]): string | null {
  try {
    return execFileSync('git', ['-C', root, ...args], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    });
  } catch {
    return null;
  }
}

/** Function names and files of every frame of these pprof files. */
export function profileFrames(paths: string[]): { name: string; file: string }[] {
  const seen = new Set<string>();
  const out: { name: string; file: string }[] = [];
  for (const p of paths) {
    let profile: ReturnType<typeof parsePprof>;
    try {
      profile = parsePprof(readFileSync(p));
    } catch {
      continue; // not a pprof file (or damaged): it names no source
    }
    for (const f of profile.frames) {
      if (!f.file) continue;
      const key = `${f.name}\u0000${f.file}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ name: f.name, file: f.file });
    }
  }
  return out;
}

export interface CollectedSources {
  root: string;
  modulePath: string;
  revision: string;
  dirty: boolean | null;
  files: Map<string, Buffer>;
  /** Files named by the profiles but left out by a bound (the reason each). */
  skipped: string[];
}

/**
 * The files of the module at `root` that the frames name (by module-relative suffix, longest wins),
 * plus go.mod, within the bounds.
 */
export function collectSources(
  root: string,
  frames: { name: string; file: string }[],
  limits: SourceLimits,
): CollectedSources {
  const goMod = readFileSync(join(root, 'go.mod'));
  const modulePath = modulePathOf(goMod);
  const index = new SourceIndex(listModuleFiles(root));
  const wanted = new Set<string>();
  for (const f of frames) {
    if (!inModule(f.name, modulePath)) continue;
    const m = index.match(f.file);
    if (m) wanted.add(m);
  }
  const files = new Map<string, Buffer>([['go.mod', goMod]]);
  const skipped: string[] = [];
  let total = goMod.length;
  for (const rel of [...wanted].sort()) {
    if (rel === 'go.mod') continue;
    const size = statSync(join(root, rel)).size;
    if (size > limits.maxSourceFileBytes) {
      skipped.push(`${rel}: ${size} bytes, over the ${limits.maxSourceFileBytes} one file may have`);
      continue;
    }
    if (total + size > limits.maxSourceBytes || files.size >= limits.maxSourceFiles) {
      skipped.push(
        `${rel}: past the bound of the source set (${limits.maxSourceBytes} bytes, ${limits.maxSourceFiles} files)`,
      );
      continue;
    }
    files.set(rel, readFileSync(join(root, rel)));
    total += size;
  }
  const head = git(root, ['rev-parse', 'HEAD']);
  const status = head === null ? null : git(root, ['status', '--porcelain', '--untracked-files=no', '--', '.']);
  return {
    root,
    modulePath,
    revision: head?.trim() ?? '',
    dirty: status === null ? null : status.trim() !== '',
    files,
    skipped,
  };
}

/** The archive capture writes: the files and a stagediff-source.json describing them. */
export function sourcesArchive(c: CollectedSources): Buffer {
  const meta = Buffer.from(`${JSON.stringify({ module: c.modulePath, revision: c.revision, dirty: c.dirty })}\n`);
  return tarGz([[SOURCE_META, meta], ...[...c.files].sort((a, b) => (a[0] < b[0] ? -1 : 1))]);
}
