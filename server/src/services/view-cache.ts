import { promisify } from 'node:util';
import { brotliCompress, constants, gunzip, gzip } from 'node:zlib';
import type { CacheKey, Store } from '../store/index.ts';
import { ServiceError, type ServiceErrorCode } from './errors.ts';
import type { Metrics } from './metrics.ts';
import type { ResultMemo } from './result-memo.ts';

const brotli = promisify(brotliCompress);
const gz = promisify(gzip);
const gunz = promisify(gunzip);

/** How a cached answer is kept and sent: compressed once when stored, or as is (PNG is compressed already). */
export type Encoding = 'br' | 'gzip' | 'identity';

/** A computed answer in the encodings it is kept in. */
export type StoredView = Partial<Record<Encoding, Buffer>>;

/**
 * The encodings a client accepts, best first (br, then gzip), from its Accept-Encoding; identity last
 * unless refused. No header: identity only (what a client that never asked for compression reads).
 */
export function acceptedEncodings(header: string | string[] | undefined): Encoding[] {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  const q = new Map<string, number>();
  for (const part of text.split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qp = params.map((p) => /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p)).find(Boolean);
    q.set(name, qp ? Number(qp[1]) : 1);
  }
  const star = q.get('*');
  const weight = (e: string) => q.get(e) ?? (e === 'identity' ? (star === 0 ? 0 : 1) : (star ?? 0));
  const out: Encoding[] = [];
  for (const e of ['br', 'gzip'] as const) if (weight(e) > 0) out.push(e);
  out.sort((a, b) => weight(b) - weight(a));
  if (weight('identity') > 0 || out.length === 0) out.push('identity');
  return out;
}

/** A failure worth remembering: the same request fails the same way until the comparison changes. */
interface RememberedFailure {
  code: ServiceErrorCode;
  message: string;
  detail: ServiceError['detail'];
  /** The bounds it failed under: a failure under other bounds (the operator raised them) is not replayed. */
  bounds: string;
}

/**
 * Failures of a view that another try would repeat: the analysis ran out of time or memory, the
 * worker died, or the request names something the comparison lacks. A full queue or a shutdown is
 * a moment, not a property of the request, and is never remembered.
 */
const REMEMBERED: ReadonlySet<ServiceErrorCode> = new Set<ServiceErrorCode>([
  'analysis-timeout',
  'too-large-to-analyse',
  'analysis-failed',
  'not-found',
  'ambiguous-stage',
  'no-profile',
  'no-benchmark',
  'no-requests',
  'invalid-filter',
  'invalid-request',
]);

/**
 * The shared cache of computed views as the server sends them. A result is compressed once, when it
 * is stored (brotli and gzip, each its own entry), and every hit sends the stored bytes with their
 * Content-Encoding; a client that accepts neither gets the gzip entry inflated. Entries live in the
 * store (shared by replicas, keyed by the comparison's revision) and, recently used, in this
 * process's memo. Writes are best effort: a full disk or a failing database costs the next request a
 * recomputation, never this answer (each failed write is counted).
 */
export class ViewCache {
  constructor(
    private readonly store: Store,
    private readonly memo: ResultMemo,
    private readonly metrics: Metrics,
    /** The analysis bounds in force (part of a remembered failure). */
    private readonly bounds: string,
  ) {}

  /** The stored answer in the first of `accepted` it is kept in (null: not cached). */
  async get(
    key: CacheKey,
    accepted: Encoding[],
    compressible: boolean,
  ): Promise<{ body: Buffer; encoding: Encoding } | null> {
    if (!compressible) {
      const body = await this.entry(key, 'identity');
      return body ? { body, encoding: 'identity' } : null;
    }
    for (const e of accepted) {
      if (e === 'identity') continue;
      const body = await this.entry(key, e);
      if (body) return { body, encoding: e };
    }
    // A client that takes neither (old tools, curl without --compressed) gets the gzip entry inflated.
    if (accepted.includes('br') || accepted.includes('gzip')) return null;
    const gzipped = await this.entry(key, 'gzip');
    return gzipped ? { body: await gunz(gzipped), encoding: 'identity' } : null;
  }

  /**
   * Takes in a view that `keepView` made ready (in a worker, which also wrote it to the store): its
   * encodings go to the memo, and the cache writes that failed are counted.
   */
  kept(key: CacheKey, view: KeptView): void {
    if (view.kept !== false)
      for (const [e, bytes] of Object.entries(view.stored) as [Encoding, Buffer][])
        this.memo.set(memoKey(key, e), bytes);
    for (const code of view.writeFailures) this.metrics.inc('stagediff_result_cache_write_failures_total', { code });
  }

  /** A remembered failure of this view at this revision (under the same bounds), else null. */
  async failure(key: CacheKey): Promise<ServiceError | null> {
    const bytes = await this.entry(key, 'failed');
    if (!bytes) return null;
    try {
      const f = JSON.parse(bytes.toString('utf8')) as RememberedFailure;
      if (f.bounds !== this.bounds) return null;
      this.metrics.inc('stagediff_analysis_failures_replayed_total', { code: f.code });
      return new ServiceError(
        f.code,
        `${f.message} (remembered: this view failed at this revision of the comparison and is not computed again until the comparison changes)`,
        f.detail,
      );
    } catch {
      return null;
    }
  }

  /** Remembers a failure when it would repeat (see REMEMBERED); best effort, like every cache write. */
  async rememberFailure(key: CacheKey, e: unknown): Promise<void> {
    if (!(e instanceof ServiceError) || !REMEMBERED.has(e.code)) return;
    const f: RememberedFailure = { code: e.code, message: e.message, detail: e.detail, bounds: this.bounds };
    const bytes = Buffer.from(JSON.stringify(f));
    this.memo.set(memoKey(key, 'failed'), bytes);
    await this.store.cachePut(entryKey(key, 'failed'), bytes).catch((err: unknown) => {
      this.metrics.inc('stagediff_result_cache_write_failures_total', {
        code: String((err as { code?: unknown }).code ?? 'error'),
      });
    });
  }

  private async entry(key: CacheKey, variant: Encoding | 'failed'): Promise<Buffer | null> {
    const m = this.memo.get(memoKey(key, variant));
    if (m) return m;
    const stored = await this.store.cacheGet(entryKey(key, variant));
    if (stored) this.memo.set(memoKey(key, variant), stored);
    return stored;
  }
}

/** A computed view as kept: its stored encodings, the answer itself, and the cache writes that failed (error codes). */
export interface KeptView {
  stored: StoredView;
  body: Buffer;
  writeFailures: string[];
  /** False for an answer served but not kept (see Unkept): the next request computes it again. */
  kept?: boolean;
  /** What the view cost beyond the cost its client was charged on admission (see Costly). */
  extraCost?: number;
}

/**
 * An operation's answer that is served but not kept in the cache: part of it is missing for a reason
 * that may pass (the module proxy failed), and a kept answer would stay so until the comparison changes.
 */
export class Unkept {
  constructor(readonly text: string) {}
}

/**
 * An operation's answer whose work is known only once done (the source view's, by the size of the
 * files it read and the lines it aligned): `extraCost` beyond the view's admission cost is charged to
 * its client's budget after (FairShare's Admission.charge).
 */
export class Costly {
  constructor(
    readonly result: string | Unkept,
    readonly extraCost: number,
  ) {}
}

/** How a view is to be kept: where in the cache, whether it is compressed, how its text result becomes bytes. */
export interface KeepSpec {
  key: CacheKey;
  compressible: boolean;
  /** The operation's text result is UTF-8, or base64 of binary (PNG). */
  text: 'utf8' | 'base64';
}

/**
 * Makes a computed view ready to serve and keeps it in the shared cache: the bytes, compressed once
 * (brotli and gzip) when compressible, each written to the store as its own entry. Runs where the view
 * was computed (an analysis worker), so neither the compression nor the database write (an fsync on
 * SQLite) holds the server's event loop. A write that fails (a full disk) is reported, never thrown:
 * the answer is served all the same.
 */
export async function keepView(store: Store, answer: string | Unkept | Costly, spec: KeepSpec): Promise<KeptView> {
  const extraCost = answer instanceof Costly && answer.extraCost > 0 ? answer.extraCost : 0;
  const kept = await keepResult(store, answer instanceof Costly ? answer.result : answer, spec);
  return extraCost > 0 ? { ...kept, extraCost } : kept;
}

async function keepResult(store: Store, result: string | Unkept, spec: KeepSpec): Promise<KeptView> {
  const unkept = result instanceof Unkept;
  const body = Buffer.from(unkept ? result.text : result, spec.text);
  const stored: StoredView = spec.compressible ? await compress(body) : { identity: body };
  const writeFailures: string[] = [];
  if (unkept) return { stored, body, writeFailures, kept: false };
  for (const [e, bytes] of Object.entries(stored) as [Encoding, Buffer][]) {
    try {
      await store.cachePut(entryKey(spec.key, e), bytes);
    } catch (err) {
      writeFailures.push(String((err as { code?: unknown }).code ?? 'error'));
    }
  }
  return { stored, body, writeFailures };
}

/** The store entry of one encoding of a view (and of its remembered failure). */
function entryKey(key: CacheKey, variant: Encoding | 'failed'): CacheKey {
  return { ...key, key: `${key.key}#${variant}` };
}

function memoKey(key: CacheKey, variant: Encoding | 'failed'): string {
  const s = key.scope;
  const scope = s === 'global' ? 'g' : 'comparisonId' in s ? `${s.comparisonId}|${s.revision}` : s.sha256;
  return `${scope}|${key.modelVersion}|${key.key}#${variant}`;
}

/**
 * Brotli and gzip of one answer, on libuv's thread pool. Brotli's quality falls with the size so a
 * multi-megabyte view is stored in a fraction of a second; small answers get the best ratio.
 */
export async function compress(body: Buffer): Promise<StoredView> {
  const quality = body.length <= 256 * 1024 ? 9 : body.length <= 4 * 1024 * 1024 ? 6 : 4;
  const [br, gzipped] = await Promise.all([
    brotli(body, {
      params: {
        [constants.BROTLI_PARAM_QUALITY]: quality,
        [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
      },
    }),
    gz(body, { level: 6 }),
  ]);
  return { br, gzip: gzipped };
}
