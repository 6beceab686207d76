/**
 * How a stage was captured, in words: the pure part of the capture details (what `stagediff capture`
 * recorded: commands, window, versions, machine load). Untrusted text: React escapes it on render.
 */
import type { CaptureRecord, CaptureRun } from './api.ts';

/** "5.0 s, 12:03:01 → 12:03:06 UTC" for a run's profile window, or null when it had none. */
export function windowText(run: CaptureRun): string | null {
  const w = run.window;
  if (!w) return null;
  const a = Date.parse(w.start);
  const b = Date.parse(w.end);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return null;
  const t = (ms: number) => new Date(ms).toISOString().slice(11, 19);
  return `${((b - a) / 1000).toFixed(1)} s, ${t(a)} → ${t(b)} UTC`;
}

/** The load as run: the command, or the built-in generator and its equivalent command. */
export function loadText(c: CaptureRecord): { what: string; command: string; version: string | null } {
  const l = c.load;
  if (l.kind === 'command') return { what: l.tool ?? 'load command', command: l.command, version: l.version };
  const shape = l.rate !== null ? `${l.rate} req/s open loop` : `${l.connections} connections, closed loop`;
  return {
    what: `built-in generator (${shape}, ${l.durationSeconds} s)`,
    command: l.equivalentCommand,
    version: l.generator,
  };
}

/** One line per run: figures the run's own files gave, and the machine's state before it. */
export function runText(run: CaptureRun): string {
  const s = run.summary;
  const parts: string[] = [`run ${run.run}`];
  if (s?.rps != null) parts.push(`${s.rps.toLocaleString('en-US', { maximumFractionDigits: 1 })} req/s`);
  if (s?.p99Ms != null) parts.push(`p99 ${s.p99Ms.toFixed(2)} ms`);
  if (s?.cpuMicrosPerRequest != null) parts.push(`${s.cpuMicrosPerRequest.toFixed(1)} µs CPU/request`);
  parts.push(
    `${run.machine.cpuIdlePercent}% idle before, load average ${run.machine.loadAverage.map((x) => x.toFixed(2)).join(' ')}`,
  );
  if (run.machine.waitedForQuietSeconds)
    parts.push(`waited ${run.machine.waitedForQuietSeconds} s for a quiet machine`);
  if (run.error) parts.push(`failed: ${run.error}`);
  return parts.join(' · ');
}

/** Captures of one stage that ran the same load with the same profiles, shown as one block. */
export interface CaptureGroup {
  /** The first record: its load, profiles and host describe the whole group. */
  record: CaptureRecord;
  /** Every record's `stagediff capture` command line, in order (one per capture). */
  commands: string[];
  /** All runs of the group's records in order, numbered 1…n across them. */
  runs: CaptureRun[];
  /** Why a capture stopped early, for each record that did. */
  errors: string[];
}

/**
 * Groups a stage's capture records by what they ran (load command, pprof endpoint, profiles), in
 * order of first appearance: a stage captured run by run (one `stagediff capture` per run, taking turns
 * with other stages) reads as one capture of n runs, not n copies of the same block. Runs are numbered
 * across the group, so the list says "run 1 … run 6" rather than "run 1" six times.
 */
export function groupCaptures(records: CaptureRecord[]): CaptureGroup[] {
  const groups = new Map<string, CaptureGroup>();
  for (const c of records) {
    const key = JSON.stringify([loadText(c).command, c.pprof ?? null, c.profiles ?? []]);
    let g = groups.get(key);
    if (!g) {
      g = { record: c, commands: [], runs: [], errors: [] };
      groups.set(key, g);
    }
    g.commands.push(c.command);
    if (c.error) g.errors.push(c.error);
    for (const r of c.runs) g.runs.push({ ...r, run: g.runs.length + 1 });
  }
  return [...groups.values()];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown) => typeof v === 'string';
const isTextOrNull = (v: unknown) => v === null || typeof v === 'string';
const isNumber = (v: unknown) => typeof v === 'number' && Number.isFinite(v);

function readableRun(r: unknown): boolean {
  if (!isObject(r) || !isNumber(r.run) || !isObject(r.machine)) return false;
  const m = r.machine;
  const la = m.loadAverage;
  if (!Array.isArray(la) || la.length !== 3 || !la.every(isNumber)) return false;
  if (!isNumber(m.cpuIdlePercent) || typeof m.busy !== 'boolean') return false;
  if (
    r.window !== null &&
    r.window !== undefined &&
    (!isObject(r.window) || !isText(r.window.start) || !isText(r.window.end))
  )
    return false;
  if (r.summary !== null && r.summary !== undefined && !isObject(r.summary)) return false;
  return isTextOrNull(r.error ?? null);
}

function readableLoad(l: unknown): boolean {
  if (!isObject(l)) return false;
  if (l.kind === 'command') return isText(l.command) && isTextOrNull(l.tool) && isTextOrNull(l.version);
  if (l.kind === 'built-in')
    return (
      isText(l.generator) &&
      isText(l.equivalentCommand) &&
      isNumber(l.connections) &&
      isNumber(l.durationSeconds) &&
      (l.rate === null || isNumber(l.rate))
    );
  return false;
}

/**
 * The records of a stage this page can read: everything it shows is there with its type. The server
 * checks records as they arrive; one stored before it did, or by a later version, is left out rather
 * than allowed to break the page.
 */
export function readableCaptures(records: unknown): CaptureRecord[] {
  if (!Array.isArray(records)) return [];
  return records.filter(
    (c): c is CaptureRecord =>
      isObject(c) &&
      isText(c.command) &&
      isTextOrNull(c.pprof) &&
      Array.isArray(c.profiles) &&
      c.profiles.every(isText) &&
      isTextOrNull(c.error ?? null) &&
      readableLoad(c.load) &&
      isObject(c.host) &&
      Array.isArray(c.runs) &&
      c.runs.every(readableRun),
  );
}

/** The stages (by name) with at least one run captured on a busy machine, and how busy. */
export function busyStages(stages: { name: string; captures?: CaptureRecord[] }[]): { stage: string; idle: number }[] {
  const out: { stage: string; idle: number }[] = [];
  for (const s of stages) {
    const busy = readableCaptures(s.captures).flatMap((c) => c.runs.filter((r) => r.machine.busy));
    if (busy.length > 0)
      out.push({ stage: s.name, idle: busy.reduce((m, r) => Math.min(m, r.machine.cpuIdlePercent), 100) });
  }
  return out;
}

/** The command a visitor copies from the home page to record a stage into this server. */
export function captureCommandLine(origin: string): string {
  return `npx stagediff capture --pprof http://127.0.0.1:6060 --stage baseline --server ${origin} -- wrk -t2 -c32 -d30s --latency http://127.0.0.1:8080/`;
}
