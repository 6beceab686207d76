import { IngestError } from './errors.ts';
import { ProfileBuilder } from '../model/profile-builder.ts';
import type { Profile } from '../model/profile.ts';
import { headUtf8 } from './head-text.ts';

/**
 * Importer for folded stacks (Brendan Gregg's stackcollapse format, also what many profilers and our
 * own `/folded` export write): one line per stack, frames root first joined by `;`, then whitespace and
 * the stack's value. Frame names may contain spaces (the value is after the last run of whitespace); a
 * `;` inside a name cannot be represented and is usually written as `,` by the producer.
 *
 * The result is a canonical profile with one sample type, `samples/count`, and one sample per line.
 *
 * Files as real tools write them, read as FlameGraph and speedscope read them: `#` and `//` lines
 * are comments; an empty frame (`a;;b`) is a frame with an empty name; a line with no frame at all
 * (` 3`, py-spy's idle samples) is a sample with an empty stack, counted in the total; a line that
 * is not `stack count` is skipped, and the profile's comments say how many were and which (a file
 * of no valid line at all is refused).
 */

export const FOLDED_LIMITS = {
  maxBytes: 256 * 1024 * 1024,
  maxLines: 5_000_000,
  maxDepth: 10_000,
};

const LINE = /^(.*?\S)[ \t]+(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)[ \t]*$/;
/** A sample with no frame: whitespace, then the count. */
const EMPTY_STACK = /^[ \t]*(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)[ \t]*$/;
const COMMENT = /^\s*(#|\/\/)/;

/** Confidence that `head` (the first bytes of a file) holds folded stacks. Works without the file name. */
export function detect(head: Buffer, _fileName?: string): number {
  const text = headUtf8(head, 256 * 1024);
  if (text.includes('\u0000')) return 0;
  let lines = text.split('\n');
  // The head may stop mid-line: judge only complete lines (unless the head is all there is).
  if (lines.length > 1 && !text.endsWith('\n')) lines = lines.slice(0, -1);
  lines = lines
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '' && !COMMENT.test(l) && !EMPTY_STACK.test(l))
    .slice(0, 2000);
  if (lines.length === 0) return 0;
  let matching = 0;
  let withCallers = 0;
  for (const l of lines) {
    if (/^\s/.test(l)) continue;
    const m = LINE.exec(l);
    if (!m) continue;
    matching++;
    if (m[1]!.includes(';')) withCallers++;
  }
  // A few bad lines (a line cut short, a stray message) do not make stacks something else: one in a
  // small file, a tenth in a larger one, as long as the valid lines are stacks (a `;` somewhere).
  const bad = lines.length - matching;
  if (bad > 0) return matching >= 2 && withCallers > 0 && bad <= Math.max(1, lines.length * 0.1) ? 0.5 : 0;
  // "name 12" alone could be many things; a `;` somewhere makes it a stack.
  return withCallers > 0 ? 0.9 : 0.3;
}

/** How many skipped line numbers the note names; past that it counts the rest. */
const NAMED_SKIPPED_LINES = 20;

/** The profile's note on skipped lines, naming them: `2 lines … skipped: lines 4, 9`. */
function skippedNote(skipped: number, named: number[]): string {
  const more = skipped - named.length;
  const where = `line${skipped === 1 ? '' : 's'} ${named.join(', ')}${more > 0 ? ` and ${more} more` : ''}`;
  return `${skipped} line${skipped === 1 ? '' : 's'} not of the form "frame;frame;… COUNT" skipped: ${where}`;
}

/** Parses folded stacks. Throws IngestError: `empty`, `malformed` (with line), `too-large`. */
export function parse(bytes: Buffer, _fileName?: string): Profile {
  if (bytes.length > FOLDED_LIMITS.maxBytes) {
    throw new IngestError('too-large', `folded stacks file is larger than ${FOLDED_LIMITS.maxBytes} bytes`);
  }
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  if (text.includes('\u0000')) throw new IngestError('malformed', 'binary data, not folded stacks');
  const b = new ProfileBuilder('folded', [{ type: 'samples', unit: 'count' }]);
  const lines = text.split('\n');
  let count = 0;
  let skipped = 0;
  let firstSkipped = 0;
  const skippedLines: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '' || COMMENT.test(line)) continue;
    const lineNo = i + 1;
    const empty = EMPTY_STACK.exec(line);
    const m = empty ? null : LINE.exec(line);
    if (!empty && !m) {
      skipped++;
      if (firstSkipped === 0) firstSkipped = lineNo;
      if (skippedLines.length < NAMED_SKIPPED_LINES) skippedLines.push(lineNo);
      continue;
    }
    if (++count > FOLDED_LIMITS.maxLines) {
      throw new IngestError('too-large', `more than ${FOLDED_LIMITS.maxLines} stacks`, lineNo);
    }
    const names = m ? m[1]!.replace(/^\s+/, '').split(';') : [];
    if (names.length > FOLDED_LIMITS.maxDepth) {
      throw new IngestError('too-large', `a stack is deeper than ${FOLDED_LIMITS.maxDepth} frames`, lineNo);
    }
    const value = Number(m ? m[2] : empty![1]);
    if (!Number.isFinite(value))
      throw new IngestError('value-out-of-range', `count ${m ? m[2] : empty![1]} is not a finite number`, lineNo);
    const stack = [];
    for (let k = names.length - 1; k >= 0; k--) stack.push({ name: names[k]! });
    b.addSample(stack, [value]);
  }
  if (count === 0)
    throw new IngestError(
      'malformed',
      'expected "frame;frame;… COUNT" (frames root first, then a non-negative count)',
      firstSkipped || undefined,
    );
  const comments = skipped > 0 ? [skippedNote(skipped, skippedLines)] : [];
  return b.build({ defaultSampleType: 'samples', comments });
}
