import type { FrameFilters } from '../analysis/filter.ts';
import { GoRegexpError, type GoRegexp, MAX_PATTERN_LENGTH, compileGoRegexp } from '../analysis/go-regexp.ts';
import type { Granularity } from '../analysis/granularity.ts';
import { TagFilterError, compileTagFilter } from '../analysis/tag-filter.ts';
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
export interface FilterArgs {
  focus?: string;
  ignore?: string;
  hide?: string;
  show?: string;
  tagfocus?: string;
  tagignore?: string;
  tagshow?: string;
  taghide?: string;
}

/** pprof's filter parameters, in the order pprof applies them. */
export const FILTER_NAMES = ['focus', 'ignore', 'hide', 'show'] as const;
/** pprof's tag (label) filters, applied after the others. */
export const TAG_FILTER_NAMES = ['tagfocus', 'tagignore', 'tagshow', 'taghide'] as const;

/**
 * The filters of a query, one expression each: a name filter given several times means its values
 * joined with "|"; a tag filter is taken as given.
 */
export function filterArgs(q: { [K in keyof FilterArgs]?: string | string[] }): FilterArgs {
  const out: FilterArgs = {};
  for (const name of FILTER_NAMES) {
    const v = q[name];
    const src = Array.isArray(v) ? v.filter((x) => x !== '').join('|') : v;
    if (src) out[name] = src;
  }
  for (const name of TAG_FILTER_NAMES) {
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

/** Compiles the filters a client sent; a bad expression is refused naming its parameter. */
export function compileFilters(q: { [K in keyof FilterArgs]?: string | string[] }): FrameFilters {
  const args = filterArgs(q);
  const f: FrameFilters = {};
  for (const name of FILTER_NAMES) {
    const re = filterRegexp(name, args[name]);
    if (re) f[name] = re;
  }
  for (const name of ['tagfocus', 'tagignore'] as const) {
    const src = args[name];
    if (!src) continue;
    if (src.length > MAX_PATTERN_LENGTH)
      throw new ServiceError('invalid-filter', `${name} is longer than ${MAX_PATTERN_LENGTH} characters`, {
        param: name,
      });
    try {
      f[name] = compileTagFilter(src, MAX_PATTERN_LENGTH);
    } catch (e) {
      if (!(e instanceof TagFilterError)) throw e;
      throw new ServiceError('invalid-filter', `${name}: ${e.message}`, { param: name });
    }
  }
  for (const name of ['tagshow', 'taghide'] as const) {
    const re = filterRegexp(name, args[name]);
    if (re) f[name] = re;
  }
  return f;
}

/** The granularity a query asks for (functions unless said). */
export function granularityOf(q: { granularity?: Granularity }): Granularity {
  return q.granularity ?? 'functions';
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
    mode: q.mode ?? 'auto',
    ...treeQuery(q),
    filters: compileFilters(q),
    granularity: granularityOf(q),
  };
}
