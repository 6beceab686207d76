import { type Transition, rangeOf, RANGE_GC_ASSIST } from './events.ts';
import { EV_USER_TASK_BEGIN, EV_USER_TASK_END, G_NOT_EXIST, G_RUNNABLE, G_WAITING, NONE } from './format.ts';
import type { Generation } from './generation.ts';
import type { OrderedEvent } from './order.ts';
import { GoroutineStates, overlap, PART_COUNT, PART_NAMES, type PathSplit, TooManyStates } from './critical-path.ts';

/** Goroutines whose entry function is remembered, at most. */
const MAX_ENTRIES = 1_000_000;
/** Distinct stacks a trace's goroutine states are numbered by, at most (past it: none). */
const MAX_STATE_STACKS = 100_000;

/**
 * How the requests of a trace were found:
 * - `tasks`: each top-level `runtime/trace` task begun and ended on one goroutine is a request (the
 *   service annotates its requests, e.g. a middleware doing `ctx, task := trace.NewTask(ctx, "request");
 *   defer task.End()`);
 * - `http-connections`: a plain `net/http` server's connection goroutines (`net/http.(*conn).serve`),
 *   each request from the end of its wait for the request's bytes to the start of the wait for the
 *   next one (the keep-alive idle wait, excluded); a connection opened inside the trace has its first
 *   request from the goroutine's start (or, if it waited for the request's bytes, from their arrival);
 * - `none`: neither was in the trace.
 */
export type RequestMethod = 'tasks' | 'http-connections' | 'none';

/** One request found in a trace: where, when, and its time along its critical path. */
export interface TracedRequest {
  goroutine: number;
  /** Trace time (ns from the trace's first event) of its start and end. */
  startNanos: number;
  endNanos: number;
  /** The task's name (`tasks`), or the handler function the request ran (`http-connections`; "" unseen). */
  name: string;
  path: PathSplit;
  /** Of its span, stop-the-world time. */
  stwNanos: number;
  /** Its goroutine's state at its end (GoroutineStates; for `TraceRequests.segments`). */
  at: number;
}

export interface TraceRequests {
  method: RequestMethod;
  /** Why there are no requests although the trace may have some: it had too many goroutine states; else "". */
  tooLarge: string;
  requests: TracedRequest[];
  /** Requests found past the `maxRequests` bound, not analysed. */
  omitted: number;
  /**
   * Time net/http connection goroutines spent blocked on the network waiting for a client's next
   * request (the keep-alive idle wait), summed over the trace as the summary sums its blocked time:
   * waits begun inside the trace, until they end or the trace does. Null when not known (too large).
   */
  keepAliveWaitNanos: number | null;
  /**
   * A request's critical path as stretches (goroutine, part, start, end, stack; trace time, latest
   * first): the walk `path` made, again, with its stretches kept. For the few requests shown one by one.
   */
  segments(q: TracedRequest): number[];
  /** The functions of a stack a stretch names, leaf first ([] for 0: none seen). */
  stack(id: number): string[];
}

/** A request found: its goroutine, span, name, and the goroutine's state at its end (GoroutineStates). */
interface Found {
  g: number;
  start: number;
  end: number;
  name: string;
  at: number;
}

interface Conn {
  /** In the keep-alive wait (between a response and the next request). */
  idle: boolean;
  /** Ever seen idle: a request before that began before the trace, or on a new connection. */
  seenIdle: boolean;
  /** When the next request's bytes were there: the end of the idle wait. */
  startCandidate: number;
  /** Start of the request in progress; -1 when none. */
  start: number;
  handler: string;
  /** The goroutine's current wait is the keep-alive wait. */
  idleWait: boolean;
  /** When that wait began, if it is a wait on the network; -1 otherwise. */
  idleSince: number;
  /** Created inside the trace and its first request's handler not reached yet. */
  first: boolean;
  /** In the first request's wait for its bytes (the request starts when they are there). */
  firstWait: boolean;
}

const SERVE = 'net/http.(*conn).serve';

function newConn(): Conn {
  return {
    idle: false,
    seenIdle: false,
    startCandidate: 0,
    start: -1,
    handler: '',
    idleWait: false,
    idleSince: -1,
    first: false,
    firstWait: false,
  };
}
const PEEK = 'bufio.(*Reader).Peek';
const SERVER_HANDLER = 'net/http.serverHandler.ServeHTTP';

/** What a stack says about a connection goroutine: 0 unrelated, 1 keep-alive wait, 2 serving (`handler` set). */
interface StackClass {
  kind: 0 | 1 | 2;
  handler: string;
  /** The stack's root function (a goroutine's entry). */
  root: string;
}

/**
 * Finds the requests of a trace as its events stream by (fed every event in order), records every
 * goroutine's states (bounded: `maxStates`), and at the end splits each request's time along its
 * critical path. Task requests win over connection requests when the trace has both.
 */
export class RequestCollector {
  private readonly states: GoroutineStates;
  private first = -1;
  private last = 0;
  private readonly openTasks = new Map<number, { g: number; start: number; name: string }>();
  private readonly taskRequests: Found[] = [];
  private readonly httpRequests: Found[] = [];
  private readonly conns = new Map<number, Conn>();
  private readonly stackClass = new WeakMap<Generation, Map<number, StackClass>>();
  private readonly stw: number[] = [];
  private stwOpen = -1;
  private omitted = 0;
  private tooLarge = '';
  /** Keep-alive waits that ended inside the trace (ns): what `go tool trace -pprof=net` counts of them. */
  keepAliveEnded = 0;
  private keepAlive = 0;
  /** Entry function of each goroutine whose stack was seen. */
  readonly entries = new Map<number, string>();
  /** Stacks numbered for the goroutine states (1-based; per generation, its stack ids to those numbers). */
  private readonly stackNumbers = new WeakMap<Generation, Map<number, number>>();
  /** Each numbered stack's functions, leaf first (number n at n − 1), and the numbers by those functions. */
  private readonly stackList: string[][] = [];
  private readonly stackByText = new Map<string, number>();

  constructor(
    maxStates: number,
    private readonly maxRequests: number,
  ) {
    this.states = new GoroutineStates(maxStates);
  }

  event(e: OrderedEvent, t: Transition | null): void {
    if (this.tooLarge !== '') return;
    if (this.first < 0) this.first = e.time;
    this.last = e.time;
    if (t) {
      if (t.kind === 'goroutine') this.goroutine(e, t);
      return;
    }
    if (e.type === EV_USER_TASK_BEGIN) {
      if ((e.args[1] === 0 || e.args[1] >= 2 ** 63) && e.g !== NONE)
        this.openTasks.set(e.args[0], { g: e.g, start: e.time, name: e.gen.strings.get(e.args[2]) ?? '' });
      return;
    }
    if (e.type === EV_USER_TASK_END) {
      const open = this.openTasks.get(e.args[0]);
      if (open) {
        this.openTasks.delete(e.args[0]);
        if (open.g === e.g)
          this.add(this.taskRequests, {
            g: e.g,
            start: open.start,
            end: e.time,
            name: open.name,
            at: this.states.latest(e.g),
          });
      }
      return;
    }
    const r = rangeOf(e);
    if (!r) return;
    if (r.name === RANGE_GC_ASSIST) this.states.assist(e.time, r.id, r.edge !== 'end');
    else if (r.name.startsWith('stop-the-world')) {
      if (r.edge === 'end') {
        if (this.stwOpen >= 0 && this.stw.length < 200_000) this.stw.push(this.stwOpen, e.time);
        this.stwOpen = -1;
      } else this.stwOpen = e.time;
    }
  }

  private stackNumber(gen: Generation, id: number): number {
    let m = this.stackNumbers.get(gen);
    if (!m) {
      m = new Map();
      this.stackNumbers.set(gen, m);
    }
    let n = m.get(id);
    if (n === undefined) {
      // numbered by its functions (a generation's stack ids are its own): resolved now, so no
      // generation is kept for its stacks
      const fns = (gen.stacks.get(id) ?? []).map((pc) => {
        const f = gen.frames.get(pc);
        return f && f.fn !== 0 ? (gen.strings.get(f.fn) ?? '') : '';
      });
      const text = fns.join('\n');
      n = this.stackByText.get(text);
      if (n === undefined) {
        if (this.stackList.length >= MAX_STATE_STACKS) return 0;
        this.stackList.push(fns);
        n = this.stackList.length;
        this.stackByText.set(text, n);
      }
      m.set(id, n);
    }
    return n;
  }

  private add(list: Found[], r: Found): void {
    if (list.length >= this.maxRequests) this.omitted++;
    else list.push(r);
  }

  private classify(e: OrderedEvent, stack: number): StackClass {
    let m = this.stackClass.get(e.gen);
    if (!m) {
      m = new Map();
      this.stackClass.set(e.gen, m);
    }
    let c = m.get(stack);
    if (c) return c;
    c = { kind: 0, handler: '', root: '' };
    const pcs = e.gen.stacks.get(stack);
    if (pcs) {
      const fns = pcs.map((pc) => {
        const f = e.gen.frames.get(pc);
        return f && f.fn !== 0 ? (e.gen.strings.get(f.fn) ?? '') : '';
      });
      c.root = fns[fns.length - 1] ?? '';
      const serve = fns.indexOf(SERVE);
      if (serve > 0 && fns[serve - 1] === PEEK) c.kind = 1;
      else if (serve >= 0) {
        c.kind = 2;
        const h = fns.indexOf(SERVER_HANDLER);
        for (let i = h - 1; h > 0 && i >= 0; i--) {
          if (!fns[i]!.startsWith('net/http.')) {
            c.handler = fns[i]!;
            break;
          }
        }
      }
    }
    m.set(stack, c);
    return c;
  }

  private goroutine(e: OrderedEvent, t: Transition): void {
    const g = t.id;
    if (this.tooLarge === '') {
      try {
        // the stack of the goroutine's own doing (where it blocked, or entered a syscall)
        const own = t.stack !== 0 && e.g === g ? this.stackNumber(e.gen, t.stack) : 0;
        this.states.transition(e.time, g, t.from, t.to, t.reason, e.g, own);
      } catch (err) {
        if (!(err instanceof TooManyStates)) throw err;
        this.tooLarge = `${err.message} (TRACE_MAX_REQUEST_STATES)`;
        this.states.clear();
        this.conns.clear();
        this.entries.clear();
        this.stackList.length = 0;
        this.stackByText.clear();
        this.taskRequests.length = 0;
        this.httpRequests.length = 0;
        return;
      }
    }
    const conn = this.conns.get(g);
    if (conn && conn.idleSince >= 0 && t.from === G_WAITING) {
      this.keepAlive += e.time - conn.idleSince;
      this.keepAliveEnded += e.time - conn.idleSince;
      conn.idleSince = -1;
    }
    if (t.to === G_NOT_EXIST) {
      this.conns.delete(g);
      return;
    }
    if (t.stack !== 0 && !this.entries.has(g) && this.entries.size < MAX_ENTRIES) {
      const root = this.classify(e, t.stack).root;
      if (root !== '') this.entries.set(g, root);
    }
    // A connection goroutine created inside the trace: its first request starts with it (no keep-alive
    // wait comes before the first request), or when its bytes are there if it has to wait for them.
    if (t.from === G_NOT_EXIST && !conn && t.stack !== 0 && this.classify(e, t.stack).root === SERVE) {
      this.conns.set(g, { ...newConn(), start: e.time, first: true });
      return;
    }
    if (conn?.firstWait && t.from === G_WAITING) {
      conn.firstWait = false;
      conn.start = e.time;
    }
    if (conn && t.from === G_WAITING && t.to === G_RUNNABLE && conn.idleWait) {
      conn.idleWait = false;
      conn.startCandidate = e.time;
    }
    // Stacks of the goroutine's own doing: blocking, stopping, entering a syscall.
    if (t.stack === 0 || e.g !== g) return;
    const c = this.classify(e, t.stack);
    if (c.kind === 0) return;
    let k = conn;
    if (!k) {
      k = newConn();
      this.conns.set(g, k);
    }
    if (c.kind === 1) {
      if (k.start >= 0)
        this.add(this.httpRequests, { g, start: k.start, end: e.time, name: k.handler, at: this.states.latest(g) });
      k.start = -1;
      if (!k.idle) k.startCandidate = e.time;
      k.idle = true;
      k.seenIdle = true;
      k.idleWait = t.to === G_WAITING;
      if (k.idleWait && t.reason === 'network') k.idleSince = e.time;
      return;
    }
    if (k.idle) {
      k.idle = false;
      k.start = k.startCandidate;
      k.handler = '';
    }
    if (k.start >= 0 && k.handler === '' && c.handler !== '') k.handler = c.handler;
    if (k.first) {
      if (k.handler !== '') k.first = false;
      else if (t.to === G_WAITING && t.reason === 'network') k.firstWait = true;
    }
  }

  /** The requests found and their critical paths; `end` is the trace's end (keep-alive waits still open run to it). */
  finish(end = this.last): TraceRequests {
    if (this.tooLarge !== '')
      return {
        method: 'none',
        tooLarge: this.tooLarge,
        requests: [],
        omitted: this.omitted,
        keepAliveWaitNanos: null,
        segments: () => [],
        stack: () => [],
      };
    for (const c of this.conns.values()) if (c.idleSince >= 0) this.keepAlive += end - c.idleSince;
    this.states.finish(this.last);
    const tasks = this.taskRequests.length > 0;
    const found = (tasks ? this.taskRequests : this.httpRequests).sort((a, b) => a.start - b.start || a.g - b.g);
    const method = tasks ? 'tasks' : this.httpRequests.length > 0 ? 'http-connections' : 'none';
    const requests = found.map((r) => ({
      goroutine: r.g,
      startNanos: r.start - this.first,
      endNanos: r.end - this.first,
      name: r.name,
      path: this.states.path(r.g, r.at, r.start, r.end),
      stwNanos: overlap(this.stw, r.start, r.end),
      at: r.at,
    }));
    const first = this.first;
    const segments = (q: TracedRequest): number[] => {
      const out: number[] = [];
      this.states.path(q.goroutine, q.at, q.startNanos + first, q.endNanos + first, 0, out);
      for (let i = 2; i < out.length; i += 5) {
        out[i]! -= first;
        out[i + 1]! -= first;
      }
      return out;
    };
    return {
      method,
      tooLarge: '',
      requests,
      omitted: this.omitted,
      keepAliveWaitNanos: this.keepAlive,
      segments,
      stack: (n: number) => (n > 0 ? (this.stackList[n - 1] ?? []) : []),
    };
  }
}

export { PART_COUNT, PART_NAMES };
