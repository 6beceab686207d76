import type { Frame, Profile } from '../model/profile.ts';
import { type FrameKeys, functionKeys } from './frame-keys.ts';

/**
 * What the rows of a table and the nodes of a tree stand for, as `go tool pprof -functions|-lines|-files`
 * aggregate: a function (the default), a source line of a function, or a source file.
 */
export type Granularity = 'functions' | 'lines' | 'files';

/**
 * Go's path.Clean (what pprof applies to every file name with filepath.Clean on a Unix host): the
 * shortest equivalent path, with "." and ".." elements resolved lexically and slashes collapsed.
 */
export function cleanPath(path: string): string {
  if (path === '') return '.';
  const rooted = path.startsWith('/');
  const out: string[] = [];
  let dotdot = 0; // leading ".." elements kept in a relative path
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length > dotdot) out.pop();
      else if (!rooted) {
        out.push('..');
        dotdot++;
      }
      continue;
    }
    out.push(part);
  }
  const s = out.join('/');
  if (rooted) return `/${s}`;
  return s === '' ? '.' : s;
}

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

/** A frame's file as pprof names it: cleaned, or '' when the function has no file. */
function fileOf(f: Frame): string {
  return f.file === '' ? '' : cleanPath(f.file);
}

/**
 * A file-granularity node is what pprof keys it by: the file, the start line of the function (pprof
 * clears the name but keeps the start line, so a file shows as one node per function starting in it)
 * and the binary the code lies in, by its full path (a file compiled into two programs of a merged
 * profile is two nodes; so is a file of two builds run from different paths, as the base and the
 * target of every `go test -cpuprofile` are). The label says both where pprof prints only the file:
 * `encode.go (function at line 738) [/tmp/go-build123/b001/httpserver.test]`, so that rows pprof
 * prints alike stay apart.
 */
export function fileNodeSuffix(startLine: number | undefined, mapping: string | undefined): string {
  return `${startLine ? ` (function at line ${startLine})` : ''}${mapping ? ` [${mapping}]` : ''}`;
}

/** The label of a frame at a granularity: exactly the name `go tool pprof -top` prints for its node. */
export function frameLabel(f: Frame, g: Granularity): string {
  if (g === 'functions' || f.standIn === 'no-function') return f.name;
  const name = f.standIn === 'no-name' ? '' : f.name;
  const file = fileOf(f);
  if (g === 'lines') {
    if (f.line !== 0) return name ? `${name} ${file}:${f.line}` : `${file}:${f.line}`;
    if (file !== '') return name ? `${name} ${file}` : file;
    // No line, no file: the function's name, or its binary's when it has none (already in f.name).
    return f.name;
  }
  // files: the name is cleared, so a node without a file is named after its binary (by its base
  // name, as pprof prints it; the full path follows when it is longer, as pprof keys the node by it).
  if (file === '') {
    const bin = f.mapping ? `[${basename(f.mapping)}]` : '<unknown>';
    const full = f.mapping && f.mapping !== basename(f.mapping) ? ` [${f.mapping}]` : '';
    return `${bin}${fileNodeSuffix(f.startLine, undefined)}${full}`;
  }
  return `${file}${fileNodeSuffix(f.startLine, f.mapping)}`;
}

const cache = new WeakMap<Profile, Map<Granularity, FrameKeys>>();

/** The frame keys of a profile at a granularity (cached per profile). */
export function granularityKeys(p: Profile, g: Granularity = 'functions'): FrameKeys {
  if (g === 'functions') return functionKeys(p);
  let byG = cache.get(p);
  if (!byG) {
    byG = new Map();
    cache.set(p, byG);
  }
  const hit = byG.get(g);
  if (hit) return hit;
  const ids = new Map<string, number>();
  const keys: string[] = [];
  const frameKey = new Uint32Array(p.frames.length);
  for (let i = 0; i < p.frames.length; i++) {
    const label = frameLabel(p.frames[i]!, g);
    let id = ids.get(label);
    if (id === undefined) {
      id = keys.length;
      keys.push(label);
      ids.set(label, id);
    }
    frameKey[i] = id;
  }
  const k = { keys, frameKey };
  byG.set(g, k);
  return k;
}

/** `granularityKeys` as the diff takes it (one function per profile). */
export function keysOf(g: Granularity): (p: Profile) => FrameKeys {
  return (p) => granularityKeys(p, g);
}
