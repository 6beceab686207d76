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
import type { Frame, Profile, ValueType } from '../../src/model/profile.ts';
import { flatCum, total } from '../../src/analysis/flat-cum.ts';

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

/**
 * Test DSL for frames as pprof's filters see them, one sample per line, root first:
 * `main@main.go[/bin/app];json.Marshal@encode.go[/bin/app] 30`. A frame is `function@file[mapping]`
 * with `@file` and `[mapping]` optional; `[mapping]` alone is a location without line information
 * (named `[basename]`, as pprof names it), `@file` alone a function whose name is empty.
 */
export function profileFromFrames(text: string): Profile {
  const b = new ProfileBuilder('pprof', [{ type: 'samples', unit: 'count' }]);
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const sp = line.lastIndexOf(' ');
    const stack = sp < 0 ? [] : line.slice(0, sp).split(';');
    const frames = stack.reverse().map((tok) => {
      const m = /^([^@[]*)(?:@([^[]*))?(?:\[([^\]]*)\])?$/.exec(tok);
      if (!m) throw new Error(`bad frame "${tok}"`);
      const [, fn = '', file, mapping] = m;
      const origin: Pick<Frame, 'mapping' | 'standIn'> = mapping !== undefined ? { mapping } : {};
      const base = mapping?.split('/').pop() ?? '';
      const standInName = base ? `[${base}]` : '<unknown>';
      if (fn === '' && file === undefined) return { name: standInName, ...origin, standIn: 'no-function' as const };
      if (fn === '') return { name: standInName, file, ...origin, standIn: 'no-name' as const };
      return { name: fn, file: file ?? '', ...origin };
    });
    b.addSample(frames, [Number(line.slice(sp + 1))]);
  }
  return b.build();
}

/** `name flat cum` per function, by name, then `total N`: what the filter tests compare. */
export function topText(p: Profile): string[] {
  const rows = flatCum(p, 0)
    .map((r) => `${r.name} ${r.flat} ${r.cum}`)
    .sort();
  return [...rows, `total ${total(p, 0)}`];
}
