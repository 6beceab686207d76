import { IngestError } from './errors.ts';
import { ProfileBuilder } from '../model/profile-builder.ts';
import type { ValueType } from '../model/profile.ts';
import type { Profile } from '../model/profile.ts';
import { headUtf8 } from './head-text.ts';

/**
 * Importer for Linux `perf script` output (of `perf record -g`): each sample is a header line
 * followed by its call chain, one frame per line, leaf first (`addr symbol+offset (dso)`), and an
 * empty line. The header holds the fields `perf script` was told to print (`-F`), in perf's order:
 * `comm pid[/tid] [cpu] time: period event:` — every one after the pid may be missing (older perf
 * printed no period; `-F` can leave out the time, the cpu, the period or the event). Frames may
 * come without their indent (a paste that trimmed the lines): as in stackcollapse-perf.pl, a line
 * that starts like a header is one, any other is a frame.
 *
 * Stacks and weights follow Brendan Gregg's stackcollapse-perf.pl, so the flame graph is the one
 * FlameGraph draws and the totals are the ones it prints:
 * - the root frame is the process name (comm, spaces as `_`); a sample without frames is that
 *   frame alone;
 * - `+0x…` offsets are dropped; a frame in parentheses (a process name) is skipped; `[unknown]`
 *   becomes `[dso file name]` when the dso is known; `a->b` (perf's inlined frames) are two frames,
 *   the inner one marked `_[i]`;
 * - `;` in a name becomes `:`, quotes are dropped, and what follows the first `(` is dropped
 *   (C++ argument lists) unless the name looks like a Go method (`pkg.(*T).M`) or the parenthesis
 *   opens `(anonymous namespace)`; Java frames (`java` processes) lose the `L` of a class path;
 * - only samples of the first event named in a header are read; headers that name no event are
 *   all read; a comment counts the samples left out.
 * Sample types: the event's period, as `perf report` and FlameGraph weigh each sample — cpu in
 * nanoseconds for cpu-clock and task-clock, EVENT/count for the others (page-faults, cycles, …),
 * a sample without a printed period weighing 1 — the default when any header prints a period; and
 * samples/count (one per sample), always there. Where the header prints a period but no time,
 * FlameGraph's script does not see the period and counts samples: our samples/count is its figure.
 */

export const PERF_LIMITS = { maxSamples: 5_000_000, maxDepth: 10_000 };

/**
 * The start of a sample header: comm (may hold spaces: the shortest run that is followed by a
 * number), pid or pid/tid, then whitespace.
 */
const HEADER_START = /^(\S.+?)\s+(\d+)(?:\/(\d+))?\s+/;
/** The fields after the pid, each optional: [cpu], time:, period, event: — and nothing after. */
const HEADER_REST = /^(?:\[(\d+)\]\s*)?(?:(\d+\.\d+):\s*)?(?:(\d+)\s*)?(?:(\S+):)?\s*$/;
/** A call-chain line: address, symbol (maybe with +offset), then the last ` (dso)` on the line. */
const FRAME = /^\s*(\w+)\s*(.+) \((.*)\)/;

interface Header {
  comm: string;
  event: string | null;
  period: number | null;
  hasTime: boolean;
}

/** A sample header, or null. Headers with fields after the event (trace arguments) name no event. */
function header(line: string): Header | null {
  const h = HEADER_START.exec(line);
  if (!h) return null;
  const rest = HEADER_REST.exec(line.slice(h[0].length));
  if (!rest) {
    // stackcollapse-perf's own reading: the first `: [period] event:` that ends the line
    const m = /:\s*(\d+)?\s+(\S+):\s*$/.exec(line);
    return { comm: h[1]!, event: m?.[2] ?? null, period: m?.[1] === undefined ? null : Number(m[1]), hasTime: !!m };
  }
  return {
    comm: h[1]!,
    event: rest[4] ?? null,
    period: rest[3] === undefined ? null : Number(rest[3]),
    hasTime: rest[2] !== undefined,
  };
}

/**
 * Confidence that `head` is `perf script` output: sample headers followed by frames, indented as perf
 * prints them or flush left as a paste that trims lines leaves them.
 */
export function detect(head: Buffer, _fileName?: string): number {
  const t = headUtf8(head, 64 * 1024);
  if (t.includes('\u0000')) return 0;
  const lines = t.split('\n').slice(0, 400);
  let headers = 0;
  let framesAfterHeader = 0;
  for (let i = 0; i < lines.length - 1; i++) {
    const l = lines[i]!.replace(/\r$/, '');
    if (l.startsWith('#') || /^\s/.test(l) || !HEADER_START.test(l)) continue;
    // a header is the first line of a sample: at the start or after an empty line
    if (i > 0 && lines[i - 1]!.replace(/\r$/, '') !== '' && !lines[i - 1]!.startsWith('#')) continue;
    headers++;
    // perf indents call-chain lines; a paste that trims lines leaves them flush left, which
    // stackcollapse-perf.pl reads all the same (a line that is no header is a frame)
    const next = lines[i + 1]!.replace(/\r$/, '');
    if (FRAME.test(next) && (/^\s/.test(next) || !HEADER_START.test(next))) framesAfterHeader++;
  }
  if (headers >= 1 && framesAfterHeader === headers) return 0.9;
  if (headers >= 3 && framesAfterHeader >= headers * 0.8) return 0.7;
  return 0;
}

/** The frames one call-chain line stands for, outermost first (perf's `a->b` are inlined calls). */
function tidy(raw: string, dso: string, java: boolean): string[] {
  const sym = raw.replace(/\+0x[\da-f]+$/, '');
  if (sym.startsWith('(')) return [];
  const out: string[] = [];
  for (const part of sym.split('->')) {
    let f = part;
    if (f === '[unknown]') f = dso !== '[unknown]' ? `[${dso.slice(dso.lastIndexOf('/') + 1)}]` : '[unknown]';
    f = f.replace(/;/g, ':');
    if (!/\.\(.*\)\./.test(f)) f = f.replace(/\((?!anonymous namespace\)).*$/s, '');
    f = f.replace(/["']/g, '');
    if (java && f.includes('/')) f = f.replace(/^L/, '');
    if (out.length > 0 && !f.includes('_[i]')) f += '_[i]';
    out.push(f);
  }
  return out;
}

export function parse(bytes: Buffer, _fileName?: string): Profile {
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  const lines = text.split('\n');
  // the terminator of the last line is not an empty line: only "\n\n" ends a sample
  if (lines.at(-1) === '') lines.pop();
  interface Sample {
    pname: string;
    period: number | null;
    frames: string[]; // leaf first
  }
  const samples: Sample[] = [];
  let event: string | null = null;
  let otherEvents = 0;
  let withoutTime = false;
  let cur: Sample | null = null;
  let skipping = false;
  let unreadable = 0;
  let firstUnreadable = 0;
  const finish = () => {
    if (cur) samples.push(cur);
    cur = null;
    skipping = false;
  };
  const bad = (i: number) => {
    unreadable++;
    if (firstUnreadable === 0) firstUnreadable = i + 1;
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.startsWith('#')) continue;
    if (line === '') {
      finish();
      continue;
    }
    const h = /^\s/.test(line) ? null : header(line);
    if (h) {
      finish();
      if (h.event !== null) {
        if (event === null) event = h.event;
        if (h.event !== event) {
          otherEvents++;
          skipping = true;
          continue;
        }
      }
      if (samples.length >= PERF_LIMITS.maxSamples)
        throw new IngestError('too-large', `more than ${PERF_LIMITS.maxSamples} samples`, i + 1);
      if (h.period !== null && !h.hasTime) withoutTime = true;
      cur = { pname: h.comm.replace(/ /g, '_'), period: h.period, frames: [] };
      continue;
    }
    if (skipping) continue;
    const f = FRAME.exec(line);
    if (!f || !cur) {
      bad(i);
      continue;
    }
    const s: Sample = cur;
    const names = tidy(f[2]!, f[3]!, s.pname.startsWith('java'));
    if (s.frames.length + names.length > PERF_LIMITS.maxDepth)
      throw new IngestError('too-large', `a stack is deeper than ${PERF_LIMITS.maxDepth} frames`, i + 1);
    for (let k = names.length - 1; k >= 0; k--) s.frames.push(names[k]!);
  }
  // perf script ends every sample with an empty line: a last sample without one may be cut short
  const cutSample = cur !== null;
  cur = null;
  finish();
  if (samples.length === 0)
    throw new IngestError(
      'not-a-profile',
      'perf script output without any sample (record with `perf record -g`, then `perf script > FILE`)',
    );
  const withPeriod = samples.some((s) => s.period !== null);
  const base = event?.replace(/:.*$/, '') ?? null;
  const periodType: ValueType | null = !withPeriod
    ? null
    : base === 'cpu-clock' || base === 'task-clock'
      ? { type: 'cpu', unit: 'nanoseconds' }
      : { type: base ?? 'period', unit: 'count' };
  const types: ValueType[] = periodType
    ? [{ type: 'samples', unit: 'count' }, periodType]
    : [{ type: 'samples', unit: 'count' }];
  const b = new ProfileBuilder('perf-script', types);
  for (const s of samples) {
    const stack = [...s.frames.map((name) => ({ name })), { name: s.pname }];
    // perf's weight: the period; a sample without one (or a period of 0) weighs 1, as FlameGraph has it
    b.addSample(stack, periodType ? [1, s.period || 1] : [1]);
  }
  const comments = [
    `perf script${event ? `, event ${event}` : ''}; stacks folded as stackcollapse-perf does${periodType ? ', weighted by period' : ''}`,
  ];
  if (otherEvents > 0) comments.push(`${otherEvents} sample(s) of other events than ${event} left out`);
  if (withoutTime)
    comments.push(
      'the headers print a period but no time: FlameGraph’s stackcollapse-perf.pl counts these samples instead (our samples/count)',
    );
  if (unreadable > 0) comments.push(`${unreadable} unreadable line(s) skipped (first at line ${firstUnreadable})`);
  if (cutSample) comments.push('the file ends inside a sample (cut off?): that last sample is left out');
  return b.build({
    defaultSampleType: periodType ? periodType.type : 'samples',
    comments,
    periodType,
  });
}
