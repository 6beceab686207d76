/**
 * Where a Go function's text ends, read from its file as gofmt lays it out: a top-level `func` ends at the
 * first line after it that is a lone `}` at the start of the line, or on its own line when the line closes
 * every brace it opens (`func f() int { return 1 }`). Bounded: at most `maxLines` lines are read, and a
 * `func` line met first means the extent is unknown (text not laid out by gofmt).
 */
export function functionEnd(lines: readonly string[], funcLine: number, maxLines: number): number | null {
  const first = lines[funcLine - 1];
  if (first === undefined || !/^func\b/.test(first)) return null;
  if (oneLineBody(first)) return funcLine;
  const last = Math.min(lines.length, funcLine + maxLines);
  for (let l = funcLine + 1; l <= last; l++) {
    const text = lines[l - 1]!;
    if (/^}\s*(\/\/.*)?$/.test(text)) return l;
    if (/^func\b/.test(text)) return null;
  }
  return null;
}

/** A `func` line that opens its body and closes it again (outside strings, runes and comments). */
function oneLineBody(text: string): boolean {
  let depth = 0;
  let opened = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') break;
    if (c === '"' || c === "'" || c === '`') {
      // Skip the literal (an escape skips the character after it; a raw string has none).
      for (i++; i < text.length && text[i] !== c; i++) if (c !== '`' && text[i] === '\\') i++;
      continue;
    }
    if (c === '{') {
      depth++;
      opened = true;
    } else if (c === '}') depth--;
  }
  return opened && depth === 0 && /}\s*(\/\/.*)?$/.test(text);
}
