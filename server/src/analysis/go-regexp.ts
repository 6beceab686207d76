import { RE2JS, RE2JSException } from 're2js';

/**
 * Regular expressions with Go's syntax and semantics (RE2: what `go tool pprof` compiles its
 * -focus/-ignore/-hide/-show and a profile's drop_frames with), matched in time linear in the input
 * whatever the pattern. JavaScript's own RegExp backtracks: `(a+)+b` against forty "a" never ends.
 */
export interface GoRegexp {
  readonly source: string;
  /** True when the expression matches anywhere in `s` (Go's MatchString: unanchored). */
  test(s: string): boolean;
}

/** Longest pattern a client may send, in characters. */
export const MAX_PATTERN_LENGTH = 512;
/**
 * Largest compiled program accepted, in instructions. Matching costs up to (program size × input
 * length) steps per distinct string; Go's own limits (repeat counts ≤ 1000) still let 512
 * characters compile to ~70k instructions, which would make one filter cost seconds.
 */
export const MAX_PROGRAM_SIZE = 10_000;

/** A pattern Go's regexp package rejects, or one beyond our limits; `message` says which and why. */
export class GoRegexpError extends Error {
  constructor(
    message: string,
    /** True when Go would accept the pattern and only our size limits refuse it. */
    readonly tooComplex = false,
  ) {
    super(message);
  }
}

/**
 * Compiles `source` as Go's `regexp.Compile` does (same syntax, same error messages: "error parsing
 * regexp: invalid or unsupported Perl syntax: `(?=`"). Throws GoRegexpError.
 */
export function compileGoRegexp(source: string, limits: { maxLength?: number } = {}): GoRegexp {
  const maxLength = limits.maxLength ?? Number.POSITIVE_INFINITY;
  if (source.length > maxLength) throw new GoRegexpError(`is longer than ${maxLength} characters`, true);
  let re: RE2JS;
  try {
    re = RE2JS.compile(source);
  } catch (e) {
    if (e instanceof RE2JSException) throw new GoRegexpError(e.message);
    throw e;
  }
  const size = re.programSize();
  if (size > MAX_PROGRAM_SIZE)
    throw new GoRegexpError(`is too complex: it compiles to ${size} instructions (limit ${MAX_PROGRAM_SIZE})`, true);
  return { source, test: (s) => re.test(s) };
}
