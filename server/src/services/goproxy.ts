/**
 * The module proxy client (SOURCE_GOPROXY): fetches `<proxy>/<escaped module>/@v/<escaped version>.zip`
 * for a file the source view needs and the stage's own sources lack, reads it with the source archive
 * reader (every entry's path and type checked, only source files inflated, on the thread pool), keeps
 * its source files in the store's cache (module-sources.ts) and answers the file.
 *
 * One per server process, shared by every view (analysis workers ask it over their channel), and
 * bounded like the rest of a shared server: a deadline per fetch (SOURCE_GOPROXY_TIMEOUT_MS, the
 * answer and its body), a size cap per zip (SOURCE_GOPROXY_MAX_ZIP_BYTES: a larger Content-Length is
 * refused unread, a longer body is cut off), a cap on the sources kept (SOURCE_GOPROXY_MAX_MODULE_BYTES,
 * SOURCE_GOPROXY_MAX_MODULE_FILES), at most SOURCE_GOPROXY_CONCURRENCY fetches at once (the rest wait
 * their turn), one fetch per module version however many views ask at once, and each failure
 * remembered for SOURCE_GOPROXY_RETRY_SECONDS (answered again without asking). A failure of any kind
 * is an answer naming the module and the problem, never an exception: it costs that view its text.
 */
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.ts';
import { readModuleZip, SourceArchiveError } from '../sources/archive.ts';
import { DirHashError } from '../sources/dirhash.ts';
import {
  isModulePath,
  isModuleVersion,
  moduleZipPath,
  type ModuleFile,
  TOOLCHAIN_MODULE,
} from '../sources/module-path.ts';
import { isSourceFile } from '../sources/source-set.ts';
import type { Store } from '../store/index.ts';
import { TooLargeError } from '../store/index.ts';
import type { Metrics } from './metrics.ts';
import {
  cachedModuleFile,
  keepModule,
  type ModuleFileAnswer,
  type ModuleFiles,
  notInModule,
  sumMismatch,
} from './module-sources.ts';
import type { Spool, Spooled } from './spool.ts';
import { HashUnfinished, hashModuleZip } from './zip-hash.ts';

/** Failures remembered at most (the oldest is forgotten first). */
const MAX_REMEMBERED = 1000;

/** What a visitor is told of a failure: "source unavailable" and the kind of failure, never the proxy's words. */
type Why = 'absent' | 'late' | 'failed' | 'refused';

function visitorReason(why: Why, id: string): string {
  switch (why) {
    case 'absent':
      return `source unavailable: the module proxy has no ${id}`;
    case 'late':
      return `source unavailable: the module proxy did not send ${id} in time (asked again later)`;
    case 'failed':
      return `source unavailable: ${id} could not be fetched (asked again later)`;
    case 'refused':
      return `source unavailable: the zip of ${id} is refused by the server's bounds on module zips`;
  }
}

class Problem extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    readonly why: Why = transient ? 'failed' : 'refused',
  ) {
    super(message);
  }
}

/** Waits for one of `n` slots. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(n: number) {
    this.free = n;
  }
  async acquire(): Promise<() => void> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((r) => this.waiting.push(r));
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
  }
}

type Fetched =
  | { files: Map<string, Buffer>; h1: string | null }
  | { problem: string; reason: string; transient: boolean };

/** Which files of a module are kept: source files, never tests or test data (a profile never names them). */
export function keptModuleFile(module: string, path: string): boolean {
  if (!isSourceFile(path) || path.endsWith('_test.go')) return false;
  if (path.split('/').includes('testdata')) return false;
  // The toolchain: its standard library only (GOROOT/src without the go command's own sources).
  if (module === TOOLCHAIN_MODULE) return path.startsWith('src/') && !path.startsWith('src/cmd/');
  return true;
}

export interface GoProxyOptions {
  config: Pick<
    Config,
    | 'sourceGoproxy'
    | 'sourceGoproxyTimeoutMs'
    | 'sourceGoproxyMaxZipBytes'
    | 'sourceGoproxyMaxModuleBytes'
    | 'sourceGoproxyMaxModuleFiles'
    | 'sourceGoproxyConcurrency'
    | 'sourceGoproxyRetrySeconds'
    | 'sourceGoproxyWaitMs'
    | 'maxSourceFileBytes'
  >;
  store: Store;
  spool: Spool;
  metrics: Metrics;
  /** The clock failures are remembered by (tests move it). */
  now?: () => number;
}

export class GoProxy implements ModuleFiles {
  private readonly base: string;
  private readonly authorization: string | null = null;
  /** The proxy as messages name it: without any user name or password in its URL. */
  readonly name: string;
  private readonly slots: Slots;
  private readonly flights = new Map<string, Promise<Fetched>>();
  private readonly failures = new Map<string, { problem: string; reason: string; transient: boolean; until: number }>();
  private readonly now: () => number;
  /** Fetches started (tests and /metrics read it). */
  fetches = 0;
  /** Where a failure's full text goes (the server's log): visitors are told only its kind. */
  onProblem: ((id: string, problem: string) => void) | null = null;

  constructor(private readonly o: GoProxyOptions) {
    if (!o.config.sourceGoproxy) throw new Error('GoProxy needs SOURCE_GOPROXY');
    // fetch takes no credentials in a URL: a user and password there are sent as Basic authorization.
    const u = new URL(o.config.sourceGoproxy);
    if (u.username || u.password)
      this.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
    u.username = '';
    u.password = '';
    this.name = u.href.replace(/\/+$/, '');
    this.base = this.name;
    this.slots = new Slots(o.config.sourceGoproxyConcurrency);
    this.now = o.now ?? Date.now;
  }

  async file(req: ModuleFile, waitMs = this.o.config.sourceGoproxyWaitMs): Promise<ModuleFileAnswer> {
    if (!isModulePath(req.module) || !isModuleVersion(req.version))
      return {
        ok: false,
        problem: `${req.module}@${req.version} is not a module version to fetch`,
        reason: 'source unavailable: not a module version to fetch',
        transient: false,
      };
    const hit = await cachedModuleFile(this.o.store, req).catch(() => null);
    if (hit) {
      this.o.metrics.inc('stagediff_goproxy_files_total', { from: 'cache' });
      return hit;
    }
    const id = `${req.module}@${req.version}`;
    const failed = this.failures.get(id);
    if (failed && failed.until > this.now()) {
      this.o.metrics.inc('stagediff_goproxy_files_total', { from: 'remembered-failure' });
      return {
        ok: false,
        problem: `${failed.problem} (remembered: not asked again before ${new Date(failed.until).toISOString()}, SOURCE_GOPROXY_RETRY_SECONDS)`,
        reason: failed.reason,
        transient: failed.transient,
      };
    }
    let flight = this.flights.get(id);
    if (!flight) {
      flight = this.fetchModule(req.module, req.version).finally(() => this.flights.delete(id));
      this.flights.set(id, flight);
    }
    // The view waits SOURCE_GOPROXY_WAIT_MS at most (a view on a worker waits outside it, in the pool:
    // AnalysisPool.run); the fetch goes on under its own deadline and lands in the cache for the view
    // asked again.
    let timer: NodeJS.Timeout | undefined;
    const got = await Promise.race([
      flight,
      new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), waitMs);
      }),
    ]).finally(() => clearTimeout(timer));
    if (got === null) {
      this.o.metrics.inc('stagediff_goproxy_files_total', { from: 'still-fetching' });
      return {
        ok: false,
        problem: `${id} is still being fetched after ${waitMs} ms (SOURCE_GOPROXY_WAIT_MS)`,
        reason: `source unavailable: ${id} is being fetched; ask again in a few seconds`,
        transient: true,
      };
    }
    if ('problem' in got) return { ok: false, problem: got.problem, reason: got.reason, transient: got.transient };
    if (req.sum !== undefined && got.h1 !== req.sum) {
      this.o.metrics.inc('stagediff_goproxy_files_total', { from: 'sum-mismatch' });
      return sumMismatch(req, got.h1);
    }
    this.o.metrics.inc('stagediff_goproxy_files_total', { from: 'proxy' });
    const b = got.files.get(req.path);
    return b ? { ok: true, text: b.toString('utf8'), from: 'proxy' } : notInModule(req);
  }

  fetching(req: ModuleFile): Promise<unknown> | null {
    return this.flights.get(`${req.module}@${req.version}`) ?? null;
  }

  private async fetchModule(module: string, version: string): Promise<Fetched> {
    const release = await this.slots.acquire();
    const id = `${module}@${version}`;
    let spooled: Spooled | null = null;
    try {
      this.fetches++;
      const url = `${this.base}${moduleZipPath(module, version)}`;
      let file: string;
      if (url.startsWith('file:')) file = await this.local(url, id);
      else {
        spooled = await this.download(url, id);
        file = spooled.path;
      }
      const c = this.o.config;
      let files: Map<string, Buffer>;
      try {
        ({ files } = await readModuleZip(
          `${id}.zip from ${this.name}`,
          file,
          {
            maxSourceBytes: c.sourceGoproxyMaxModuleBytes,
            maxSourceFileBytes: c.maxSourceFileBytes,
            maxSourceFiles: c.sourceGoproxyMaxModuleFiles,
            maxSourceArchiveEntries: 4 * c.sourceGoproxyMaxModuleFiles,
          },
          `${id}/`,
          (path) => keptModuleFile(module, path),
        ));
      } catch (e) {
        if (e instanceof SourceArchiveError)
          throw new Problem(
            e.message
              .replace(/^source archive /, 'module zip ')
              .replace('(MAX_SOURCE_BYTES)', '(SOURCE_GOPROXY_MAX_MODULE_BYTES)')
              .replace('(MAX_SOURCE_FILES)', '(SOURCE_GOPROXY_MAX_MODULE_FILES)')
              .replace('(MAX_SOURCE_ARCHIVE_ENTRIES)', '(4 × SOURCE_GOPROXY_MAX_MODULE_FILES)'),
            false,
          );
        throw e;
      }
      // go.sum's hash of the zip (every file, not only the kept ones), for stages whose go.sum names
      // the module; the toolchain is never in a go.sum (and its zip is large): not hashed. On a thread
      // of its own, under the fetch's deadline: never on the event loop every visitor shares.
      let h1: string | null = null;
      if (module !== TOOLCHAIN_MODULE)
        h1 = await hashModuleZip(file, 4 * c.sourceGoproxyMaxModuleBytes, c.sourceGoproxyTimeoutMs).catch(
          (e: unknown) => {
            if (e instanceof DirHashError) return null;
            // Not a verdict on the zip: nothing is kept, and the module is fetched again later.
            if (e instanceof HashUnfinished) throw new Problem(`hashing the zip of ${id}: ${e.message}`, true);
            throw e;
          },
        );
      await keepModule(this.o.store, module, version, files, h1).catch(() => undefined);
      this.o.metrics.inc('stagediff_goproxy_fetches_total', { outcome: 'ok' });
      return { files, h1 };
    } catch (e) {
      const p = e instanceof Problem ? e : new Problem(`fetching ${id} failed: ${(e as Error).message}`, true);
      this.o.metrics.inc('stagediff_goproxy_fetches_total', { outcome: p.transient ? 'transient' : 'refused' });
      this.remember(id, p);
      this.onProblem?.(id, p.message);
      return { problem: p.message, reason: visitorReason(p.why, id), transient: p.transient };
    } finally {
      if (spooled) await this.o.spool.discard(spooled);
      release();
    }
  }

  private remember(id: string, p: Problem): void {
    const ttl = this.o.config.sourceGoproxyRetrySeconds * 1000;
    if (ttl <= 0) return;
    this.failures.delete(id);
    this.failures.set(id, {
      problem: p.message,
      reason: visitorReason(p.why, id),
      transient: p.transient,
      until: this.now() + ttl,
    });
    while (this.failures.size > MAX_REMEMBERED) this.failures.delete(this.failures.keys().next().value!);
  }

  /** A file:// proxy's zip: read where it lies, after checking it is a file under the size cap. */
  private async local(url: string, id: string): Promise<string> {
    const path = fileURLToPath(url);
    let size: number;
    try {
      const s = await stat(path);
      if (!s.isFile()) throw new Problem(`${this.name} has no ${id} (${path} is not a file)`, false, 'absent');
      size = s.size;
    } catch (e) {
      if (e instanceof Problem) throw e;
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new Problem(`${this.name} has no ${id}`, false, 'absent');
      throw new Problem(`${this.name}: cannot read the zip of ${id}: ${code ?? (e as Error).message}`, true);
    }
    this.checkSize(id, size);
    return path;
  }

  private checkSize(id: string, size: number): void {
    const max = this.o.config.sourceGoproxyMaxZipBytes;
    if (size > max)
      throw new Problem(
        `the zip of ${id} is ${size} bytes, over the ${max} a module zip may have (SOURCE_GOPROXY_MAX_ZIP_BYTES)`,
        false,
      );
  }

  /** An http(s) proxy's zip, spooled to disk under the deadline and the size cap. */
  private async download(url: string, id: string): Promise<Spooled> {
    const timeoutMs = this.o.config.sourceGoproxyTimeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    const late = () =>
      new Problem(
        `${this.name} did not send the zip of ${id} within ${timeoutMs} ms (SOURCE_GOPROXY_TIMEOUT_MS)`,
        true,
        'late',
      );
    let res: Response;
    try {
      res = await fetch(url, {
        signal,
        redirect: 'follow',
        headers: { accept: 'application/zip', ...(this.authorization ? { authorization: this.authorization } : {}) },
      });
    } catch (e) {
      if (signal.aborted) throw late();
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new Problem(
        `${this.name} cannot be reached for ${id}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
        true,
      );
    }
    if (res.status !== 200) {
      const said = await this.snippet(res);
      if (res.status === 404 || res.status === 410)
        throw new Problem(`${this.name} has no ${id} (HTTP ${res.status}${said ? `: ${said}` : ''})`, false, 'absent');
      throw new Problem(`${this.name} answered HTTP ${res.status} for ${id}${said ? `: ${said}` : ''}`, true);
    }
    const declared = res.headers.get('content-length');
    if (declared !== null && /^\d+$/.test(declared)) {
      const n = Number(declared);
      if (n > this.o.config.sourceGoproxyMaxZipBytes) {
        await res.body?.cancel().catch(() => undefined);
        this.checkSize(id, n);
      }
    }
    if (!res.body) throw new Problem(`${this.name} sent no body for ${id}`, true);
    try {
      return await this.o.spool.write(
        res.body as unknown as AsyncIterable<Uint8Array>,
        this.o.config.sourceGoproxyMaxZipBytes,
      );
    } catch (e) {
      if (e instanceof TooLargeError)
        throw new Problem(
          `the zip of ${id} runs past the ${this.o.config.sourceGoproxyMaxZipBytes} bytes a module zip may have (SOURCE_GOPROXY_MAX_ZIP_BYTES)`,
          false,
        );
      if (signal.aborted) throw late();
      throw new Problem(`${this.name} broke off the zip of ${id}: ${(e as Error).message}`, true);
    }
  }

  /** The start of an error answer's text (proxies explain a 404 there), printable characters only. */
  private async snippet(res: Response): Promise<string> {
    if (!res.body) return '';
    const reader = res.body.getReader();
    const parts: Uint8Array[] = [];
    let n = 0;
    try {
      while (n < 300) {
        const r = await reader.read();
        if (r.done) break;
        parts.push(r.value);
        n += r.value.length;
      }
    } catch {
      // the text is a courtesy
    } finally {
      await reader.cancel().catch(() => undefined);
    }
    return Buffer.concat(parts)
      .toString('utf8')
      .slice(0, 200)
      .replace(/[^\x20-\x7e]+/g, ' ')
      .trim();
  }
}
