import { Worker } from 'node:worker_threads';
import { ServiceError } from './errors.ts';
import { FILTERS } from '../api/options.ts';
import { compileFilters, type FilterArgs, filterArgs } from './view-queries.ts';

/** Every expression a query may carry: pprof's name filters and its tag filters. */
const NAMES = FILTERS;
import type { FilterCheckReply, FilterCheckRequest } from './filter-thread.ts';

/** A checked expression set: valid, or refused with the message and parameter (`transient`: not a verdict on it). */
type Verdict = { ok: true } | { ok: false; message: string; param?: string; transient?: true };

/** Expressions whose verdict is kept (valid or not), most recently used last. */
const REMEMBERED = 2000;

/**
 * Checks filter expressions as the analysis will compile them, without compiling on the event loop:
 * verdicts are remembered (the same expressions cost nothing the second time) and new ones are
 * compiled on one thread of their own. `inline` compiles here instead (tools and tests that run
 * without worker processes).
 */
export class FilterChecker {
  private readonly verdicts = new Map<string, Verdict>();
  private thread: Worker | null = null;
  private readonly waiting = new Map<number, (v: Verdict) => void>();
  private seq = 0;
  private closed = false;
  /** How the checks were answered: from memory, compiled on the filter thread, or compiled here. */
  readonly counts = { remembered: 0, onThread: 0, here: 0 };

  constructor(private readonly inline = false) {}

  /** The filters of a query as they will apply; an invalid one is refused (`invalid-filter`, naming it). */
  async check(q: { [K in keyof FilterArgs]?: string | string[] }): Promise<FilterArgs> {
    const args = filterArgs(q);
    if (!NAMES.some((n) => args[n])) return args;
    const key = JSON.stringify(NAMES.map((n) => args[n] ?? null));
    let v = this.verdicts.get(key);
    if (v) {
      this.verdicts.delete(key);
      this.counts.remembered++;
    } else if (this.inline || this.closed) {
      v = compileHere(args);
      this.counts.here++;
    } else {
      v = await this.compile(args);
      this.counts.onThread++;
    }
    if (v.ok || !v.transient) {
      this.verdicts.set(key, v);
      if (this.verdicts.size > REMEMBERED) this.verdicts.delete(this.verdicts.keys().next().value!);
    }
    if (!v.ok)
      throw v.transient
        ? new ServiceError('busy', v.message, { retryAfterSeconds: 1 })
        : new ServiceError('invalid-filter', v.message, v.param ? { param: v.param } : {});
    return args;
  }

  private compile(args: FilterArgs): Promise<Verdict> {
    const t = this.thread ?? this.start();
    return new Promise((resolve) => {
      const id = ++this.seq;
      this.waiting.set(id, resolve);
      t.postMessage({ id, args } satisfies FilterCheckRequest);
    });
  }

  private start(): Worker {
    const t = new Worker(new URL('./filter-thread-entry.mjs', import.meta.url));
    t.unref();
    t.on('message', (m: FilterCheckReply) => {
      const done = this.waiting.get(m.id);
      this.waiting.delete(m.id);
      done?.(m.ok ? { ok: true } : { ok: false, message: m.message, ...(m.param ? { param: m.param } : {}) });
    });
    const fail = (why: string) => {
      if (this.thread === t) this.thread = null;
      // Whatever was waiting is answered here rather than left hanging; the next check starts a new thread.
      for (const [id, done] of this.waiting) {
        this.waiting.delete(id);
        done({ ok: false, message: `the filters could not be checked now (${why}); try again`, transient: true });
      }
    };
    t.on('error', (e) => fail(e.message));
    t.on('exit', (code) => fail(`checker exited with ${code}`));
    this.thread = t;
    return t;
  }

  async close(): Promise<void> {
    this.closed = true;
    const t = this.thread;
    this.thread = null;
    if (t) await t.terminate();
  }
}

/** Compiles on the calling thread (what the filter thread does too). */
function compileHere(args: FilterArgs): Verdict {
  try {
    compileFilters(args);
    return { ok: true };
  } catch (e) {
    if (e instanceof ServiceError)
      return { ok: false, message: e.message, ...(e.detail.param ? { param: e.detail.param } : {}) };
    return { ok: false, message: `the filters could not be checked: ${(e as Error).message}` };
  }
}
