import { type FrameFilters, filterProfile, hasFilters } from '../analysis/filter.ts';
import { FilterSyntaxError, compileFrameFilters } from '../analysis/filter-compile.ts';
import { FILTERS, type FilterName, NAME_FILTERS } from '../api/options.ts';
import type { Profile } from '../model/profile.ts';
import { type Flags, UsageError } from './flags.ts';

/**
 * `--focus --ignore --hide --show`, each repeatable (values joined with "|", as pprof joins them), and
 * pprof's tag filters `--tagfocus --tagignore --tagshow --taghide` (one value each): options.ts FILTERS.
 */
export const FILTER_FLAGS = Object.fromEntries(
  FILTERS.map((name) => [name, (NAME_FILTERS as readonly string[]).includes(name) ? 'strings' : 'string']),
) as { [K in FilterName]: K extends (typeof NAME_FILTERS)[number] ? 'strings' : 'string' };

/** The filter expressions given on the command line, as typed (for the output to echo). */
export function filterSources(flags: Flags): Partial<Record<FilterName, string>> {
  const out: Partial<Record<FilterName, string>> = {};
  for (const name of FILTERS) {
    const v = flags.values[name];
    const src = (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []).filter((x) => x !== '').join('|');
    if (src !== '') out[name] = src;
  }
  return out;
}

/**
 * Compiles the filter flags with Go's syntax and pprof's rules (analysis/filter-compile.ts, the compiler
 * the server's views share); a bad one is a usage error naming the flag.
 */
export function compileFilterFlags(flags: Flags): FrameFilters {
  try {
    return compileFrameFilters(filterSources(flags), { label: (name) => `--${name}` });
  } catch (e) {
    if (!(e instanceof FilterSyntaxError)) throw e;
    throw new UsageError(e.message);
  }
}

/** The profile as `go tool pprof` sees it with the same filters. */
export function applyFilters(p: Profile, f: FrameFilters): Profile {
  return hasFilters(f) ? filterProfile(p, f) : p;
}
