import type { Diff } from './api.ts';

/**
 * A function name's hover text: the name as the profile writes it when the row shows `go tool pprof`'s
 * short form (several, a line each, when pprof merged them into one row), else the name itself.
 */
export function fullNameTitle(name: string, fullNames: Diff['fullNames']): string {
  // Own keys only: a function may be named `constructor` or `__proto__` (names are untrusted).
  const full = fullNames && Object.hasOwn(fullNames, name) ? fullNames[name] : undefined;
  return Array.isArray(full) && full.length > 0 ? full.join('\n') : name;
}
