/**
 * The names `go tool pprof` prints by default. When it loads a profile, pprof tidies each function
 * name that its symbol name (system_name) repeats and that looks like C++ already demangled: one
 * holding `[`, `]`, `<`, `>` or `::`, unless it holds `.<` (Java's `Class.<init>`) or `]).` (a Go
 * method of a generic type, `pkg.(*T[…]).M`). From such a name it drops every balanced
 * parenthesised group (argument lists) and then every balanced angle-bracketed group (template
 * arguments). So Go's `sync.OnceValue[go.shape.func() int]` prints as `sync.OnceValue[go.shape.func int]`.
 * Only `-symbolize=none` shows the names as written; stagediff shows the short form where pprof
 * does and keeps the full one (hover, exports).
 */
export function pprofShortName(name: string, systemName: string): string {
  if (name !== '' && systemName !== name) return name;
  if (!looksDemangled(name)) return name;
  return dropGroups(dropGroups(name, '(', ')'), '<', '>');
}

function looksDemangled(s: string): boolean {
  if (s.includes('.<') || s.includes(']).')) return false;
  return /[<>[\]]/.test(s) || s.includes('::');
}

/**
 * Removes each outermost balanced open…close group; a close without its open leaves the name as it
 * was, an open never closed stays (as pprof's own rule has it).
 */
function dropGroups(name: string, open: string, close: string): string {
  let out = name;
  let depth = 0;
  let first = 0;
  for (let i = 0; i < out.length; i++) {
    const c = out[i];
    if (c === open) {
      depth++;
      if (depth === 1) first = i;
    } else if (c === close) {
      depth--;
      if (depth < 0) return out;
      if (depth === 0) {
        out = out.slice(0, first) + out.slice(i + 1);
        i = first - 1;
      }
    }
  }
  return out;
}
