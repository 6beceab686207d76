import { type FrameFilters, filterProfile, hasFilters } from '../analysis/filter.ts';
import { GoRegexpError, compileGoRegexp } from '../analysis/go-regexp.ts';
import { TagFilterError, compileTagFilter } from '../analysis/tag-filter.ts';
import type { Profile } from '../model/profile.ts';
import { type Flags, UsageError } from './flags.ts';

type NameFilter = 'focus' | 'ignore' | 'hide' | 'show';
type TagFilter = 'tagfocus' | 'tagignore' | 'tagshow' | 'taghide';

/**
 * `--focus --ignore --hide --show`, each repeatable (values joined with "|", as pprof joins them), and
 * pprof's tag filters `--tagfocus --tagignore --tagshow --taghide` (one value each).
 */
export const FILTER_FLAGS = {
  focus: 'strings',
  ignore: 'strings',
  hide: 'strings',
  show: 'strings',
  tagfocus: 'string',
  tagignore: 'string',
  tagshow: 'string',
  taghide: 'string',
} as const;

const NAME_FILTERS: NameFilter[] = ['focus', 'ignore', 'hide', 'show'];
const TAG_FILTERS: TagFilter[] = ['tagfocus', 'tagignore', 'tagshow', 'taghide'];

/** The filter expressions given on the command line, as typed (for the output to echo). */
export function filterSources(flags: Flags): Partial<Record<NameFilter | TagFilter, string>> {
  const out: Partial<Record<NameFilter | TagFilter, string>> = {};
  for (const name of [...NAME_FILTERS, ...TAG_FILTERS]) {
    const v = flags.values[name];
    const src = (Array.isArray(v) ? v : typeof v === 'string' ? [v] : []).filter((x) => x !== '').join('|');
    if (src !== '') out[name] = src;
  }
  return out;
}

/** Compiles the filter flags with Go's syntax and pprof's rules; a bad one is a usage error naming the flag. */
export function compileFilterFlags(flags: Flags): FrameFilters {
  const out: FrameFilters = {};
  const sources = filterSources(flags);
  const regexp = (name: string, src: string) => {
    try {
      return compileGoRegexp(src);
    } catch (e) {
      if (!(e instanceof GoRegexpError)) throw e;
      throw new UsageError(
        e.tooComplex ? `--${name} ${e.message}` : `--${name} is not a valid Go regular expression: ${e.message}`,
      );
    }
  };
  for (const name of [...NAME_FILTERS, 'tagshow', 'taghide'] as const) {
    const src = sources[name];
    if (src !== undefined) out[name] = regexp(name, src);
  }
  for (const name of ['tagfocus', 'tagignore'] as const) {
    const src = sources[name];
    if (src === undefined) continue;
    try {
      out[name] = compileTagFilter(src);
    } catch (e) {
      if (!(e instanceof TagFilterError)) throw e;
      throw new UsageError(`--${name}: ${e.message}`);
    }
  }
  return out;
}

/** The profile as `go tool pprof` sees it with the same filters. */
export function applyFilters(p: Profile, f: FrameFilters): Profile {
  return hasFilters(f) ? filterProfile(p, f) : p;
}
