import type { Readable } from 'node:stream';

/**
 * The persistence contract of stagediff. Two implementations (SQLite, PostgreSQL; the latter with
 * blob bytes in the database or in an S3 bucket) pass the same contract suite
 * (server/test/store/contract.ts). All methods are async, even where SQLite is not.
 *
 * Rights are not enforced here: the store is trusted code. Routes check `verifyEditToken` before
 * any change; a read-only comparison (the seeded demo) simply has no token that matches.
 *
 * Every change to a comparison, its stages or its artifacts bumps `Comparison.revision` in the same
 * transaction. Derived data cached under a comparison scope is keyed by that revision, so no replica
 * can be served a result computed before a change.
 */

export type ArtifactKind = 'profile' | 'loadtest' | 'benchmark' | 'gctrace' | 'trace' | 'schedtrace' | 'metrics';
export const ARTIFACT_KINDS: readonly ArtifactKind[] = [
  'profile',
  'loadtest',
  'benchmark',
  'gctrace',
  'trace',
  'schedtrace',
  'metrics',
];

/** One optimization story. Timestamps are ISO-8601 strings (UTC). */
export interface Comparison {
  id: string;
  title: string;
  description: string;
  createdAt: string;
  updatedAt: string;
  /** True for comparisons nobody may edit through the API (the seeded demo). */
  readOnly: boolean;
  /** Starts at 1; +1 on every change to the comparison, its stages or its artifacts. */
  revision: number;
  /** Its edit-token holder chose to keep it: retention never removes it. */
  keep: boolean;
}

/** One stage of a story; `position` is 0-based and dense within its comparison. */
export interface Stage {
  id: string;
  comparisonId: string;
  position: number;
  name: string;
  note: string;
  createdAt: string;
  /** How the stage was captured: capture records (see model/capture.ts), oldest first; plain JSON. */
  captures: unknown[];
}

/** One uploaded file. `size` in bytes; `sha256` (lowercase hex) names its blob. */
export interface Artifact {
  id: string;
  comparisonId: string;
  stageId: string;
  kind: ArtifactKind;
  format: string;
  filename: string;
  size: number;
  sha256: string;
  /** Parser-produced summary, plain JSON. */
  summary: unknown;
  createdAt: string;
}

export interface StageWithArtifacts extends Stage {
  /** In upload order. */
  artifacts: Artifact[];
  /** The stage's source set, when it carries one (the key is absent otherwise). */
  sources?: StageSources;
}

/** One file of a source set: its module-relative path (`/`-separated) and its size in bytes. */
export interface SourceFileEntry {
  path: string;
  size: number;
}

/**
 * The source files stored with a stage: the bytes of every file, bundled in one blob (`sha256`, `size`
 * bytes as stored), described here. `bytes` is the files' total before bundling.
 */
export interface StageSources {
  comparisonId: string;
  stageId: string;
  /** The Go module path (`module` line of go.mod), or '' when unknown. */
  modulePath: string;
  /** `git rev-parse HEAD` of the tree the files came from, or '' when unknown. */
  revision: string;
  /** Whether the work tree had uncommitted changes; null when unknown. */
  dirty: boolean | null;
  /** Where the set came from, e.g. `capture` or an archive's name. */
  origin: string;
  files: number;
  bytes: number;
  sha256: string;
  size: number;
  createdAt: string;
}

/** A stored source set with its file list (sorted by path). */
export interface StageSourcesWithFiles extends StageSources {
  entries: SourceFileEntry[];
}

export type NewStageSources = Pick<
  StageSources,
  'comparisonId' | 'stageId' | 'modulePath' | 'revision' | 'dirty' | 'origin'
> & {
  entries: SourceFileEntry[];
  /** The bundle written with `putBlob`; its pin is released with the insert. */
  blob: BlobRef;
};

/** A comparison with its stages (by position) and their artifacts, read in one consistent snapshot. */
export interface ComparisonTree {
  comparison: Comparison;
  stages: StageWithArtifacts[];
}

export interface NewComparison {
  title: string;
  description?: string;
  /** Explicit id (URL-safe, ≤ 64 chars), e.g. `demo`. A taken id is a `conflict`. */
  id?: string;
  /** No edit token is issued; `verifyEditToken` is always false. */
  readOnly?: boolean;
}

export interface CreatedComparison {
  comparison: Comparison;
  /** The secret needed for changes, returned once; `null` for read-only comparisons. */
  editToken: string | null;
}

/**
 * A durable blob just written by `putBlob`, held by a pin so no clean-up removes it before an
 * artifact references it. Hand it to `addArtifact` (which releases the pin atomically with the
 * artifact insert) or to `releaseBlob`. Unreleased pins expire (see `sweep`).
 */
export interface BlobRef {
  sha256: string;
  size: number;
  pinId: string;
}

/** A stream of bytes, e.g. an HTTP upload or a file read stream. */
export type ByteSource = AsyncIterable<Buffer | Uint8Array>;

interface ArtifactFields {
  comparisonId: string;
  stageId: string;
  kind: ArtifactKind;
  format: string;
  filename: string;
  summary: unknown;
}

/**
 * Either reference a blob written earlier with `putBlob` (the usual path: write, parse, then add),
 * or stream the bytes here and add in one call. Either way the artifact row is committed only after
 * the blob is durable.
 */
export type NewArtifact =
  | (ArtifactFields & { blob: BlobRef })
  | (ArtifactFields & { src: ByteSource; maxBytes: number });

/**
 * Where a cache entry belongs:
 * - `comparison`: derived from a comparison's content at `revision`; only served while that is still
 *   the comparison's current revision, and dropped with the comparison;
 * - `blob`: derived from one blob's bytes alone (e.g. a parsed model); dropped with the blob;
 * - `global`: anything else; the caller owns its invalidation.
 */
export type CacheScope = { comparisonId: string; revision: number } | { sha256: string } | 'global';

export interface CacheKey {
  scope: CacheScope;
  key: string;
  /** Version of the code that derives the value; a bump makes older entries invisible. */
  modelVersion: number;
}

export interface SweepOptions {
  /** Clock used to decide what has expired (ms since epoch); tests pass a later time. */
  now?: number;
}

/** What a sweep removed. */
export interface SweepReport {
  expiredPins: number;
  orphanBlobs: number;
  /** Temp files (SQLite), or bucket objects of dead uploads and deleted blobs. */
  tempFiles: number;
  staleCacheEntries: number;
}

/**
 * Counts for /metrics and tests. `tempFiles`: SQLite's temp files of uploads in progress or left by a
 * crash; with blobs in a bucket, the objects being uploaded or waiting to be deleted; always 0 for
 * blobs in PostgreSQL (an unfinished upload is an uncommitted transaction).
 */
export interface StoreStats {
  schemaVersion: number;
  comparisons: number;
  stages: number;
  artifacts: number;
  blobs: number;
  blobBytes: number;
  pins: number;
  cacheEntries: number;
  /** Bytes of the cached values (bounded by the store's `maxCacheBytes`). */
  cacheBytes: number;
  /**
   * Blob payloads physically present (files, distinct chunk sets, objects in the bucket); equals
   * `blobs` when consistent. Null when not counted (`stats({ countObjects: false })` with a bucket,
   * where counting lists the whole prefix).
   */
  blobObjects: number | null;
  tempFiles: number;
}

/** Where blob bytes live: files under DATA_DIR (SQLite), chunks in PostgreSQL, or objects in an S3 bucket. */
export type BlobLocation = 'files' | 'database' | 's3';

export interface StatsOptions {
  /** Count the blob payloads (default true); with a bucket this lists the whole prefix. */
  countObjects?: boolean;
}

export interface Store {
  readonly dialect: 'sqlite' | 'postgres';
  readonly blobLocation: BlobLocation;

  // Comparisons
  createComparison(input: NewComparison): Promise<CreatedComparison>;
  getComparison(id: string): Promise<Comparison | null>;
  /**
   * The comparison, its stages and artifacts, from one snapshot; null if unknown. Reading a tree is
   * what every view does, so it also records the view for retention (at most once per VIEW_TOUCH_MS,
   * without a revision bump: a view changes nothing).
   */
  getComparisonTree(id: string): Promise<ComparisonTree | null>;
  /**
   * Records a view for retention without reading the tree (a view served from a cache): at most once per
   * VIEW_TOUCH_MS in the database, no revision bump. Best effort: never throws.
   */
  recordView(id: string): Promise<void>;
  /** Throws `not-found`. */
  updateComparison(id: string, patch: { title?: string; description?: string; keep?: boolean }): Promise<Comparison>;
  /** Removes stages, artifacts, cache entries, and blobs no other artifact references. False if unknown. */
  deleteComparison(id: string): Promise<boolean>;
  /** Constant-time; false for unknown ids and read-only comparisons. */
  verifyEditToken(id: string, token: string): Promise<boolean>;
  /**
   * Retention: deletes (as `deleteComparison` does, blobs included) every comparison neither changed
   * nor viewed since `unusedSince` (ms since epoch), except read-only ones and those marked `keep`.
   * Returns the ids removed.
   */
  expireComparisons(unusedSince: number): Promise<string[]>;

  // Stages (all scoped by comparison: a stage of another comparison is `not-found`)
  /** Appends at the end. Throws `not-found`. */
  createStage(comparisonId: string, input: { name: string; note?: string }): Promise<Stage>;
  getStage(comparisonId: string, stageId: string): Promise<Stage | null>;
  listStages(comparisonId: string): Promise<Stage[]>;
  updateStage(comparisonId: string, stageId: string, patch: { name?: string; note?: string }): Promise<Stage>;
  /**
   * Appends one capture record (plain JSON) to the stage's captures. Throws `not-found`, `invalid` (not an
   * object, or the stage's 100 records), and `StageCapturesTooLargeError` (`too-large`) when `maxStageBytes`
   * is given and the stage's records with this one would take more (checked in the appending transaction).
   */
  addStageCapture(
    comparisonId: string,
    stageId: string,
    record: unknown,
    options?: { maxStageBytes?: number },
  ): Promise<Stage>;
  /** Removes its artifacts (and blobs left unreferenced); later stages move up. Throws `not-found`. */
  deleteStage(comparisonId: string, stageId: string): Promise<void>;
  /** `stageIds` must list every stage of the comparison exactly once (else `invalid`). */
  reorderStages(comparisonId: string, stageIds: string[]): Promise<Stage[]>;

  // Blobs and artifacts
  /**
   * Streams `src` into a durable, content-addressed blob, hashing as it writes. Beyond `maxBytes`
   * throws `TooLargeError` and keeps nothing. Identical bytes are stored once.
   */
  putBlob(src: ByteSource, maxBytes: number): Promise<BlobRef>;
  /** Drops the pin of a blob that will not be used (e.g. the file failed to parse); removes it if unreferenced. */
  releaseBlob(ref: BlobRef): Promise<void>;
  /** Throws `not-found` (comparison/stage), `invalid`, `too-large`, or `blob-missing` (pin expired and swept). */
  addArtifact(input: NewArtifact): Promise<Artifact>;
  getArtifact(id: string): Promise<Artifact | null>;
  listArtifacts(comparisonId: string, stageId: string): Promise<Artifact[]>;
  /** Throws `not-found`. Removes the blob if no other artifact references it. */
  deleteArtifact(comparisonId: string, artifactId: string): Promise<void>;
  hasBlob(sha256: string): Promise<boolean>;

  // Sources (one set per stage)
  /**
   * Stores a stage's source set, replacing the one it had in the same transaction (a reader sees the
   * old set or the new one, never a mix). Throws `not-found`, `invalid`, `blob-missing`.
   */
  putStageSources(input: NewStageSources): Promise<StageSources>;
  getStageSources(comparisonId: string, stageId: string): Promise<StageSourcesWithFiles | null>;
  /** False when the stage had none. Throws `not-found` for an unknown stage. */
  deleteStageSources(comparisonId: string, stageId: string): Promise<boolean>;
  /** Bytes of every stored blob (identical bytes counted once): what the uploads take, for the storage bound. */
  storedBytes(): Promise<number>;
  readBlob(sha256: string): Promise<Buffer | null>;
  openBlobStream(sha256: string): Promise<Readable | null>;

  // Derived-data cache, bounded in bytes (least recently served entries are evicted first)
  /** A hit also marks the entry as recently used (at most once a minute, so reads stay reads). */
  cacheGet(key: CacheKey): Promise<Buffer | null>;
  /**
   * Silently skipped when a comparison scope is no longer current (changed or deleted), and for a
   * value larger than a quarter of the bound. May evict least recently used entries.
   */
  cachePut(key: CacheKey, value: Buffer | string): Promise<void>;

  // Maintenance
  /** Removes expired pins, unreferenced blobs, leftover temp files, and cache entries of old revisions. */
  sweep(options?: SweepOptions): Promise<SweepReport>;
  stats(options?: StatsOptions): Promise<StoreStats>;
  /** Throws unless the database and the blob store answer now (for /healthz). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** How long a `putBlob` result stays protected before an artifact must reference it. */
export const PIN_TTL_MS = 15 * 60 * 1000;

/** A comparison's last view is recorded at most this often (so reads rarely write). */
export const VIEW_TOUCH_MS = 60 * 60 * 1000;
