import type { CodeChange, CodeFunction } from './changes.ts';
import { formatChange, formatValue } from './format.ts';
import { formatPN, noVerdictReason } from './words.ts';

/*
 * "The code change" in words, one wording for the page, the report and the CLI: a function's code
 * status, its cost in both stages and the verdict.
 */

const CODE_WORDS: Record<CodeFunction['code'], string> = {
  edited: 'edited',
  added: 'added',
  removed: 'removed',
  same: 'code unchanged',
  outside: 'not in the sources (standard library or a dependency)',
};

/** "edited (+13 −10 lines, main.go)", "added (encode.go)", "code unchanged (handler.go)". */
export function codeStatusWords(f: CodeFunction): string {
  const where: string[] = [];
  if (f.code === 'edited') where.push(`+${f.linesAdded} −${f.linesRemoved} lines`);
  if (f.file) where.push(f.file);
  if ((f.code === 'added' || f.code === 'removed') && !f.fileOnBothSides)
    where.push(
      `a file the ${f.code === 'added' ? 'base' : 'target'}'s sources do not hold: new, or never named by its profiles`,
    );
  return where.length > 0 ? `${CODE_WORDS[f.code]} (${where.join(', ')})` : CODE_WORDS[f.code];
}

/** The verdict of a function's cost: "significant (p=…, q=…, n=6+6)", "~ within the noise (…)", … */
export function codeVerdictWords(f: CodeFunction): string {
  const v = f.verdict;
  if (!v) return 'not tested (not among the functions the diff tests)';
  if (v.status === 'significant') return `significant (${formatPN(v)})`;
  if (v.status === 'no-change')
    return v.p === null ? 'within the noise (below the tested floor)' : `~ within the noise (${formatPN(v)})`;
  return noVerdictReason(v);
}

/** "12.3 µs → 4.1 µs per request (−67 %)", "0 → 2.0 µs", "never sampled". */
export function codeCostWords(f: CodeFunction, unit: string): string {
  if (f.base === null && f.target === null) return 'never sampled in either stage';
  const pct = f.deltaPercent !== null && f.base ? ` (${formatChange(1 + f.deltaPercent / 100)})` : '';
  return `${formatValue(f.base ?? 0, unit)} → ${formatValue(f.target ?? 0, unit)}${pct}`;
}

/** One line per function: "main.encode edited (+3 −1 lines, main.go): 235 ms/s → 102 ms/s (−57 %); significant (…)". */
export function codeFunctionLine(f: CodeFunction, unit: string): string {
  return `${f.name} ${codeStatusWords(f)}: ${codeCostWords(f, unit)}; ${codeVerdictWords(f)}`;
}

/**
 * The code change in a few sentences: what changed in the code, then the costs that moved in code that
 * did not change (or that none did, with the nearest p-values).
 */
export function codeChangeSummary(c: CodeChange): string[] {
  if (c.status !== 'ok') return [c.message ?? 'no code change to show'];
  const count = (k: CodeFunction['code']) => c.changed.filter((f) => f.code === k).length;
  const parts = (['edited', 'added', 'removed'] as const)
    .map((k) => [k, count(k)] as const)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => `${n} ${k}`);
  const rev = (s: NonNullable<CodeChange['base']>) =>
    s.revision ? `${s.revision.slice(0, 12)}${s.dirty ? ' (dirty)' : ''}` : 'no revision';
  const out = [
    `${parts.length > 0 ? `Functions ${parts.join(', ')}` : 'No function of the sources changed'} between ${rev(c.base!)} and ${rev(c.target!)}.`,
  ];
  if (c.indirect.length > 0)
    out.push(
      `${c.indirect.length} function${c.indirect.length === 1 ? '' : 's'} whose code did not change moved significantly: ${c.indirect
        .slice(0, 3)
        .map((f) => `${f.name} ${codeCostWords(f, c.unit)}`)
        .join('; ')}.`,
    );
  else
    out.push(
      `No function whose code did not change moved significantly (${c.tested} tested)${
        c.closest.length > 0
          ? `; the nearest: ${c.closest.map((f) => `${f.name} ${f.verdict ? formatPN(f.verdict) : ''}`).join('; ')}`
          : ''
      }.`,
    );
  return out;
}
