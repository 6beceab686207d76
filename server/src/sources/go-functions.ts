/**
 * The functions a Go source file declares, with their extents: each top-level `func` declaration from
 * its first line to its closing brace, named as a profile names it (`main.encode`,
 * `example.com/shop/codec.(*Writer).Flush`, `main.Map[...]`). A small scanner, not a parser: it skips
 * comments, strings, raw strings and runes, and tracks brackets, which is all it takes to find where a
 * declaration's body starts and ends in code that compiles. Text that does not (an unclosed body) ends
 * the scan: the functions found before it are kept.
 */

export interface GoFunction {
  /** The function's name as pprof gives it: package path, receiver, name (`pkg.(*T).M`, `pkg.T.M`, `pkg.F`). */
  name: string;
  /** First line (the `func` line, 1-based) and last line (its closing brace) of the declaration. */
  start: number;
  end: number;
  /** The declaration's text, exactly (from `func` to its closing brace). */
  text: string;
}

/** Largest file scanned, in characters: bigger ones are not read for functions. */
export const GO_FUNCTIONS_MAX_CHARS = 4 * 1024 * 1024;

/** The package clause of a Go file (`package codec` → "codec"), or null when it has none. */
export function goPackageName(text: string): string | null {
  const m = /^package\s+([A-Za-z_][A-Za-z0-9_]*)/m.exec(text);
  return m ? m[1]! : null;
}

/**
 * The package path a profile's function names start with, for a file at `path` (module-relative) in a
 * module: `main` for a main package (the linker names it so), else the module path and the file's
 * directory, with dots in the last element escaped as the linker does (`a.b` → `a%2eb`).
 */
export function goSymbolPackage(modulePath: string, path: string, packageName: string): string {
  if (packageName === 'main') return 'main';
  const dir = path.includes('/') ? path.slice(0, path.lastIndexOf('/')) : '';
  const full = dir === '' ? modulePath : modulePath === '' ? dir : `${modulePath}/${dir}`;
  const slash = full.lastIndexOf('/');
  return full.slice(0, slash + 1) + full.slice(slash + 1).replace(/\./g, '%2e');
}

const isIdentStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c > 127;
const isIdentPart = (c: number) => isIdentStart(c) || (c >= 48 && c <= 57);

interface Token {
  /** An identifier, or one punctuation character. */
  text: string;
  pos: number;
}

/**
 * The file's tokens that matter for declarations: identifiers and the brackets `( ) [ ] { }` and `*`,
 * with comments, strings, raw strings and runes skipped (numbers and other operators are dropped).
 */
function tokens(src: string): Token[] {
  const out: Token[] = [];
  const n = src.length;
  let i = 0;
  while (i < n) {
    const c = src.charCodeAt(i);
    if (c === 47 && src.charCodeAt(i + 1) === 47) {
      // line comment
      const e = src.indexOf('\n', i);
      i = e < 0 ? n : e;
    } else if (c === 47 && src.charCodeAt(i + 1) === 42) {
      const e = src.indexOf('*/', i + 2);
      i = e < 0 ? n : e + 2;
    } else if (c === 96) {
      // raw string
      const e = src.indexOf('`', i + 1);
      i = e < 0 ? n : e + 1;
    } else if (c === 34 || c === 39) {
      // interpreted string or rune: up to the unescaped closing quote (or the line's end)
      let j = i + 1;
      while (j < n) {
        const d = src.charCodeAt(j);
        if (d === 92) j += 2;
        else if (d === c || d === 10) break;
        else j++;
      }
      i = j + 1;
    } else if (isIdentStart(c)) {
      let j = i + 1;
      while (j < n && isIdentPart(src.charCodeAt(j))) j++;
      out.push({ text: src.slice(i, j), pos: i });
      i = j;
    } else if (c >= 48 && c <= 57) {
      // a number (and its suffix letters, exponent, hex digits)
      let j = i + 1;
      while (j < n && (isIdentPart(src.charCodeAt(j)) || src.charCodeAt(j) === 46)) j++;
      i = j;
    } else {
      const ch = src[i]!;
      if ('()[]{}*'.includes(ch)) out.push({ text: ch, pos: i });
      i++;
    }
  }
  return out;
}

/** Line numbers (1-based) of character offsets, by a sorted table of line starts. */
function lineIndex(src: string): (pos: number) => number {
  const starts = [0];
  for (let i = src.indexOf('\n'); i >= 0; i = src.indexOf('\n', i + 1)) starts.push(i + 1);
  return (pos) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** The receiver's type as pprof writes it: `*T` → `(*T)`, `T` → `T`, `*List[K, V]` → `(*List[...])`. */
function receiverName(toks: Token[]): string | null {
  // toks: the receiver list's tokens between its parentheses, e.g. [s, *, service] or [l, *, List, [, T, ]]
  let k = 0;
  // a named receiver: its name first, then the type (an unnamed one starts with the type)
  if (toks.length > 1 && toks[0]!.text !== '*' && (toks[1]!.text === '*' || isIdentStart(toks[1]!.text.charCodeAt(0))))
    k = 1;
  let pointer = false;
  if (toks[k]?.text === '*') {
    pointer = true;
    k++;
  }
  const t = toks[k];
  if (!t || !isIdentStart(t.text.charCodeAt(0))) return null;
  const generic = toks[k + 1]?.text === '[';
  const base = `${t.text}${generic ? '[...]' : ''}`;
  return pointer ? `(*${base})` : base;
}

/**
 * The top-level function declarations of a Go file, in order, named under `pkg` (see goSymbolPackage).
 * Functions without a body (implemented in assembly) and files over GO_FUNCTIONS_MAX_CHARS give none.
 */
export function goFunctions(src: string, pkg: string): GoFunction[] {
  if (src.length > GO_FUNCTIONS_MAX_CHARS) return [];
  const toks = tokens(src);
  const lineOf = lineIndex(src);
  const out: GoFunction[] = [];
  let depth = 0;
  for (let i = 0; i < toks.length; i++) {
    const t = toks[i]!;
    if (t.text === '{' || t.text === '(' || t.text === '[') {
      depth++;
      continue;
    }
    if (t.text === '}' || t.text === ')' || t.text === ']') {
      depth = Math.max(0, depth - 1);
      continue;
    }
    // A declaration starts a line (gofmt's layout); `func` elsewhere is a type or a function literal.
    if (depth !== 0 || t.text !== 'func' || (t.pos > 0 && src[t.pos - 1] !== '\n')) continue;
    // func [ (receiver) ] Name [ [type params] ] (params) results { body }
    let j = i + 1;
    let recv: string | null = null;
    if (toks[j]?.text === '(') {
      const from = j + 1;
      let d = 1;
      j++;
      while (j < toks.length && d > 0) {
        if (toks[j]!.text === '(' || toks[j]!.text === '[' || toks[j]!.text === '{') d++;
        else if (toks[j]!.text === ')' || toks[j]!.text === ']' || toks[j]!.text === '}') d--;
        j++;
      }
      recv = receiverName(toks.slice(from, j - 1));
      if (recv === null) continue;
    }
    const nameTok = toks[j];
    if (!nameTok || !isIdentStart(nameTok.text.charCodeAt(0))) continue;
    j++;
    const generic = toks[j]?.text === '[';
    // The body's `{` is the first one outside brackets that does not open a struct or interface type.
    let d = 0;
    let body = -1;
    for (; j < toks.length; j++) {
      const x = toks[j]!.text;
      if (x === '(' || x === '[') d++;
      else if (x === ')' || x === ']') d--;
      else if (x === '{') {
        const prev = toks[j - 1]?.text;
        if (d === 0 && prev !== 'struct' && prev !== 'interface') {
          body = j;
          break;
        }
        d++;
      } else if (x === '}') d--;
      else if (
        d === 0 &&
        src[toks[j]!.pos - 1] === '\n' &&
        (x === 'func' || x === 'type' || x === 'var' || x === 'const' || x === 'import')
      )
        break; // the next declaration: this one had no body
    }
    if (body < 0) {
      // no body (an assembly function): nothing to compare; go on from the next declaration
      i = j - 1;
      continue;
    }
    let e = body + 1;
    for (let bd = 1; e < toks.length; e++) {
      const x = toks[e]!.text;
      if (x === '{' || x === '(' || x === '[') bd++;
      else if (x === '}' || x === ')' || x === ']') bd--;
      if (bd === 0) break;
    }
    if (e >= toks.length) break; // an unclosed body: the file does not compile; keep what was found
    const endPos = toks[e]!.pos;
    const name = `${pkg}.${recv ? `${recv}.` : ''}${nameTok.text}${generic && !recv ? '[...]' : ''}`;
    out.push({ name, start: lineOf(t.pos), end: lineOf(endPos), text: src.slice(t.pos, endPos + 1) });
    i = e;
  }
  return out;
}

/**
 * The declared function a profile's function name belongs to: itself, or for a closure or a
 * deferred/go'd wrapper (`main.run.func1`, `main.(*T).M.func2.1`, `main.F.deferwrap1`, a method value's
 * `main.T.M-fm`) the function whose body holds it; its code changes exactly when that function's does.
 */
export function enclosingFunction(name: string): string {
  return name.replace(/-fm$/, '').replace(/(\.(func|deferwrap|gowrap)\d+(\.\d+)*)+$/, '');
}

/**
 * The declared functions a profile's name may belong to, most likely first: its enclosing function
 * (enclosingFunction), then — for a closure of a function inlined into another, which the compiler
 * names after both (`main.run.metricsHandler.func6` is a closure of `main.metricsHandler` inlined into
 * `main.run`) — the innermost function or method it names. Which one is declared decides.
 */
export function declarationCandidates(name: string): string[] {
  const e = enclosingFunction(name);
  const out = [e];
  if (e === name.replace(/-fm$/, '')) return out;
  const slash = e.lastIndexOf('/');
  const dot = e.indexOf('.', slash + 1);
  if (dot < 0) return out;
  const pkg = e.slice(0, dot);
  // split the rest at dots outside parentheses and brackets: run, (*T), M
  const parts: string[] = [];
  let depth = 0;
  let from = dot + 1;
  for (let i = from; i < e.length; i++) {
    const c = e[i];
    if (c === '(' || c === '[') depth++;
    else if (c === ')' || c === ']') depth--;
    else if (c === '.' && depth === 0) {
      parts.push(e.slice(from, i));
      from = i + 1;
    }
  }
  parts.push(e.slice(from));
  if (parts.length >= 2) out.push(`${pkg}.${parts[parts.length - 1]}`);
  if (parts.length >= 3) out.push(`${pkg}.${parts[parts.length - 2]}.${parts[parts.length - 1]}`);
  return out;
}
