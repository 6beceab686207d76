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
 * Largest compiled program accepted, in instructions. Go's own limits (repeat counts ≤ 1000) still
 * let 512 characters compile to 125k instructions; compiling costs ~10 µs per instruction and
 * matching up to (program size × input length) steps per distinct string. Filters people write
 * (names, alternations of names, a few classes) compile to well under 1,000.
 */
export const MAX_PROGRAM_SIZE = 5_000;

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
  // Refuse a pattern whose repetitions expand past the limit before paying for compiling it.
  const estimate = estimateProgramSize(source);
  if (estimate > MAX_PROGRAM_SIZE)
    throw new GoRegexpError(
      `is too complex: its repetitions expand to about ${Math.round(estimate)} instructions (limit ${MAX_PROGRAM_SIZE})`,
      true,
    );
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

interface Group {
  /** Instructions of the finished alternatives. */
  alts: number;
  /** Instructions of the alternative being read. */
  seq: number;
  /** Instructions of its last element, which a following repetition applies to. */
  last: number;
  /** A capturing group saves where it starts and ends: two instructions. */
  capture: boolean;
}

const REPEAT = /^\{(\d+)(,(\d*))?\}/;

/**
 * The instructions a pattern compiles to, estimated from its text alone in one pass: a repetition
 * x{n,m} costs n copies of x plus m−n optional ones, x*, x+, x? one more than x, a capturing group
 * two more than its content, an alternation one per branch, anything else one. Any text is accepted:
 * it runs before the syntax is checked.
 */
export function estimateProgramSize(src: string): number {
  const stack: Group[] = [{ alts: 0, seq: 0, last: 0, capture: false }];
  let top = stack[0]!;
  const atom = (size: number) => {
    top.seq += size;
    top.last = size;
  };
  const close = () => {
    const g = stack.pop()!;
    top = stack[stack.length - 1]!;
    atom(g.alts + g.seq + (g.capture ? 2 : 0));
  };
  const n = src.length;
  let i = 0;
  while (i < n) {
    const c = src[i]!;
    if (c === '\\') {
      const d = src[i + 1];
      if (d === 'Q') {
        const e = src.indexOf('\\E', i + 2);
        const end = e < 0 ? n : e;
        top.seq += end - (i + 2);
        top.last = 1;
        i = e < 0 ? n : e + 2;
      } else if ((d === 'p' || d === 'P' || d === 'x') && src[i + 2] === '{') {
        const e = src.indexOf('}', i + 3);
        i = e < 0 ? n : e + 1;
        atom(1);
      } else {
        i += d === 'p' || d === 'P' ? 3 : d === 'x' ? 4 : 2;
        atom(1);
      }
    } else if (c === '[') {
      let j = i + 1;
      if (src[j] === '^') j++;
      if (src[j] === ']') j++;
      while (j < n && src[j] !== ']') {
        if (src[j] === '\\') j += 2;
        else if (src[j] === '[' && src[j + 1] === ':') {
          const e = src.indexOf(':]', j + 2);
          j = e < 0 ? j + 1 : e + 2;
        } else j++;
      }
      i = j + 1;
      atom(1);
    } else if (c === '(') {
      let j = i + 1;
      let capture = true;
      if (src[j] === '?') {
        j++;
        if (src[j] === 'P') j++;
        if (src[j] === '<') {
          const e = src.indexOf('>', j);
          j = e < 0 ? n : e + 1;
        } else {
          while (j < n && /[a-zA-Z-]/.test(src[j]!)) j++;
          if (src[j] === ')') {
            i = j + 1; // flags alone, such as (?i): no group
            continue;
          }
          j++; // the ':' of (?:…) or (?i:…)
          capture = false;
        }
      }
      top = { alts: 0, seq: 0, last: 0, capture };
      stack.push(top);
      i = j;
    } else if (c === ')') {
      if (stack.length > 1) close();
      i++;
    } else if (c === '|') {
      top.alts += top.seq + 1;
      top.seq = 0;
      top.last = 0;
      i++;
    } else if (c === '*' || c === '+' || c === '?') {
      top.seq += 1;
      top.last += 1;
      i++;
    } else if (c === '{' && REPEAT.test(src.slice(i, i + 24))) {
      const m = REPEAT.exec(src.slice(i, i + 24))!;
      // Go refuses counts over 1000; capping keeps the estimate finite whatever the text says.
      const lo = Math.min(Number(m[1]), 1001);
      const hi = m[2] === undefined ? lo : m[3] === '' ? lo + 1 : Math.min(Number(m[3]), 1001);
      const x = top.last;
      const expanded = x * lo + (x + 1) * Math.max(0, hi - lo);
      top.seq += expanded - x;
      top.last = expanded;
      i += m[0].length;
    } else {
      atom(1);
      i++;
    }
  }
  while (stack.length > 1) close();
  return top.alts + top.seq;
}
