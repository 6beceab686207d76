import { IngestError } from './errors.ts';
import { ProfileBuilder } from '../model/profile-builder.ts';
import type { Profile, ValueType } from '../model/profile.ts';

/**
 * Importer for Linux `perf script` output (of `perf record -g`): each sample is a header line
 * (`comm pid[/tid] [cpu] time: [period] event:`) followed by its call chain, one frame per line,
 * leaf first (`addr symbol+offset (dso)`), and a blank line. Stacks are folded with the rules of
 * Brendan Gregg's stackcollapse-perf, so the flame graph is the one FlameGraph draws:
 * - the root frame is the process name (comm, spaces as `_`); a sample without frames is that
 *   frame alone;
 * - `+0x…` offsets are dropped; a frame in parentheses (a process name) is skipped; `[unknown]`
 *   becomes `[dso file name]` when the dso is known;
 * - `;` in a name becomes `:`, quotes are dropped, and what follows the first `(` is dropped
 *   (C++ argument lists) unless the name looks like a Go method (`pkg.(*T).M`) or the parenthesis
 *   opens `(anonymous namespace)`;
 * - only samples of the first event type seen are read (as stackcollapse-perf does); a comment
 *   counts the others.
 * Sample types: samples/count (one per sample, FlameGraph's count, the default) and, when every
 * header prints its period, the event's period: cpu/nanoseconds for cpu-clock and task-clock,
 * EVENT/count for others (cycles, instructions, …).
 */

export const PERF_LIMITS = { maxSamples: 5_000_000, maxDepth: 10_000 };

/** The sample header: comm (may hold spaces), pid or pid/tid, then anything up to "event:". */
const HEADER = /^(\S.*?)\s+(\d+)(?:\/(\d+))?\s+(?:\[\d+\]\s+)?[\d.]+:\s+(?:(\d+)\s+)?(\S+?):\s*(.*)$/;
/** A call-chain line: address, symbol (maybe with +offset), dso in parentheses. */
const FRAME = /^\s+([0-9a-fA-F]+)\s+(.+?)\s+\((.*)\)\s*$/;

/** Confidence that `head` is `perf script` output: sample headers followed by indented frames. */
export function detect(head: Buffer, _fileName?: string): number {
  const t = head.subarray(0, 64 * 1024).toString('utf8');
  if (t.includes('\u0000')) return 0;
  const lines = t.split('\n').slice(0, 400);
  let headers = 0;
  let framesAfterHeader = 0;
  for (let i = 0; i < lines.length - 1; i++) {
    const l = lines[i]!.replace(/\r$/, '');
    if (l.startsWith('#') || !HEADER.test(l)) continue;
    headers++;
    if (FRAME.test(lines[i + 1]!.replace(/\r$/, ''))) framesAfterHeader++;
  }
  if (headers >= 1 && framesAfterHeader === headers) return 0.9;
  if (headers >= 3 && framesAfterHeader >= headers * 0.8) return 0.7;
  return 0;
}

function tidy(raw: string, dso: string): string | null {
  let f = raw.replace(/\+0x[0-9a-fA-F]+$/, '');
  if (f.startsWith('(')) return null;
  if (f === '[unknown]' && dso !== '' && dso !== '[unknown]') f = `[${dso.slice(dso.lastIndexOf('/') + 1)}]`;
  f = f.replace(/;/g, ':');
  if (!/\.\(.*\)\./.test(f)) f = f.replace(/\((?!anonymous namespace\)).*$/, '');
  return f.replace(/["']/g, '');
}

export function parse(bytes: Buffer, _fileName?: string): Profile {
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  const lines = text.split('\n');
  // the terminator of the last line is not a blank line: only "\n\n" ends a sample
  if (lines.at(-1) === '') lines.pop();
  interface Sample {
    pname: string;
    period: number | null;
    frames: string[]; // leaf first
  }
  const samples: Sample[] = [];
  let event: string | null = null;
  let otherEvents = 0;
  let cur: Sample | null = null;
  let skipping = false;
  let unreadable = 0;
  let firstUnreadable = 0;
  const finish = () => {
    if (cur) samples.push(cur);
    cur = null;
    skipping = false;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.startsWith('#')) continue;
    if (line.trim() === '') {
      finish();
      continue;
    }
    if (!/^\s/.test(line)) {
      const h = HEADER.exec(line);
      if (!h) {
        unreadable++;
        if (firstUnreadable === 0) firstUnreadable = i + 1;
        continue;
      }
      finish();
      const ev = h[5]!;
      if (event === null) event = ev;
      if (ev !== event) {
        otherEvents++;
        skipping = true;
        continue;
      }
      if (samples.length >= PERF_LIMITS.maxSamples)
        throw new IngestError('too-large', `more than ${PERF_LIMITS.maxSamples} samples`, i + 1);
      cur = { pname: h[1]!.replace(/ /g, '_'), period: h[4] === undefined ? null : Number(h[4]), frames: [] };
      continue;
    }
    if (skipping) continue;
    const f = FRAME.exec(line);
    if (!f || !cur) {
      unreadable++;
      if (firstUnreadable === 0) firstUnreadable = i + 1;
      continue;
    }
    const s: Sample = cur;
    const name = tidy(f[2]!, f[3]!);
    if (name === null) continue;
    if (s.frames.length >= PERF_LIMITS.maxDepth)
      throw new IngestError('too-large', `a stack is deeper than ${PERF_LIMITS.maxDepth} frames`, i + 1);
    s.frames.push(name);
  }
  // perf script ends every sample with a blank line: a last sample without one may be cut short
  const cutSample = cur !== null;
  cur = null;
  finish();
  if (samples.length === 0)
    throw new IngestError(
      'not-a-profile',
      'perf script output without any sample (record with `perf record -g`, then `perf script > FILE`)',
    );
  const withPeriod = samples.every((s) => s.period !== null);
  const types: ValueType[] = [{ type: 'samples', unit: 'count' }];
  if (withPeriod)
    types.push(
      event === 'cpu-clock' || event === 'task-clock'
        ? { type: 'cpu', unit: 'nanoseconds' }
        : { type: event!, unit: 'count' },
    );
  const b = new ProfileBuilder('perf-script', types);
  for (const s of samples) {
    const stack = [...s.frames.map((name) => ({ name })), { name: s.pname }];
    b.addSample(stack, withPeriod ? [1, s.period!] : [1]);
  }
  const comments = [`perf script, event ${event}; stacks folded as stackcollapse-perf does`];
  if (otherEvents > 0) comments.push(`${otherEvents} sample(s) of other events than ${event} left out`);
  if (unreadable > 0) comments.push(`${unreadable} unreadable line(s) skipped (first at line ${firstUnreadable})`);
  if (cutSample) comments.push('the file ends inside a sample (cut off?): that last sample is left out');
  return b.build({
    defaultSampleType: 'samples',
    comments,
    periodType: withPeriod ? types[1]! : null,
  });
}
