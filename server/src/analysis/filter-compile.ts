import type { FrameFilters } from './filter.ts';
import { GoRegexpError, compileGoRegexp } from './go-regexp.ts';
import { TagFilterError, compileTagFilter } from './tag-filter.ts';

/** A filter expression Go or pprof would refuse, or one past a limit: the message names the filter. */
export class FilterSyntaxError extends Error {
  constructor(
    /** The filter at fault (`focus`, `tagfocus`…). */
    readonly param: keyof FrameFilters,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Compiles pprof's filters, one expression each, with Go's syntax and pprof's rules: the name filters and
 * tagshow/taghide as Go regular expressions, tagfocus/tagignore as pprof's `[KEY=]RANGE|REGEXPS`. The one
 * compiler the server's views and the CLI's flags share: the filters are compiled in the order given (the
 * first bad one is the one named), each message names the filter as `label` spells it (`focus` for a query
 * parameter, `--focus` for a flag). With `maxLength`, a longer expression is refused.
 */
export function compileFrameFilters(
  sources: Partial<Record<keyof FrameFilters, string>>,
  opts: { label?: (name: string) => string; maxLength?: number } = {},
): FrameFilters {
  const label = opts.label ?? ((n: string) => n);
  const maxLength = opts.maxLength ?? Number.POSITIVE_INFINITY;
  const out: FrameFilters = {};
  for (const [key, src] of Object.entries(sources) as [keyof FrameFilters, string | undefined][]) {
    if (src === undefined || src === '') continue;
    const name = label(key);
    if (key === 'tagfocus' || key === 'tagignore') {
      if (src.length > maxLength) throw new FilterSyntaxError(key, `${name} is longer than ${maxLength} characters`);
      try {
        out[key] = compileTagFilter(src, maxLength);
      } catch (e) {
        if (!(e instanceof TagFilterError)) throw e;
        throw new FilterSyntaxError(key, `${name}: ${e.message}`);
      }
      continue;
    }
    try {
      out[key] = compileGoRegexp(src, { maxLength });
    } catch (e) {
      if (!(e instanceof GoRegexpError)) throw e;
      throw new FilterSyntaxError(
        key,
        e.tooComplex ? `${name} ${e.message}` : `${name} is not a valid Go regular expression: ${e.message}`,
      );
    }
  }
  return out;
}
