import type { Profile } from '../model/profile.ts';
import { stackTotals } from './flat-cum.ts';
import { type FrameKeys, functionKeys } from './frame-keys.ts';

/**
 * Exports one sample type as folded stacks (Brendan Gregg's format): one line per distinct call
 * path, `root;caller;leaf VALUE`, sorted by path, each frame named at the granularity of `keys`. A
 * `;` or line break inside a name would break the format, so those characters are replaced (`;` by
 * `:`, line breaks by spaces).
 * Paths whose values sum to zero are omitted. Samples with an empty stack (Go writes some, e.g.
 * goroutine profiles and CPU samples taken outside any frame) become one `[no stack]` frame, so the
 * export's total equals the profile's.
 */
export function toFolded(p: Profile, sampleIndex: number, keys: FrameKeys = functionKeys(p)): string {
  const { keys: names, frameKey: frameName } = keys;
  const safe = names.map((n) => n.replace(/;/g, ':').replace(/[\r\n]+/g, ' '));
  const values = stackTotals(p, sampleIndex);
  const byPath = new Map<string, number>();
  for (let st = 0; st < values.length; st++) {
    const v = values[st]!;
    if (v === 0) continue;
    const start = p.stackOffsets[st]!;
    const end = p.stackOffsets[st + 1]!;
    const parts: string[] = start === end ? ['[no stack]'] : [];
    for (let i = end - 1; i >= start; i--) parts.push(safe[frameName[p.stackFrames[i]!]!]!);
    const key = parts.join(';');
    byPath.set(key, (byPath.get(key) ?? 0) + v);
  }
  const lines = [...byPath].filter(([, v]) => v !== 0).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return lines.map(([k, v]) => `${k} ${v}\n`).join('');
}
