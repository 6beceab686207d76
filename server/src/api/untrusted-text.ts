/**
 * Untrusted text (stage names, titles, notes, sample-type and function names) on its way to a page, a
 * Markdown document, an HTML block or a terminal: the one place that says which characters are unsafe
 * and how each destination receives them. The report's Markdown helpers (render/markdown.ts), the CLI's
 * output and the API's name validation all use it.
 */

/**
 * The characters no name may hold: C0 controls (tab and line breaks included), DEL, C1 controls, and
 * the bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder
 * what a reader sees. As a JSON Schema pattern (validated with the `u` flag).
 */
export const NAME_PATTERN = '^[^\\u0000-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*$';

/** The same for text of several lines (notes, descriptions): tab and line feed allowed, CR not. */
export const NOTE_PATTERN = '^[^\\u0000-\\u0008\\u000b-\\u001f\\u007f-\\u009f\\u202a-\\u202e\\u2066-\\u2069]*$';

/** C0 and C1 controls (DEL included), as a regular expression's class body. */
const CONTROLS = '\\u0000-\\u001f\\u007f-\\u009f';

/** What a refused name is told (the field is named before it). */
export const UNSAFE_TEXT_MESSAGE =
  'must not contain control characters (NUL, escape, bell, carriage return…) or bidirectional overrides (U+202A–U+202E, U+2066–U+2069)';

const LINE_BREAK = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
const CONTROL = new RegExp(`[${CONTROLS}]`, 'g');
const CONTROL_OR_BIDI = new RegExp(`[${CONTROLS}\\u202a-\\u202e\\u2066-\\u2069]`, 'g');

/**
 * Text for a terminal: line breaks and tabs become spaces, every other control character (ESC, BEL,
 * the C1 CSI…) and every bidirectional override is removed. What is left cannot move the cursor, set
 * the title, make a link or reorder the line.
 */
export function termText(s: string): string {
  return s.replace(LINE_BREAK, ' ').replace(CONTROL_OR_BIDI, '');
}

/** Several lines for a terminal: each line as termText (the line feeds kept). */
export function termLines(s: string): string {
  return s
    .split('\n')
    .map((l) => termText(l))
    .join('\n');
}

/** One line of text, controls as spaces and bidirectional overrides removed (for Markdown and HTML). */
export function oneLine(s: string): string {
  return s.replace(LINE_BREAK, ' ').replace(CONTROL, ' ').replace(CONTROL_OR_BIDI, '');
}

/**
 * Text inside an HTML block or element (a `<summary>`): one line, `& < > " '` as entities. Markdown
 * backslash escapes do nothing there (CommonMark passes an HTML block through as is), so text bound
 * for one must come through here, never through mdText.
 */
export function htmlText(s: string): string {
  return oneLine(s).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}
