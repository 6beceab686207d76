import { IngestError } from './errors.ts';
import { ProfileBuilder } from '../model/profile-builder.ts';
import type { Profile } from '../model/profile.ts';
import { headUtf8 } from './head-text.ts';

/**
 * Importer for Chrome DevTools / Node `.cpuprofile` files (V8's `Profiler.Profile`, what
 * `node --cpu-prof` and DevTools' "Save profile" write): `nodes` (a call tree: id, callFrame
 * {functionName, url, lineNumber, columnNumber} with 0-based positions, children ids), `samples` (the
 * node id hit at each tick), `timeDeltas` (µs since the previous tick; the first since `startTime`).
 *
 * Canonical profile:
 * - sample types `samples/count` and `cpu/microseconds` (the default), one sample per tick;
 * - a tick's time is the gap to the next tick (the next sample's delta), the last tick weighs 0 — the
 *   attribution of speedscope and Chrome DevTools' timeline, so the total equals last − first tick time
 *   (in the older layout, a `timestamps` array one longer than `samples` closes the last tick: it then
 *   weighs up to that final timestamp);
 * - a frame per call-tree node from the sampled node up to, not including, V8's `(root)`; V8's
 *   `(program)`, `(idle)` and `(garbage collector)` are kept as frames of their own;
 * - a function is its (name, url, line, column); an empty name reads `(anonymous)`. Where two different
 *   functions share a name it becomes `name (url:line)` (1-based line, `:column` added if still
 *   ambiguous), so pprof-style grouping by name never merges them. `Frame.line` is 1-based (0 unknown).
 */

export const CPUPROFILE_LIMITS = {
  maxBytes: 512 * 1024 * 1024,
  maxNodes: 2_000_000,
  maxSamples: 20_000_000,
};

/** Confidence that `head` (the first bytes of a file) is a .cpuprofile. Works without the file name. */
export function detect(head: Buffer, _fileName?: string): number {
  const text = headUtf8(head, 64 * 1024).trimStart();
  if (!text.startsWith('{')) return 0;
  const nodes = /"nodes"\s*:\s*\[/.test(text);
  const callFrame = /"callFrame"\s*:\s*\{/.test(text);
  const samplesOrDeltas = /"(samples|timeDeltas|startTime)"\s*:/.test(text);
  // node --cpu-prof writes samples and timeDeltas last, so a head often shows only nodes.
  if (nodes && callFrame) return 0.95;
  // the older layout: a "head" tree whose nodes carry functionName/url/callUID or hitCount
  if (/^\{\s*("typeId"\s*:\s*"CPU"|"head"\s*:\s*\{)/.test(text) && /"head"\s*:\s*\{\s*"functionName"/.test(text))
    return 0.9;
  if (nodes && samplesOrDeltas) return 0.5;
  return 0;
}

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

/** Parses a .cpuprofile. Throws IngestError with a clear message for anything else. */
export function parse(bytes: Buffer, _fileName?: string): Profile {
  if (bytes.length > CPUPROFILE_LIMITS.maxBytes) {
    throw new IngestError('too-large', `.cpuprofile is larger than ${CPUPROFILE_LIMITS.maxBytes} bytes`);
  }
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw jsonError(text, e);
  }
  if (Array.isArray(doc) || (isObject(doc) && 'traceEvents' in doc)) {
    throw new IngestError(
      'unsupported',
      'this is a Chrome performance trace, not a CPU profile: save the profile as .cpuprofile (DevTools or node --cpu-prof)',
    );
  }
  if (!isObject(doc))
    throw new IngestError('not-a-profile', 'expected a JSON object with nodes, samples and timeDeltas');
  const body = !('nodes' in doc) && 'head' in doc ? fromHeadLayout(doc) : doc;
  const { nodes, samples, timeDeltas } = body;
  if (!Array.isArray(nodes)) throw new IngestError('not-a-profile', 'no "nodes" array: not a .cpuprofile');
  if (!Array.isArray(samples) || !Array.isArray(timeDeltas)) {
    throw new IngestError('malformed', 'a .cpuprofile needs "samples" and "timeDeltas" arrays');
  }
  if (nodes.length > CPUPROFILE_LIMITS.maxNodes)
    throw new IngestError('too-large', `more than ${CPUPROFILE_LIMITS.maxNodes} call-tree nodes`);
  if (samples.length > CPUPROFILE_LIMITS.maxSamples)
    throw new IngestError('too-large', `more than ${CPUPROFILE_LIMITS.maxSamples} samples`);
  if (samples.length !== timeDeltas.length) {
    throw new IngestError('value-count-mismatch', `${samples.length} samples but ${timeDeltas.length} timeDeltas`);
  }
  if (nodes.length === 0) throw new IngestError('no-run', 'the profile has no call-tree nodes');

  // Index the call tree: node id → position, frame and parent.
  const index = new Map<number, number>();
  const frames: CallFrame[] = [];
  const ids: number[] = [];
  nodes.forEach((n: unknown, i) => {
    if (!isObject(n) || !Number.isSafeInteger(n.id) || !isObject(n.callFrame)) {
      throw new IngestError('malformed', `node #${i} lacks an integer "id" or a "callFrame" object`);
    }
    const id = n.id as number;
    if (index.has(id)) throw new IngestError('malformed', `node id ${id} appears twice`);
    const cf = n.callFrame;
    index.set(id, i);
    ids.push(id);
    frames.push({
      functionName: typeof cf.functionName === 'string' ? cf.functionName : '',
      url: typeof cf.url === 'string' ? cf.url : '',
      lineNumber: Number.isFinite(cf.lineNumber) ? (cf.lineNumber as number) : -1,
      columnNumber: Number.isFinite(cf.columnNumber) ? (cf.columnNumber as number) : -1,
    });
  });
  const parent = new Int32Array(nodes.length).fill(-1);
  nodes.forEach((n: Record<string, unknown>, i) => {
    // DevTools writes children; some producers (trace ProfileChunks) write parent instead.
    if (Array.isArray(n.children)) {
      for (const c of n.children) {
        const ci = index.get(c as number);
        if (ci === undefined)
          throw new IngestError('invalid-reference', `node ${ids[i]} lists child ${String(c)}, which does not exist`);
        parent[ci] = i;
      }
    }
    if (n.parent !== undefined) {
      const pi = index.get(n.parent as number);
      if (pi === undefined)
        throw new IngestError(
          'invalid-reference',
          `node ${ids[i]} names parent ${String(n.parent)}, which does not exist`,
        );
      parent[i] = pi;
    }
  });

  const names = functionNames(frames);
  const isRoot = frames.map((f) => f.functionName === '(root)' && f.url === '');

  // Tick times; weights are the gap to the next tick in time order.
  const n = samples.length;
  const time = new Float64Array(n);
  const start = typeof body.startTime === 'number' ? body.startTime : 0;
  let t = start;
  for (let i = 0; i < n; i++) {
    const d = timeDeltas[i];
    if (typeof d !== 'number' || !Number.isFinite(d))
      throw new IngestError('malformed', `timeDeltas[${i}] is not a number`);
    t += d;
    time[i] = t;
  }
  // the end of the last tick, where the file gives it (the older layout's closing timestamp)
  const lastTickEnd = typeof body.lastTickEnd === 'number' && Number.isFinite(body.lastTickEnd) ? body.lastTickEnd : t;
  const order = Array.from({ length: n }, (_, i) => i);
  if (timeDeltas.some((d) => (d as number) < 0)) order.sort((a, b) => time[a]! - time[b]! || a - b);

  const b = new ProfileBuilder('cpuprofile', [
    { type: 'samples', unit: 'count' },
    { type: 'cpu', unit: 'microseconds' },
  ]);
  // Frames are interned on first use, so nodes no sample reaches (and (root)) add none.
  const frameIds = new Int32Array(frames.length).fill(-1);
  const frameOfNode = (i: number): number => {
    if (frameIds[i]! < 0) {
      const f = frames[i]!;
      frameIds[i] = b.frameId(names[i]!, f.url, f.lineNumber >= 0 ? f.lineNumber + 1 : 0);
    }
    return frameIds[i]!;
  };
  // Per node: its frames from the node up to (not including) (root), leaf first; computed once.
  const chainOfNode = new Map<number, number[]>();
  const nodeChain = (ni: number): number[] => {
    let chain = chainOfNode.get(ni);
    if (chain === undefined) {
      chain = [];
      const seen = new Set<number>();
      for (let at = ni; at >= 0; at = parent[at]!) {
        if (seen.has(at)) throw new IngestError('malformed', `the call tree has a cycle through node ${ids[at]}`);
        seen.add(at);
        if (isRoot[at] && at !== ni) continue;
        chain.push(frameOfNode(at));
      }
      chainOfNode.set(ni, chain);
    }
    return chain;
  };
  for (let k = 0; k < n; k++) {
    const i = order[k]!;
    const ni = index.get(samples[i] as number);
    if (ni === undefined)
      throw new IngestError('invalid-reference', `samples[${i}] = ${String(samples[i])} is not a node id`);
    const next = k + 1 < n ? order[k + 1]! : -1;
    const weight = next >= 0 ? time[next]! - time[i]! : Math.max(0, lastTickEnd - time[i]!);
    b.addSample(nodeChain(ni), [1, weight]);
  }

  const endTime = typeof body.endTime === 'number' ? body.endTime : t;
  const positive = (timeDeltas as number[]).filter((d) => d > 0).sort((x, y) => x - y);
  const typicalInterval = positive.length ? positive[Math.floor(positive.length / 2)]! : 0;
  const profile = b.build({
    defaultSampleType: 'cpu',
    periodType: { type: 'cpu', unit: 'microseconds' },
    period: typicalInterval,
    durationNanos: Math.max(0, Math.round((endTime - start) * 1000)),
    stats: {
      numSamples: n,
      numLocations: nodes.length,
      numFunctions: new Set(names).size,
      numMappings: new Set(frames.map((f) => f.url).filter((u) => u !== '')).size,
    },
  });
  return profile;
}

/**
 * Display names per node: `functionName` (or `(anonymous)`), qualified by `(url:line)` — and then
 * `:column` — only where different functions would otherwise share a name.
 */
function functionNames(frames: readonly CallFrame[]): string[] {
  const base = frames.map((f) => f.functionName || '(anonymous)');
  const identity = frames.map((f) => `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}\u0000${f.columnNumber}`);
  const byName = new Map<string, Set<string>>();
  frames.forEach((_, i) => {
    let s = byName.get(base[i]!);
    if (!s) byName.set(base[i]!, (s = new Set()));
    s.add(identity[i]!);
  });
  const withLine = frames.map((f, i) =>
    byName.get(base[i]!)!.size > 1 ? `${base[i]} (${f.url}:${f.lineNumber >= 0 ? f.lineNumber + 1 : 0})` : base[i]!,
  );
  const byLineName = new Map<string, Set<string>>();
  frames.forEach((_, i) => {
    let s = byLineName.get(withLine[i]!);
    if (!s) byLineName.set(withLine[i]!, (s = new Set()));
    s.add(identity[i]!);
  });
  return frames.map((f, i) =>
    byLineName.get(withLine[i]!)!.size > 1
      ? `${base[i]} (${f.url}:${f.lineNumber >= 0 ? f.lineNumber + 1 : 0}:${f.columnNumber >= 0 ? f.columnNumber + 1 : 0})`
      : withLine[i]!,
  );
}

/**
 * The older layout (Chrome before 2016, Node 10's inspector-era tools such as v8-profiler): a
 * `head` call tree (nodes nested in `children`, callFrame fields on the node itself, 1-based line
 * and column) and absolute `timestamps` (µs) instead of `timeDeltas`. Rewritten into the current
 * layout (flat `nodes` with child ids, 0-based positions, deltas), so one path reads both.
 */
function fromHeadLayout(doc: Record<string, unknown>): Record<string, unknown> {
  const { head, samples, timestamps } = doc;
  if (!isObject(head)) throw new IngestError('malformed', 'the "head" call tree is not an object');
  if (!Array.isArray(timestamps))
    throw new IngestError('malformed', 'a .cpuprofile with a "head" tree needs a "timestamps" array');
  const nodes: Record<string, unknown>[] = [];
  const todo: Record<string, unknown>[] = [head];
  while (todo.length > 0) {
    const n = todo.pop()!;
    if (nodes.length >= CPUPROFILE_LIMITS.maxNodes)
      throw new IngestError('too-large', `more than ${CPUPROFILE_LIMITS.maxNodes} call-tree nodes`);
    const kids = Array.isArray(n.children) ? n.children.filter(isObject) : [];
    const pos = (v: unknown) => (Number.isFinite(v) && (v as number) > 0 ? (v as number) - 1 : -1);
    nodes.push({
      id: n.id,
      callFrame: {
        functionName: n.functionName,
        url: n.url,
        lineNumber: pos(n.lineNumber),
        columnNumber: pos(n.columnNumber),
      },
      children: kids.map((k) => k.id),
    });
    for (let i = kids.length - 1; i >= 0; i--) todo.push(kids[i]!);
  }
  // One timestamp more than samples: the last one closes the last sample (Chrome DevTools reads it
  // so, and so does speedscope); each sample then lasts until the next timestamp.
  const closed = Array.isArray(samples) && timestamps.length === samples.length + 1;
  const ticks = closed ? timestamps.slice(0, -1) : timestamps;
  const deltas = ticks.map((t, i) => (i === 0 ? 0 : (t as number) - (ticks[i - 1] as number)));
  // startTime/endTime are seconds in this layout (whole seconds in some exports): the tick span is used
  const first = timestamps[0];
  const last = timestamps[timestamps.length - 1];
  return {
    nodes,
    samples,
    timeDeltas: deltas,
    startTime: first,
    endTime: last,
    ...(closed ? { lastTickEnd: last } : {}),
  };
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** A syntax error as one clear line with its line number (V8's message does not always give a position). */
function jsonError(text: string, e: unknown): IngestError {
  const at = jsonErrorOffset(text);
  const line = text.slice(0, at).split('\n').length;
  const near = JSON.stringify(text.slice(at, at + 20));
  const msg = at >= text.length ? 'unexpected end of input' : `unexpected text at ${near}`;
  void e;
  return new IngestError('malformed', `invalid JSON: ${msg}`, line);
}

/** Offset of the first JSON syntax error: a small recursive-descent scan, run only after JSON.parse failed. */
function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const string = () => {
    if (text[i] !== '"') fail();
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text.charCodeAt(i) < 0x20) fail();
      i += text[i] === '\\' ? 2 : 1;
    }
    if (i >= text.length) fail();
    i++;
  };
  const value = (depth: number): void => {
    if (depth > 2_000) fail(); // far deeper than any profile; keeps the scan off the stack limit
    ws();
    const c = text[i];
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        if (c === '{') {
          ws();
          string();
          ws();
          if (text[i] !== ':') fail();
          i++;
        }
        value(depth + 1);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === close) {
          i++;
          return;
        }
        fail();
      }
    }
    if (c === '"') {
      string();
      return;
    }
    const m = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null)/.exec(text.slice(i, i + 400));
    if (!m) fail();
    i += m![0].length;
  };
  try {
    value(0);
    ws();
    if (i < text.length) fail();
  } catch (at) {
    if (typeof at === 'number') return at;
    throw at;
  }
  return i;
}
