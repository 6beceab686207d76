import { type Transition, rangeOf, stackFunctions } from './events.ts';
import {
  EV_SYNC,
  EV_USER_LOG,
  EV_USER_REGION_BEGIN,
  EV_USER_REGION_END,
  EV_USER_TASK_BEGIN,
  EV_USER_TASK_END,
  G_NOT_EXIST,
  G_RUNNABLE,
  G_RUNNING,
  G_SYSCALL,
  G_UNDETERMINED,
  G_WAITING,
  NONE,
  P_IDLE,
} from './format.ts';
import type { OrderedEvent } from './order.ts';

/**
 * A goroutine's time over a period, as `go tool trace` splits it on its goroutine, region and task
 * pages (ns). The parts before `totalNanos` do not overlap; `rangeNanos` (GC mark assist,
 * stop-the-world, sweep) overlaps them.
 */
export interface ExecStats {
  totalNanos: number;
  execNanos: number;
  schedWaitNanos: number;
  syscallNanos: number;
  /** Time in a syscall after its proc was taken away (the syscall blocked). */
  syscallBlockNanos: number;
  /** Blocked time by the runtime's reason ("sync", "chan receive", "network", …). */
  blockNanos: Record<string, number>;
  rangeNanos: Record<string, number>;
}

/** A `runtime/trace` region as the trace shows it: its goroutine, task, name, span and statistics. */
export interface RegionSummary {
  goroutine: number;
  task: number;
  /** The region's name; "" for the unnamed region a goroutine created inside a region inherits. */
  name: string;
  /** Trace time of its begin and end; null when outside the trace. */
  startNanos: number | null;
  endNanos: number | null;
  stats: ExecStats;
}

/** A `runtime/trace` task: its span, the goroutines that touched it and the statistics of its own goroutine. */
export interface TaskSummary {
  id: number;
  name: string;
  /** Parent task id; -1 when none. */
  parent: number;
  startNanos: number | null;
  endNanos: number | null;
  goroutines: number[];
  regions: number;
  logs: number;
  /**
   * The statistics of the goroutine that began the task, from the begin to the end, when both
   * happened on that goroutine (a request handled on one goroutine); else null.
   */
  own: ExecStats | null;
}

export interface GoroutineStats {
  id: number;
  /** Entry function (root frame of the first stack seen); "" when none was seen. */
  name: string;
  stats: ExecStats;
}

export interface RegionsSummary {
  goroutines: GoroutineStats[];
  tasks: TaskSummary[];
  regions: RegionSummary[];
}

const newStats = (): ExecStats => ({
  totalNanos: 0,
  execNanos: 0,
  schedWaitNanos: 0,
  syscallNanos: 0,
  syscallBlockNanos: 0,
  blockNanos: {},
  rangeNanos: {},
});

function copyStats(s: ExecStats): ExecStats {
  return { ...s, blockNanos: { ...s.blockNanos }, rangeNanos: { ...s.rangeNanos } };
}

function add(m: Record<string, number>, k: string, v: number): void {
  m[k] = (m[k] ?? 0) + v;
}

/** `s − o`, over the keys of `s`. */
export function minusStats(s: ExecStats, o: ExecStats): ExecStats {
  const c = copyStats(s);
  c.totalNanos -= o.totalNanos;
  c.execNanos -= o.execNanos;
  c.schedWaitNanos -= o.schedWaitNanos;
  c.syscallNanos -= o.syscallNanos;
  c.syscallBlockNanos -= o.syscallBlockNanos;
  for (const k of Object.keys(c.blockNanos)) c.blockNanos[k]! -= o.blockNanos[k] ?? 0;
  for (const k of Object.keys(c.rangeNanos)) c.rangeNanos[k]! -= o.rangeNanos[k] ?? 0;
  return c;
}

interface OpenRegion {
  out: RegionSummary;
  base: ExecStats;
}

interface GState {
  id: number;
  name: string;
  created: number;
  stats: ExecStats;
  done: boolean;
  runSince: number;
  readySince: number;
  blockSince: number;
  blockReason: string;
  sysSince: number;
  sysBlockSince: number;
  ranges: Map<string, number>;
  open: OpenRegion[];
  regions: RegionSummary[];
}

interface TaskState {
  out: TaskSummary;
  gs: Set<number>;
  beganOn: number;
  beganWith: ExecStats | null;
}

/** A goroutine that is a runtime's own (as `go tool trace` decides): its regions are not reported. */
export function isSystemGoroutine(entry: string): boolean {
  return entry === '' || (entry !== 'runtime.main' && entry.startsWith('runtime.'));
}

/**
 * Per-goroutine, per-region and per-task execution statistics of a trace, by the rules of
 * `go tool trace`'s summaries: a state's time runs from the transition into it to the one out of it
 * (0 is "not in it"; trace times are never 0); a goroutine first seen in a generation counts from that
 * generation's sync; a region's figures are its goroutine's figures at its end minus those at its
 * begin; a syscall still blocked at a snapshot counts as scheduler wait. Fed every event in order.
 * scripts/trace-reference (`regions`) computes the same on golang.org/x/exp/trace.
 */
export class RegionSummarizer {
  private first = 0;
  private last = 0;
  private sync = 0;
  private seen = false;
  private readonly gs = new Map<number, GState>();
  private readonly tasks = new Map<number, TaskState>();
  private readonly sysP = new Map<number, number>();
  private readonly sysG = new Map<number, number>();
  private readonly rangeP = new Map<string, number>();

  event(e: OrderedEvent, t: Transition | null): void {
    if (!this.seen) {
      this.seen = true;
      this.first = e.time;
      this.sync = e.time;
    }
    this.last = e.time;
    if (t) {
      if (t.kind === 'goroutine') this.goTransition(e, t);
      else if (t.from !== t.to && t.to === P_IDLE) {
        const id = this.sysP.get(t.id);
        if (id !== undefined) {
          this.gs.get(id)!.sysBlockSince = e.time;
          this.sysP.delete(t.id);
        }
      }
      return;
    }
    switch (e.type) {
      case EV_SYNC:
        this.sync = e.time;
        return;
      case EV_USER_REGION_BEGIN:
        this.regionBegin(e);
        return;
      case EV_USER_REGION_END:
        this.regionEnd(e);
        return;
      case EV_USER_TASK_BEGIN:
      case EV_USER_TASK_END:
        this.taskEdge(e);
        return;
      case EV_USER_LOG: {
        const task = this.task(e.args[0]);
        task.gs.add(e.g);
        task.out.logs++;
        return;
      }
    }
    const r = rangeOf(e);
    if (!r) return;
    let g: GState | undefined;
    if (r.edge === 'end') {
      if (r.scope === 'goroutine') g = this.gs.get(r.id);
      else if (r.scope === 'proc') {
        const k = `${r.id}\u0000${r.name}`;
        const id = this.rangeP.get(k);
        if (id !== undefined) {
          if (id === e.g) g = this.gs.get(id);
          this.rangeP.delete(k);
        }
      }
      if (!g) return;
      const since = g.ranges.get(r.name);
      if (since !== undefined && since !== 0) {
        add(g.stats.rangeNanos, r.name, e.time - since);
        g.ranges.delete(r.name);
      }
      return;
    }
    if (r.scope === 'goroutine') g = this.gs.get(r.id);
    else if (r.scope === 'proc') {
      g = this.gs.get(e.g);
      if (g) this.rangeP.set(`${r.id}\u0000${r.name}`, e.g);
    }
    if (!g) return;
    if (r.edge === 'active') {
      const since = g.ranges.get(r.name);
      if (since !== undefined && since !== 0) add(g.stats.rangeNanos, r.name, this.sync - since);
      g.ranges.set(r.name, this.sync);
    } else {
      g.ranges.set(r.name, e.time);
    }
  }

  /** The statistics of goroutine `id` as of `time` (its open states counted up to it); null when unseen. */
  snapshotOf(id: number, time: number): ExecStats | null {
    const g = this.gs.get(id);
    return g ? this.snapshot(g, time) : null;
  }

  private snapshot(g: GState, time: number): ExecStats {
    const c = copyStats(g.stats);
    if (g.done) return c;
    if (c.totalNanos === 0) c.totalNanos = time - g.created;
    if (g.runSince !== 0) c.execNanos += time - g.runSince;
    if (g.readySince !== 0) c.schedWaitNanos += time - g.readySince;
    if (g.blockSince !== 0) add(c.blockNanos, g.blockReason, time - g.blockSince);
    if (g.sysSince !== 0) c.syscallNanos += time - g.sysSince;
    if (g.sysBlockSince !== 0) c.schedWaitNanos += time - g.sysBlockSince;
    for (const [name, since] of g.ranges) add(c.rangeNanos, name, time - since);
    return c;
  }

  private finalize(g: GState, time: number, end: number | null): void {
    const final = this.snapshot(g, time);
    g.stats = final;
    if (!isSystemGoroutine(g.name)) {
      for (const r of g.open) {
        r.out.stats = minusStats(final, r.base);
        if (end !== null) r.out.endNanos = end - this.first;
        g.regions.push(r.out);
      }
    }
    g.open = [];
    g.runSince = 0;
    g.readySince = 0;
    g.blockSince = 0;
    g.sysSince = 0;
    g.sysBlockSince = 0;
    g.blockReason = '';
    g.ranges = new Map();
    g.done = true;
  }

  private task(id: number): TaskState {
    let t = this.tasks.get(id);
    if (!t) {
      t = {
        out: {
          id,
          name: '',
          parent: -1,
          startNanos: null,
          endNanos: null,
          goroutines: [],
          regions: 0,
          logs: 0,
          own: null,
        },
        gs: new Set(),
        beganOn: NONE,
        beganWith: null,
      };
      this.tasks.set(id, t);
    }
    return t;
  }

  private regionBegin(e: OrderedEvent): void {
    const g = this.gs.get(e.g);
    if (!g) return;
    const taskId = e.args[0];
    const open: OpenRegion = {
      out: {
        goroutine: g.id,
        task: taskId,
        name: e.gen.strings.get(e.args[1]) ?? '',
        startNanos: e.time - this.first,
        endNanos: null,
        stats: newStats(),
      },
      base: this.snapshot(g, e.time),
    };
    g.open.push(open);
    const task = this.task(taskId);
    task.out.regions++;
    task.gs.add(g.id);
  }

  private regionEnd(e: OrderedEvent): void {
    const g = this.gs.get(e.g);
    if (!g) return;
    let open = g.open.pop();
    if (!open) {
      const taskId = e.args[0];
      open = {
        out: {
          goroutine: g.id,
          task: taskId,
          name: e.gen.strings.get(e.args[1]) ?? '',
          startNanos: null,
          endNanos: null,
          stats: newStats(),
        },
        base: newStats(),
      };
      const task = this.task(taskId);
      task.out.regions++;
      task.gs.add(g.id);
    }
    open.out.stats = minusStats(this.snapshot(g, e.time), open.base);
    open.out.endNanos = e.time - this.first;
    g.regions.push(open.out);
  }

  private taskEdge(e: OrderedEvent): void {
    const task = this.task(e.args[0]);
    task.gs.add(e.g);
    const g = this.gs.get(e.g);
    if (e.type === EV_USER_TASK_BEGIN) {
      task.out.name = e.gen.strings.get(e.args[2]) ?? '';
      task.out.startNanos = e.time - this.first;
      if (g) {
        task.beganOn = g.id;
        task.beganWith = this.snapshot(g, e.time);
      }
      const parent = e.args[1];
      if (parent !== 0 && asTask(parent) !== NONE && task.out.parent < 0) {
        task.out.parent = parent;
        this.task(parent);
      }
    } else {
      task.out.endNanos = e.time - this.first;
      if (g && task.beganWith && task.beganOn === g.id)
        task.out.own = minusStats(this.snapshot(g, e.time), task.beganWith);
    }
  }

  private goTransition(e: OrderedEvent, t: Transition): void {
    const id = t.id;
    const from = t.from;
    const to = t.to;
    if (from === to) return;
    let g = this.gs.get(id);
    if (from === G_UNDETERMINED) {
      g = newG(id, this.sync);
      const d = e.time - this.sync;
      if (to === G_RUNNING) g.stats.execNanos += d;
      else if (to === G_WAITING) add(g.stats.blockNanos, t.reason, d);
      else if (to === G_RUNNABLE) g.stats.schedWaitNanos += d;
      else if (to === G_SYSCALL) {
        if (e.p === NONE) g.stats.syscallBlockNanos += d;
        else g.stats.syscallNanos += d;
      }
      this.gs.set(id, g);
    } else if (from === G_NOT_EXIST) {
      g = newG(id, e.time);
      const creator = this.gs.get(e.g);
      if (creator && creator.open.length > 0) {
        const top = creator.open[creator.open.length - 1]!;
        g.open.push({
          out: {
            goroutine: id,
            task: top.out.task,
            name: '',
            startNanos: e.time - this.first,
            endNanos: null,
            stats: newStats(),
          },
          base: newStats(),
        });
      }
      this.gs.set(id, g);
    } else if (!g) {
      return;
    } else if (from === G_RUNNING) {
      g.stats.execNanos += e.time - g.runSince;
      g.runSince = 0;
    } else if (from === G_WAITING) {
      if (g.blockSince !== 0) {
        add(g.stats.blockNanos, g.blockReason, e.time - g.blockSince);
        g.blockSince = 0;
      }
    } else if (from === G_RUNNABLE) {
      if (g.readySince !== 0) {
        g.stats.schedWaitNanos += e.time - g.readySince;
        g.readySince = 0;
      }
    } else if (from === G_SYSCALL) {
      if (g.sysSince !== 0) {
        if (g.sysBlockSince !== 0) {
          g.stats.syscallBlockNanos += e.time - g.sysBlockSince;
          g.stats.syscallNanos += g.sysBlockSince - g.sysSince;
        } else {
          g.stats.syscallNanos += e.time - g.sysSince;
        }
        g.sysSince = 0;
        g.sysBlockSince = 0;
        const p = this.sysG.get(id);
        if (p !== undefined) this.sysP.delete(p);
        this.sysG.delete(id);
      }
    }
    if (g.name === '' && t.stack !== 0) {
      const fns = stackFunctions(e, t.stack);
      if (fns.length > 0) g.name = fns[fns.length - 1]!;
    }
    if (to === G_RUNNING) g.runSince = e.time;
    else if (to === G_RUNNABLE) g.readySince = e.time;
    else if (to === G_WAITING && t.reason !== 'forever') {
      g.blockSince = e.time;
      g.blockReason = t.reason;
    } else if (to === G_WAITING || to === G_NOT_EXIST) {
      this.finalize(g, e.time, e.time);
    } else if (to === G_SYSCALL) {
      this.sysP.set(e.p, id);
      this.sysG.set(id, e.p);
      g.sysSince = e.time;
    }
  }

  finish(): RegionsSummary {
    const out: RegionsSummary = { goroutines: [], tasks: [], regions: [] };
    const ids = [...this.gs.keys()].sort((a, b) => a - b);
    for (const id of ids) {
      const g = this.gs.get(id)!;
      if (!g.done) this.finalize(g, this.last, null);
      g.regions.sort((a, b) => {
        if (a.startNanos === null || b.startNanos === null) {
          return (a.startNanos === null ? 0 : 1) - (b.startNanos === null ? 0 : 1);
        }
        return a.startNanos - b.startNanos;
      });
      out.goroutines.push({ id, name: g.name, stats: g.stats });
      for (const r of g.regions) out.regions.push(r);
    }
    const tids = [...this.tasks.keys()].sort((a, b) => a - b);
    for (const id of tids) {
      const t = this.tasks.get(id)!;
      t.out.goroutines = [...t.gs].filter((g) => g !== NONE).sort((a, b) => a - b);
      out.tasks.push(t.out);
    }
    return out;
  }
}

function asTask(v: number): number {
  return v >= 2 ** 63 ? NONE : v;
}

function newG(id: number, created: number): GState {
  return {
    id,
    name: '',
    created,
    stats: newStats(),
    done: false,
    runSince: 0,
    readySince: 0,
    blockSince: 0,
    blockReason: '',
    sysSince: 0,
    sysBlockSince: 0,
    ranges: new Map(),
    open: [],
    regions: [],
  };
}
