import { IngestError } from './errors.ts';
import { ProfileBuilder } from '../model/profile-builder.ts';
import type { Profile } from '../model/profile.ts';

/**
 * Importer for folded stacks (Brendan Gregg's stackcollapse format, also what many profilers and our
 * own `/folded` export write): one line per stack, frames root first joined by `;`, then whitespace and
 * the stack's value. Frame names may contain spaces (the value is after the last run of whitespace); a
 * `;` inside a name cannot be represented and is usually written as `,` by the producer.
 *
 * The result is a canonical profile with one sample type, `samples/count`, and one sample per line.
 */

export const FOLDED_LIMITS = {
  maxBytes: 256 * 1024 * 1024,
  maxLines: 5_000_000,
  maxDepth: 10_000,
};

const LINE = /^(.*?\S)[ \t]+(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)[ \t]*$/;

/** Confidence that `head` (the first bytes of a file) holds folded stacks. Works without the file name. */
export function detect(head: Buffer, _fileName?: string): number {
  const text = head.subarray(0, 256 * 1024).toString('utf8');
  if (text.includes('\u0000')) return 0;
  let lines = text.split('\n');
  // The head may stop mid-line: judge only complete lines (unless the head is all there is).
  if (lines.length > 1 && !text.endsWith('\n')) lines = lines.slice(0, -1);
  lines = lines
    .map((l) => l.replace(/\r$/, ''))
    .filter((l) => l.trim() !== '')
    .slice(0, 2000);
  if (lines.length === 0) return 0;
  let matching = 0;
  let withCallers = 0;
  for (const l of lines) {
    if (/^\s/.test(l) || l.startsWith(';')) continue;
    const m = LINE.exec(l);
    if (!m) continue;
    matching++;
    if (m[1]!.includes(';')) withCallers++;
  }
  if (matching !== lines.length) return matching / lines.length >= 0.95 && withCallers > 0 ? 0.5 : 0;
  // "name 12" alone could be many things; a `;` somewhere makes it a stack.
  return withCallers > 0 ? 0.9 : 0.3;
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
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const lineNo = i + 1;
    const m = LINE.exec(line);
    if (!m) {
      throw new IngestError(
        'malformed',
        'expected "frame;frame;… COUNT" (frames root first, then a non-negative count)',
        lineNo,
      );
    }
    if (++count > FOLDED_LIMITS.maxLines) {
      throw new IngestError('too-large', `more than ${FOLDED_LIMITS.maxLines} stacks`, lineNo);
    }
    const names = m[1]!.replace(/^\s+/, '').split(';');
    if (names.length > FOLDED_LIMITS.maxDepth) {
      throw new IngestError('too-large', `a stack is deeper than ${FOLDED_LIMITS.maxDepth} frames`, lineNo);
    }
    if (names.some((n) => n === '')) {
      throw new IngestError('malformed', 'empty frame name in stack (";;" or a leading/trailing ";")', lineNo);
    }
    const value = Number(m[2]);
    if (!Number.isFinite(value))
      throw new IngestError('value-out-of-range', `count ${m[2]} is not a finite number`, lineNo);
    const stack = [];
    for (let k = names.length - 1; k >= 0; k--) stack.push({ name: names[k]! });
    b.addSample(stack, [value]);
  }
  return b.build({ defaultSampleType: 'samples' });
}
