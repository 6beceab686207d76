/**
 * A seeded generator of Go execution traces (wire version go 1.26 or go 1.22) that Go's own reader
 * accepts: a small scheduler simulation — P procs each on its own thread, goroutines that start, create
 * others, make system calls, block (channel, select, sync, network, sleep) and are unblocked by
 * others or by an idle proc, yield, exit; GC cycles with stop-the-world pauses and mark assists;
 * heap metrics — written with the format's sequence numbers, per-generation string and stack
 * tables, clock data and generation marks. Same options, same bytes.
 *
 * For tests and benchmarks that need traces larger than a fixture should be (millions of events),
 * and for hostile variants (cut, corrupted) of a valid trace.
 */

export interface SyntheticTraceOptions {
  seed: number;
  /** Stop after about this many events (a generation is always finished). */
  events: number;
  /** 26 (Go 1.26 format) or 22 (Go 1.22 format). */
  version?: 26 | 22;
  procs?: number;
  /** Simulated nanoseconds per generation. */
  generationNanos?: number;
  /**
   * Write the frames of `bufio.(*Reader).fill` without a function name (string id 0, as the runtime
   * writes a PC it cannot name), for the `<unknown>` rows pprof prints.
   */
  nameless?: boolean;
}

const NS_PER_TICK = 64;
const TICKS_PER_SECOND = 1e9 / NS_PER_TICK;

const EV_EVENT_BATCH = 1;
const EV_STACKS = 2;
const EV_STACK = 3;
const EV_STRINGS = 4;
const EV_STRING = 5;
const EV_FREQUENCY = 8;
const EV_PROC_STATUS = 13;
const EV_GO_CREATE = 14;
const EV_GO_START = 16;
const EV_GO_DESTROY = 17;
const EV_GO_STOP = 19;
const EV_GO_BLOCK = 20;
const EV_GO_UNBLOCK = 21;
const EV_GO_SYSCALL_BEGIN = 22;
const EV_GO_SYSCALL_END = 23;
const EV_GO_STATUS = 25;
const EV_STW_BEGIN = 26;
const EV_STW_END = 27;
const EV_GC_BEGIN = 29;
const EV_GC_END = 30;
const EV_GC_MARK_ASSIST_BEGIN = 35;
const EV_GC_MARK_ASSIST_END = 36;
const EV_HEAP_ALLOC = 37;
const EV_SYNC = 50;
const EV_CLOCK_SNAPSHOT = 51;
const EV_END_OF_GENERATION = 52;

const WIRE_RUNNABLE = 1;
const WIRE_WAITING = 4;
const WIRE_P_RUNNING = 1;

const MAX_BATCH = 60 * 1024;

/** Deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A growable byte buffer with unsigned LEB128 varints. */
class Bytes {
  buf = new Uint8Array(1 << 16);
  n = 0;
  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.n + k) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
  }
  byte(b: number): void {
    this.room(1);
    this.buf[this.n++] = b;
  }
  uv(v: number): void {
    this.room(10);
    let x = v;
    while (x >= 0x80) {
      this.buf[this.n++] = (x % 128) | 0x80;
      x = Math.floor(x / 128);
    }
    this.buf[this.n++] = x;
  }
  raw(b: Uint8Array): void {
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }
  take(): Uint8Array {
    const out = this.buf.slice(0, this.n);
    this.n = 0;
    return out;
  }
}

interface Func {
  name: string;
  file: string;
  pc: number;
}

const FUNCS: Func[] = [
  'runtime.gopark',
  'runtime.chanrecv1',
  'runtime.chansend1',
  'runtime.selectgo',
  'sync.(*Mutex).Lock',
  'sync.(*WaitGroup).Wait',
  'internal/poll.(*FD).Read',
  'net.(*conn).Read',
  'bufio.(*Reader).fill',
  'net/http.(*conn).serve',
  'net/http.(*connReader).backgroundRead',
  'main.(*service).handleOrders',
  'main.fetchRate',
  'main.encode',
  'syscall.write',
  'os.(*File).Write',
  'main.(*logger).write',
  'time.Sleep',
  'main.worker',
  'main.main',
  'runtime.mallocgc',
  'runtime.gcAssistAlloc',
  'runtime.newobject',
  'runtime.gcStart',
  'runtime.GC',
].map((name, i) => ({
  name,
  file: `/src/${name.split('.')[0]!.replace(/[^a-z/]/g, '')}/f${i}.go`,
  pc: 0x400000 + i * 0x1000,
}));

const F = Object.fromEntries(FUNCS.map((f, i) => [f.name, i])) as Record<string, number>;

/** Stacks, leaf first, as function indexes (a frame's PC is its function's PC + 8 × depth). */
const ENTRIES = [[F['net/http.(*conn).serve']!], [F['net/http.(*connReader).backgroundRead']!], [F['main.worker']!]];
const BLOCKS: { reason: string; stack: number[] }[] = [
  { reason: 'chan receive', stack: [F['runtime.gopark']!, F['runtime.chanrecv1']!, F['main.fetchRate']!] },
  { reason: 'chan send', stack: [F['runtime.gopark']!, F['runtime.chansend1']!, F['main.(*logger).write']!] },
  { reason: 'select', stack: [F['runtime.gopark']!, F['runtime.selectgo']!, F['main.fetchRate']!] },
  { reason: 'sync', stack: [F['runtime.gopark']!, F['sync.(*Mutex).Lock']!, F['main.(*service).handleOrders']!] },
  { reason: 'sync', stack: [F['runtime.gopark']!, F['sync.(*WaitGroup).Wait']!, F['main.worker']!] },
  {
    reason: 'network',
    stack: [F['runtime.gopark']!, F['internal/poll.(*FD).Read']!, F['net.(*conn).Read']!, F['bufio.(*Reader).fill']!],
  },
  { reason: 'sleep', stack: [F['runtime.gopark']!, F['time.Sleep']!, F['main.worker']!] },
];
const SYSCALL_STACK = [F['syscall.write']!, F['os.(*File).Write']!, F['main.(*logger).write']!];
const CREATE_STACK = [F['main.(*service).handleOrders']!];
const STOP_STACK = [F['main.encode']!, F['main.(*service).handleOrders']!];
const ASSIST_STACK = [F['runtime.gcAssistAlloc']!, F['runtime.mallocgc']!, F['runtime.newobject']!, F['main.encode']!];
const GC_STACK = [F['runtime.gcStart']!, F['runtime.mallocgc']!, F['main.encode']!];

interface G {
  id: number;
  entry: number[];
  state: 'runnable' | 'running' | 'waiting';
  seq: number;
  /** Trace time (ticks) at which a waiting goroutine may be unblocked. */
  wakeAt: number;
}

/** Waiting goroutines, earliest wake-up first (a binary heap). */
class WaitQueue {
  private h: G[] = [];
  get length(): number {
    return this.h.length;
  }
  peek(): G | undefined {
    return this.h[0];
  }
  push(g: G): void {
    const h = this.h;
    h.push(g);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.wakeAt <= h[i]!.wakeAt) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }
  pop(): G | undefined {
    const h = this.h;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l]!.wakeAt < h[m]!.wakeAt) m = l;
        if (r < h.length && h[r]!.wakeAt < h[m]!.wakeAt) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i]!, h[m]!];
        i = m;
      }
    }
    return top;
  }
  all(): readonly G[] {
    return this.h;
  }
}

/** Generates a trace; returns its bytes (header included). */
export function generateSyntheticTrace(o: SyntheticTraceOptions): Buffer {
  const version = o.version ?? 26;
  const procs = o.procs ?? 4;
  const genTicks = Math.round((o.generationNanos ?? 1e9) / NS_PER_TICK);
  const rand = rng(o.seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const out: Uint8Array[] = [new TextEncoder().encode(`go 1.${version} trace\0\0\0`)];

  const gs = new Map<number, G>();
  let nextG = 1;
  const runq: G[] = [];
  let runHead = 0;
  const waiting = new WaitQueue();
  const newG = (state: G['state']): G => {
    const g: G = { id: nextG++, entry: pick(ENTRIES), state, seq: 0, wakeAt: 0 };
    gs.set(g.id, g);
    return g;
  };
  for (let i = 0; i < 40; i++) {
    const g = newG(i % 4 === 0 ? 'runnable' : 'waiting');
    if (g.state === 'runnable') runq.push(g);
    else waiting.push(g);
  }

  const start = 1_000_000_000; // ticks: any positive base
  const pFree = Array.from({ length: procs }, () => start + 10);
  let gcSeq = 0;
  let heap = 8 << 20;
  let events = 0;
  let gen = 0;

  while (events < o.events) {
    gen++;
    const genStart = Math.max(...pFree);
    const deadline = genStart + genTicks;
    // per generation: tables, per-thread streams, proc sequence numbers
    const strings = new Map<string, number>();
    const stacks = new Map<string, number>();
    const str = (s: string): number => {
      let id = strings.get(s);
      if (id === undefined) {
        id = strings.size + 1;
        strings.set(s, id);
      }
      return id;
    };
    const stack = (fns: readonly number[], entry: readonly number[] = []): number => {
      const all = [...fns, ...entry];
      const key = all.join(',');
      let id = stacks.get(key);
      if (id === undefined) {
        id = stacks.size + 1;
        stacks.set(key, id);
      }
      return id;
    };
    const streams = Array.from({ length: procs }, () => ({
      b: new Bytes(),
      batches: [] as Uint8Array[],
      batchTime: 0,
      last: 0,
      started: false,
    }));
    const pSeq = new Array(procs).fill(0);
    for (const g of gs.values()) g.seq = 0;
    const emit = (p: number, t: number, type: number, ...args: number[]): void => {
      const s = streams[p]!;
      if (!s.started || s.b.n > MAX_BATCH) {
        if (s.started) flush(p);
        s.started = true;
        s.batchTime = t;
        s.last = t;
      }
      const tt = Math.max(t, s.last);
      s.b.byte(type);
      s.b.uv(tt - s.last);
      for (const a of args) s.b.uv(a);
      s.last = tt;
      events++;
    };
    const flush = (p: number): void => {
      const s = streams[p]!;
      if (s.b.n === 0) return;
      const data = s.b.take();
      const h = new Bytes();
      h.byte(EV_EVENT_BATCH);
      h.uv(gen);
      h.uv(100 + p);
      h.uv(s.batchTime);
      h.uv(data.length);
      h.raw(data);
      s.batches.push(h.take());
    };

    // Every proc announces itself; proc 0 names every goroutine alive (none is running now).
    for (let p = 0; p < procs; p++) emit(p, pFree[p]!, EV_PROC_STATUS, p, WIRE_P_RUNNING);
    for (const g of gs.values())
      emit(0, pFree[0]!, EV_GO_STATUS, g.id, 0, g.state === 'runnable' ? WIRE_RUNNABLE : WIRE_WAITING);

    // Steps in time order: the proc free earliest runs its next goroutine (or wakes one up).
    for (;;) {
      let p = 0;
      for (let q = 1; q < procs; q++) if (pFree[q]! < pFree[p]!) p = q;
      let t = pFree[p]!;
      if (t >= deadline) break;
      const tick = () => (t += 1 + Math.floor(rand() * 40));
      // Wake goroutines whose wait is over (the netpoller, timers): from this proc, no goroutine running.
      while (waiting.length > 0 && waiting.peek()!.wakeAt <= t && runq.length - runHead < 64) {
        const w = waiting.pop()!;
        w.state = 'runnable';
        emit(p, tick(), EV_GO_UNBLOCK, w.id, ++w.seq, 0);
        runq.push(w);
      }
      const g = runHead < runq.length ? runq[runHead++] : undefined;
      if (runHead > 4096) {
        runq.splice(0, runHead);
        runHead = 0;
      }
      if (!g) {
        pFree[p] = waiting.length > 0 ? Math.max(t + 10, waiting.peek()!.wakeAt) : t + 200;
        continue;
      }
      g.state = 'running';
      emit(p, tick(), EV_GO_START, g.id, ++g.seq);
      const work = 1 + Math.floor(rand() * 4);
      for (let k = 0; k < work; k++) {
        const r = rand();
        if (r < 0.15 && gs.size < 2000) {
          const n = newG('runnable');
          emit(p, tick(), EV_GO_CREATE, n.id, stack([], n.entry), stack(CREATE_STACK, g.entry));
          runq.push(n);
        } else if (r < 0.35) {
          emit(p, tick(), EV_GO_SYSCALL_BEGIN, ++pSeq[p], stack(SYSCALL_STACK, g.entry));
          t += Math.floor(rand() * 200);
          emit(p, tick(), EV_GO_SYSCALL_END);
        } else if (r < 0.55 && waiting.length > 0) {
          const w = waiting.pop()!;
          w.state = 'runnable';
          emit(p, tick(), EV_GO_UNBLOCK, w.id, ++w.seq, stack(STOP_STACK, g.entry));
          runq.push(w);
        } else if (r < 0.7) {
          heap += Math.floor(rand() * 65536);
          emit(p, tick(), EV_HEAP_ALLOC, heap);
        } else if (r < 0.705 && t + 20000 < deadline) {
          // a whole GC cycle on this goroutine: STW, mark (with an assist), STW
          emit(p, tick(), EV_STW_BEGIN, str('GC sweep termination'), stack(GC_STACK, g.entry));
          t += 500 + Math.floor(rand() * 2000);
          emit(p, tick(), EV_STW_END);
          emit(p, tick(), EV_GC_BEGIN, ++gcSeq, stack(GC_STACK, g.entry));
          emit(p, tick(), EV_GC_MARK_ASSIST_BEGIN, stack(ASSIST_STACK, g.entry));
          t += Math.floor(rand() * 3000);
          emit(p, tick(), EV_GC_MARK_ASSIST_END);
          t += 2000 + Math.floor(rand() * 8000);
          emit(p, tick(), EV_STW_BEGIN, str('GC mark termination'), stack(GC_STACK, g.entry));
          emit(p, tick(), EV_GC_END, ++gcSeq);
          t += 300 + Math.floor(rand() * 1500);
          emit(p, tick(), EV_STW_END);
          heap = 8 << 20;
          emit(p, tick(), EV_HEAP_ALLOC, heap);
        }
        t += Math.floor(rand() * 300);
      }
      const end = rand();
      if (end < 0.12 && gs.size > 30) {
        emit(p, tick(), EV_GO_DESTROY);
        gs.delete(g.id);
      } else if (end < 0.35) {
        g.state = 'runnable';
        emit(p, tick(), EV_GO_STOP, str('preempted'), stack(STOP_STACK, g.entry));
        runq.push(g);
      } else {
        const b = pick(BLOCKS);
        g.state = 'waiting';
        g.wakeAt = t + Math.floor(rand() * (b.reason === 'network' ? 20000 : 3000));
        emit(p, tick(), EV_GO_BLOCK, str(b.reason), stack(b.stack, g.entry));
        waiting.push(g);
      }
      pFree[p] = t + 1;
    }
    for (let p = 0; p < procs; p++) flush(p);

    // The generation's tables, clock and end mark, after its thread batches.
    const frames = (key: string): number[] => (key === '' ? [] : key.split(',').map(Number));
    const tableBatch = (kind: number, items: Uint8Array[]): void => {
      let cur = new Bytes();
      cur.byte(kind);
      const put = () => {
        const data = cur.take();
        const h = new Bytes();
        h.byte(EV_EVENT_BATCH);
        h.uv(gen);
        h.uv(100);
        h.uv(genStart);
        h.uv(data.length);
        h.raw(data);
        out.push(h.take());
      };
      for (const it of items) {
        if (cur.n + it.length > MAX_BATCH) {
          put();
          cur = new Bytes();
          cur.byte(kind);
        }
        cur.raw(it);
      }
      if (cur.n > 1) put();
    };
    for (const f of FUNCS) {
      str(f.name);
      str(f.file);
    }
    tableBatch(
      EV_STRINGS,
      [...strings].map(([s, id]) => {
        const b = new Bytes();
        const enc = new TextEncoder().encode(s);
        b.byte(EV_STRING);
        b.uv(id);
        b.uv(enc.length);
        b.raw(enc);
        return b.take();
      }),
    );
    tableBatch(
      EV_STACKS,
      [...stacks].map(([key, id]) => {
        const fs = frames(key);
        const b = new Bytes();
        b.byte(EV_STACK);
        b.uv(id);
        b.uv(fs.length);
        fs.forEach((fi, depth) => {
          const f = FUNCS[fi]!;
          b.uv(f.pc + depth * 8);
          b.uv(o.nameless && f.name === 'bufio.(*Reader).fill' ? 0 : str(f.name));
          b.uv(str(f.file));
          b.uv(10 + depth);
        });
        return b.take();
      }),
    );
    for (const s of streams) out.push(...s.batches);
    const sync = new Bytes();
    if (version >= 25) sync.byte(EV_SYNC);
    sync.byte(EV_FREQUENCY);
    sync.uv(TICKS_PER_SECOND);
    if (version >= 25) {
      const ns = (genStart - start) * NS_PER_TICK;
      sync.byte(EV_CLOCK_SNAPSHOT);
      sync.uv(0);
      sync.uv(genStart * NS_PER_TICK);
      sync.uv(1_800_000_000 + Math.floor(ns / 1e9));
      sync.uv(ns % 1e9);
    }
    const data = sync.take();
    const h = new Bytes();
    h.byte(EV_EVENT_BATCH);
    h.uv(gen);
    h.uv(100);
    h.uv(genStart);
    h.uv(data.length);
    h.raw(data);
    out.push(h.take());
    if (version >= 26) out.push(Uint8Array.of(EV_END_OF_GENERATION));
  }
  return Buffer.concat(out);
}
