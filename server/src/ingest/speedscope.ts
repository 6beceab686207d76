import { IngestError } from './errors.ts';
import { ProfileBuilder } from '../model/profile-builder.ts';
import type { Label, Profile, ValueType } from '../model/profile.ts';
import { headUtf8 } from './head-text.ts';

/**
 * Importer for speedscope's own file format (`.speedscope.json`, what py-spy, rbspy, and many
 * other profilers export): `shared.frames` (name, optional file/line) and `profiles`, each either
 * `sampled` (stacks as frame indices root first, one weight per stack) or `evented` (open/close
 * events at times, in order). Every profile becomes samples of one canonical profile:
 * - sampled: one sample per stack, its weight as value (an empty stack keeps its weight, as
 *   speedscope counts it in the total);
 * - evented: one sample per interval between consecutive events while the stack is not empty,
 *   the interval's length as value (what speedscope's time-ordered view draws); frames still open
 *   at the end are closed at the profile's endValue.
 * Profiles of the file's first unit are merged (py-spy writes one per thread) and labelled
 * `profile=NAME` so tag filters can separate them; profiles in another unit are left out, and a
 * comment says so. Units map to sample types: none → samples/count, a time unit → time/UNIT,
 * bytes → space/bytes. A frame is named by its name alone, or `name (file)` when several files
 * have a function of that name.
 */

export const SPEEDSCOPE_LIMITS = {
  maxFrames: 2_000_000,
  maxSamples: 10_000_000,
  maxDepth: 10_000,
};

const SCHEMA = 'https://www.speedscope.app/file-format-schema.json';

/** Confidence that `head` is a speedscope file (its `$schema` URL or its two top-level keys). */
export function detect(head: Buffer, _fileName?: string): number {
  const t = headUtf8(head, 64 * 1024);
  if (!/^\s*\{/.test(t)) return 0;
  if (t.includes(SCHEMA)) return 0.97;
  if (/"shared"\s*:\s*\{\s*"frames"/.test(t) && /"profiles"\s*:/.test(t)) return 0.9;
  return 0;
}

function bad(what: string): never {
  throw new IngestError('malformed', `speedscope file: ${what}`);
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function sampleType(unit: string): ValueType {
  if (unit === 'none') return { type: 'samples', unit: 'count' };
  if (unit === 'bytes') return { type: 'space', unit: 'bytes' };
  if (['nanoseconds', 'microseconds', 'milliseconds', 'seconds'].includes(unit)) return { type: 'time', unit };
  return bad(`unknown unit "${unit}"`);
}

export function parse(bytes: Buffer, _fileName?: string): Profile {
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch (e) {
    throw new IngestError('malformed', `speedscope file is not valid JSON (cut off?): ${(e as Error).message}`);
  }
  if (!isObj(doc) || !isObj(doc.shared) || !Array.isArray(doc.shared.frames) || !Array.isArray(doc.profiles))
    bad('no "shared.frames" and "profiles"');
  const rawFrames = doc.shared.frames as unknown[];
  if (rawFrames.length > SPEEDSCOPE_LIMITS.maxFrames)
    throw new IngestError('too-large', `more than ${SPEEDSCOPE_LIMITS.maxFrames} frames`);
  const frames = rawFrames.map((f, i) => {
    if (!isObj(f) || typeof f.name !== 'string') bad(`frame ${i} has no name`);
    return {
      name: f.name,
      file: typeof f.file === 'string' ? f.file : '',
      line: typeof f.line === 'number' && Number.isInteger(f.line) ? f.line : 0,
    };
  });
  const filesOf = new Map<string, Set<string>>();
  for (const f of frames) {
    const s = filesOf.get(f.name) ?? new Set<string>();
    filesOf.set(f.name, s);
    s.add(f.file);
  }
  const display = frames.map((f) =>
    (filesOf.get(f.name)?.size ?? 0) > 1 && f.file !== '' ? `${f.name} (${f.file})` : f.name,
  );

  const profiles = (doc.profiles as unknown[]).filter(isObj);
  if (profiles.length === 0) bad('no profile in "profiles"');
  const unit = typeof profiles[0]!.unit === 'string' ? profiles[0]!.unit : bad('profile 0 has no unit');
  const st = sampleType(unit);
  const b = new ProfileBuilder('speedscope', [st]);
  const comments: string[] = [];
  const exporter = typeof doc.exporter === 'string' ? doc.exporter : null;
  if (exporter) comments.push(`exported by ${exporter}`);
  const several = profiles.length > 1;
  let samples = 0;
  const frameOf = (idx: unknown, where: string): number => {
    if (typeof idx !== 'number' || !Number.isInteger(idx) || idx < 0 || idx >= frames.length)
      throw new IngestError(
        'invalid-reference',
        `speedscope file: ${where} refers to frame ${String(idx)}, which does not exist`,
      );
    return b.frameId(display[idx]!, frames[idx]!.file, frames[idx]!.line);
  };
  const count = () => {
    if (++samples > SPEEDSCOPE_LIMITS.maxSamples)
      throw new IngestError('too-large', `more than ${SPEEDSCOPE_LIMITS.maxSamples} samples`);
  };

  profiles.forEach((p, pi) => {
    const name = typeof p.name === 'string' ? p.name : `profile ${pi}`;
    if (p.unit !== unit) {
      comments.push(`profile "${name}" is in ${String(p.unit)}, not ${unit}: left out`);
      return;
    }
    const labels: Label[] | undefined = several ? [{ key: 'profile', str: name }] : undefined;
    if (p.type === 'sampled') {
      if (!Array.isArray(p.samples) || !Array.isArray(p.weights)) bad(`profile "${name}" has no samples/weights`);
      const ss = p.samples as unknown[];
      const ws = p.weights as unknown[];
      if (ss.length !== ws.length)
        throw new IngestError(
          'value-count-mismatch',
          `speedscope file: profile "${name}" has ${ss.length} samples but ${ws.length} weights`,
        );
      for (let i = 0; i < ss.length; i++) {
        const stack = ss[i];
        const w = ws[i];
        if (!Array.isArray(stack)) bad(`profile "${name}": sample ${i} is not a list of frames`);
        if (typeof w !== 'number' || !Number.isFinite(w)) bad(`profile "${name}": weight ${i} is not a number`);
        if (stack.length > SPEEDSCOPE_LIMITS.maxDepth)
          throw new IngestError('too-large', `a stack is deeper than ${SPEEDSCOPE_LIMITS.maxDepth} frames`);
        count();
        const ids: number[] = new Array(stack.length);
        // speedscope stacks are root first; the model's are leaf first
        for (let k = 0; k < stack.length; k++) ids[stack.length - 1 - k] = frameOf(stack[k], `profile "${name}"`);
        b.addSample(ids, [w], labels);
      }
    } else if (p.type === 'evented') {
      if (!Array.isArray(p.events)) bad(`profile "${name}" has no events`);
      const open: number[] = []; // frame ids, root first
      const end = typeof p.endValue === 'number' ? p.endValue : null;
      let last: number | null = null;
      const flush = (at: number) => {
        if (last !== null && open.length > 0 && at > last) {
          count();
          b.addSample([...open].reverse(), [at - last], labels);
        }
        last = at;
      };
      for (const [i, e] of (p.events as unknown[]).entries()) {
        if (!isObj(e) || typeof e.at !== 'number' || !Number.isFinite(e.at))
          bad(`profile "${name}": event ${i} has no time`);
        if (last !== null && e.at < last) bad(`profile "${name}": event ${i} goes back in time`);
        const id = frameOf(e.frame, `profile "${name}" event ${i}`);
        flush(e.at);
        if (e.type === 'O') {
          if (open.length >= SPEEDSCOPE_LIMITS.maxDepth)
            throw new IngestError('too-large', `a stack is deeper than ${SPEEDSCOPE_LIMITS.maxDepth} frames`);
          open.push(id);
        } else if (e.type === 'C') {
          if (open[open.length - 1] !== id)
            bad(`profile "${name}": event ${i} closes a frame that is not the innermost open one`);
          open.pop();
        } else bad(`profile "${name}": event ${i} is neither "O" nor "C"`);
      }
      if (open.length > 0) {
        if (end !== null) flush(end);
        comments.push(`profile "${name}": ${open.length} frame(s) still open at the end, closed at endValue`);
      }
    } else bad(`profile "${name}" has unknown type "${String(p.type)}"`);
  });
  if (samples === 0) throw new IngestError('empty', 'speedscope file holds no sample');
  return b.build({ defaultSampleType: st.type, comments });
}
