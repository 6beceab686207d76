import { type FrameFilters, filterProfile, hasFilters } from '../analysis/filter.ts';
import { GoRegexpError, compileGoRegexp } from '../analysis/go-regexp.ts';
import type { Profile } from '../model/profile.ts';
import { type Flags, UsageError } from './main.ts';

/** `--focus --ignore --hide --show`, each repeatable (values joined with "|", as pprof joins them). */
export const FILTER_FLAGS = { focus: 'strings', ignore: 'strings', hide: 'strings', show: 'strings' } as const;

/** The filter expressions given on the command line, as typed (for the output to echo). */
export function filterSources(flags: Flags): Partial<Record<keyof FrameFilters, string>> {
  const out: Partial<Record<keyof FrameFilters, string>> = {};
  for (const name of Object.keys(FILTER_FLAGS) as (keyof FrameFilters)[]) {
    const v = flags.values[name];
    const src = (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []).filter((x) => x !== '').join('|');
    if (src !== '') out[name] = src;
  }
  return out;
}

/** Compiles the filter flags with Go's syntax; a bad one is a usage error naming the flag. */
export function compileFilterFlags(flags: Flags): FrameFilters {
  const out: FrameFilters = {};
  for (const [name, src] of Object.entries(filterSources(flags)) as [keyof FrameFilters, string][]) {
    try {
      out[name] = compileGoRegexp(src);
    } catch (e) {
      if (!(e instanceof GoRegexpError)) throw e;
      throw new UsageError(
        e.tooComplex ? `--${name} ${e.message}` : `--${name} is not a valid Go regular expression: ${e.message}`,
      );
    }
  }
  return out;
}

/** The profile as `go tool pprof` sees it with the same -focus/-ignore/-hide/-show. */
export function applyFilters(p: Profile, f: FrameFilters): Profile {
  return hasFilters(f) ? filterProfile(p, f) : p;
}
