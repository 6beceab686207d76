import type { FrameFilters } from '../analysis/filter.ts';
import { GoRegexpError, type GoRegexp, MAX_PATTERN_LENGTH, compileGoRegexp } from '../analysis/go-regexp.ts';
import { FilterSyntaxError, compileFrameFilters } from '../analysis/filter-compile.ts';
import { type FilterName, NAME_FILTERS, TAG_FILTERS } from '../api/options.ts';
import type { Query } from '../api/endpoints.ts';
import { DEFAULT_MAX_TREE_NODES } from '../api/views.ts';
import type { ProfileKind } from '../model/profile.ts';
import type { DiffQuery } from './analysis.ts';
import { ServiceError } from './errors.ts';

/*
 * What a view's query asks for, read once for every view and image: the profile kind and sample type,
 * pprof's filters (compiled, refused with the parameter named), and a diff's full request.
 */

/** Filter regular expressions as sent by a client (Go syntax; compiled where the work happens). */
export type FilterArgs = Partial<Record<FilterName, string>>;

/**
 * The filters of a query, one expression each: a name filter given several times means its values
 * joined with "|"; a tag filter is taken as given.
 */
export function filterArgs(q: { [K in keyof FilterArgs]?: string | string[] }): FilterArgs {
  const out: FilterArgs = {};
  for (const name of NAME_FILTERS) {
    const v = q[name];
    const src = Array.isArray(v) ? v.filter((x) => x !== '').join('|') : v;
    if (src) out[name] = src;
  }
  for (const name of TAG_FILTERS) {
    const v = q[name];
    const src = Array.isArray(v) ? v.find((x) => x !== '') : v;
    if (src) out[name] = src;
  }
  return out;
}

/**
 * Compiles a client's filter expression (Go syntax, as `go tool pprof` takes it), refusing one Go
 * rejects (backreferences, lookaround, possessive quantifiers…), one over MAX_PATTERN_LENGTH, or one
 * that compiles too large, naming the parameter and the problem.
 */
export function filterRegexp(name: string, src: string | undefined): GoRegexp | undefined {
  if (src === undefined || src === '') return undefined;
  try {
    return compileGoRegexp(src, { maxLength: MAX_PATTERN_LENGTH });
  } catch (e) {
    if (!(e instanceof GoRegexpError)) throw e;
    const message = e.tooComplex
      ? `${name} ${e.message}`
      : `${name} is not a valid Go regular expression: ${e.message}`;
    throw new ServiceError('invalid-filter', message, { param: name });
  }
}

/**
 * Compiles the filters a client sent (analysis/filter-compile.ts, the compiler the CLI shares); a bad
 * expression is refused naming its parameter.
 */
export function compileFilters(q: { [K in keyof FilterArgs]?: string | string[] }): FrameFilters {
  try {
    return compileFrameFilters(filterArgs(q), { maxLength: MAX_PATTERN_LENGTH });
  } catch (e) {
    if (!(e instanceof FilterSyntaxError)) throw e;
    throw new ServiceError('invalid-filter', e.message, { param: e.param });
  }
}

/** The kind and sample type a query asks for (absent ones left out). */
export function choice(q: { kind?: ProfileKind; sampleType?: string }) {
  return { ...(q.kind ? { kind: q.kind } : {}), ...(q.sampleType ? { sampleType: q.sampleType } : {}) };
}

/** The call path a query roots its tree at: `root` given once or once per frame; absent or '' is the whole tree. */
export function callPath(root: string | string[] | undefined): string[] {
  if (root === undefined || root === '') return [];
  return Array.isArray(root) ? root : [root];
}

/** What a tree view asks of its tree: the root, the trim and the node cap. */
export function treeQuery(q: { root?: string | string[]; minFraction?: number; maxNodes?: number }) {
  return {
    root: callPath(q.root),
    minFraction: q.minFraction ?? 0,
    maxNodes: q.maxNodes ?? DEFAULT_MAX_TREE_NODES,
  };
}

/** The diff a query (the JSON view's or an image's) asks for. */
export function diffQuery(q: Query<'diff'> | Query<'diffSvg'>): DiffQuery {
  return {
    base: q.base,
    target: q.target,
    ...choice(q),
    mode: q.mode,
    ...treeQuery(q),
    filters: compileFilters(q),
    granularity: q.granularity,
  };
}
