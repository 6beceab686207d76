import type { Frame, Profile } from '../../src/model/profile.ts';
import { ProfileBuilder } from '../../src/model/profile-builder.ts';
import { flatCum, total } from '../../src/analysis/flat-cum.ts';

const PCT = String.raw`-?[\d.]+(?:e[-+]?\d+)?%`;
const ROW = new RegExp(String.raw`^\s*(-?[\d.]+)[a-zA-Z]*\s+${PCT}\s+${PCT}\s+(-?[\d.]+)[a-zA-Z]*\s+${PCT}\s+(.*)$`);

/**
 * Reads `go tool pprof -top -nodecount=0 -unit=<unit>` text: exact integer flat/cum per function.
 * Every row of the table must parse: a row it cannot read is an error, never silently skipped.
 */
export function parseTopAll(text: string): Map<string, [number, number]> {
  const out = new Map<string, [number, number]>();
  let inTable = false;
  for (const line of text.split('\n')) {
    if (/^\s+flat\s+flat%/.test(line)) {
      inTable = true;
      continue;
    }
    if (!inTable || line.trim() === '') continue;
    const m = ROW.exec(line);
    if (!m) throw new Error(`unreadable pprof -top row: ${line}`);
    const name = m[3]!.replace(/ \((partial-)?inline\)$/, '');
    out.set(name, [Number(m[1]), Number(m[2])]);
  }
  return out;
}

/**
 * Reads the kept total from `go tool pprof -top -nodecount=0 -nodefraction=0` text: "Showing nodes
 * accounting for X, …", the sum of every function's flat once the filters applied. X must carry no
 * unit beyond a suffix (pass -unit=<the sample type's unit>), or be 0.
 */
export function parseTopShown(text: string): number {
  const m = /^Showing nodes accounting for (-?[\d.]+(?:e[-+]?\d+)?)[a-zA-Z]*, /m.exec(text);
  if (!m) throw new Error(`no "Showing nodes accounting for" line in pprof output:\n${text.slice(0, 2000)}`);
  return Number(m[1]);
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
