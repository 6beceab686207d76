/**
 * Module files fetched from a Go module proxy, as the source view asks for them, and their cache in the
 * store. A fetched module's kept files are stored in the shared derived-data cache (scope `global`,
 * bounded by CACHE_MAX_BYTES with the views, least recently used evicted first): a few source bundles
 * (the stage sources' format) of about CHUNK_BYTES each, split by path, and a small index naming each
 * bundle's first and last path. A view then reads the index and one bundle, never the whole module, and
 * needs no network while they are cached (across restarts and replicas: the cache is in the store).
 */
import type { CacheKey, Store } from '../store/index.ts';
import { decodeBundle, encodeBundle } from '../sources/bundle.ts';
import type { ModuleFile } from '../sources/module-path.ts';

/**
 * A module file's text, or why there is none; `transient` failures may succeed later (a timeout, a 5xx).
 * `problem` is for the operator (it may name the proxy and quote its answer); `reason` is what a visitor
 * is told: "source unavailable" and why, naming only the module version the profile named, never the
 * proxy, its address or its answer.
 */
export type ModuleFileAnswer =
  | { ok: true; text: string; from: 'cache' | 'proxy' }
  | { ok: false; problem: string; reason: string; transient: boolean };

/** Where the source view gets module files: the proxy client (in the server) or a worker's channel to it. */
export interface ModuleFiles {
  /**
   * The file, waiting for a fetch under way `waitMs` at most (the proxy client's default:
   * SOURCE_GOPROXY_WAIT_MS); past it, "still being fetched".
   */
  file(req: ModuleFile, waitMs?: number): Promise<ModuleFileAnswer>;
  /** The fetch of the file's module version under way, or null (it is cached, failed, or not asked for). */
  fetching?(req: ModuleFile): Promise<unknown> | null;
}

/** Raw bytes of the files of one cached bundle (a file larger than this is a bundle of its own). */
export const CHUNK_BYTES = 2 * 1024 * 1024;
/** Bumped when the cached layout changes: older entries are then never read. */
const CACHE_VERSION = 2;

interface ModuleIndex {
  /** The zip's h1 hash (dirhash.ts), null when not computed (the toolchain) or not computable. */
  h1: string | null;
  files: number;
  bytes: number;
  chunks: { first: string; last: string; files: number; bytes: number }[];
}

function indexKey(module: string, version: string): CacheKey {
  return { scope: 'global', key: `goproxy/${module}@${version}`, modelVersion: CACHE_VERSION };
}

function chunkKey(module: string, version: string, i: number): CacheKey {
  return { scope: 'global', key: `goproxy/${module}@${version}#${i}`, modelVersion: CACHE_VERSION };
}

/**
 * A module file from the cache: its text, a definite "not in the module", or null when the module (or
 * the bundle holding the file) is not cached.
 */
export async function cachedModuleFile(store: Store, req: ModuleFile): Promise<ModuleFileAnswer | null> {
  const raw = await store.cacheGet(indexKey(req.module, req.version));
  if (!raw) return null;
  let index: ModuleIndex;
  try {
    index = JSON.parse(raw.toString('utf8')) as ModuleIndex;
  } catch {
    return null;
  }
  if (req.sum !== undefined && index.h1 !== req.sum) return sumMismatch(req, index.h1);
  const i = index.chunks.findIndex((c) => c.first <= req.path && req.path <= c.last);
  if (i < 0) return notInModule(req);
  const chunk = index.chunks[i]!;
  const blob = await store.cacheGet(chunkKey(req.module, req.version, i));
  if (!blob) return null;
  let files: Map<string, Buffer>;
  try {
    files = await decodeBundle(blob, chunk.bytes + 1024 + chunk.files * 4200);
  } catch {
    return null;
  }
  const b = files.get(req.path);
  return b ? { ok: true, text: b.toString('utf8'), from: 'cache' } : notInModule(req);
}

export function notInModule(req: ModuleFile): ModuleFileAnswer {
  return {
    ok: false,
    problem: `${req.module}@${req.version} has no source file ${req.path}`,
    reason: `source unavailable: ${req.module}@${req.version} has no source file ${req.path}`,
    transient: false,
  };
}

/** The module's zip is not the one the stage's go.sum records: its text is not shown. */
export function sumMismatch(req: ModuleFile, h1: string | null): ModuleFileAnswer {
  return {
    ok: false,
    problem: `${req.module}@${req.version}: the zip's hash is ${h1 ?? 'not computable'}, not the ${req.sum} the stage's go.sum records`,
    reason: `source unavailable: the zip of ${req.module}@${req.version} does not match the hash in the stage's go.sum`,
    transient: false,
  };
}

/**
 * Keeps a fetched module's files in the cache: the bundles first, the index last, so a reader that
 * finds the index finds its bundles (unless evicted since: then it is a miss and the module is fetched
 * again). Best effort, like every cache write: a failure only costs a later fetch.
 */
export async function keepModule(
  store: Store,
  module: string,
  version: string,
  files: Map<string, Buffer>,
  h1: string | null,
): Promise<void> {
  const paths = [...files.keys()].sort();
  const index: ModuleIndex = { h1, files: paths.length, bytes: 0, chunks: [] };
  let start = 0;
  while (start < paths.length) {
    let end = start;
    let bytes = 0;
    while (end < paths.length && (end === start || bytes + files.get(paths[end]!)!.length <= CHUNK_BYTES)) {
      bytes += files.get(paths[end]!)!.length;
      end++;
    }
    const part = new Map(paths.slice(start, end).map((p) => [p, files.get(p)!]));
    const bundle = await encodeBundle(part);
    await store.cachePut(chunkKey(module, version, index.chunks.length), bundle.bytes);
    index.chunks.push({ first: paths[start]!, last: paths[end - 1]!, files: end - start, bytes });
    index.bytes += bytes;
    start = end;
  }
  await store.cachePut(indexKey(module, version), JSON.stringify(index));
}
