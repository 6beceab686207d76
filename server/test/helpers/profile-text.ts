/**
 * A tiny text language for profiles in logic tests: one sample a line, frames root first separated
 * by `;` (as folded stacks are written), then one value per sample type.
 *
 *   profileFromText(`
 *     main;handler;json.Marshal 30
 *     main;handler;log.Write    10
 *   `)
 *
 * and `formatTree` prints a call tree back as indented lines, children in name order, so a test
 * compares a whole tree with one `toEqual` on readable text.
 */
import type { FlameNode } from '../../src/analysis/call-tree.ts';
import type { DiffNode } from '../../src/analysis/diff.ts';
import { ProfileBuilder } from '../../src/model/profile-builder.ts';
import type { Profile, ValueType } from '../../src/model/profile.ts';

export const CPU: ValueType[] = [{ type: 'cpu', unit: 'nanoseconds' }];

export function profileFromText(text: string, sampleTypes: ValueType[] = CPU): Profile {
  const b = new ProfileBuilder('pprof', sampleTypes);
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const parts = line.split(/\s+/);
    const values = parts.slice(-sampleTypes.length).map(Number);
    const stack = parts.slice(0, -sampleTypes.length).join(' ');
    if (values.some((v) => !Number.isFinite(v))) throw new Error(`bad values in "${line}"`);
    const frames = stack === '' ? [] : stack.split(';').reverse(); // leaf first
    b.addSample(
      frames.map((name) => ({ name })),
      values,
    );
  }
  return b.build();
}

function isDiff(n: FlameNode | DiffNode): n is DiffNode {
  return 'delta' in n;
}

/** `name value` per node (diff nodes: `name base → target (Δ delta)`), two spaces a level. */
export function formatTree(root: FlameNode | DiffNode, depth = 0): string[] {
  const label = isDiff(root)
    ? `${root.name} ${root.base} → ${root.target} (Δ ${root.delta >= 0 ? '+' : ''}${root.delta})`
    : `${root.name} ${root.value}`;
  const kids = [...(root.children as (FlameNode | DiffNode)[])].sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : 0,
  );
  return [`${'  '.repeat(depth)}${label}`, ...kids.flatMap((c) => formatTree(c, depth + 1))];
}
