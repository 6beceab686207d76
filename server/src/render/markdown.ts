import { htmlText, oneLine } from '../api/untrusted-text.ts';

/**
 * Untrusted text (function names, stage names, titles) placed into GitHub/GitLab-flavoured Markdown.
 * Every such string goes through one of these; none is ever emitted as markup. Which characters are
 * unsafe, and how an HTML block receives text, is api/untrusted-text.ts's.
 */

/** At most `max` characters (code points), "…" marking a cut. */
export function clip(s: string, max: number): string {
  const cps = [...s.slice(0, max * 2 + 2)];
  return cps.length <= max ? s : `${cps.slice(0, max - 1).join('')}…`;
}

/**
 * Plain text inside a line (never at a line's start): every character that inline Markdown, HTML,
 * GitHub's math, mentions, issue references, emoji codes or autolinks could read is backslash-escaped
 * (CommonMark allows escaping any ASCII punctuation; the backslash is not shown). That includes the
 * dot of a bare `www.` domain, which GitHub would otherwise turn into a link (its "extended www
 * autolink" needs the literal text `www.`).
 */
export function mdText(s: string, max = 300): string {
  return oneLine(clip(s, max))
    .replace(/[\\`*_[\]<>|&~@!:$#]/g, (c) => `\\${c}`)
    .replace(/(www)\./gi, '$1\\.');
}

/**
 * A code span holding the text as is (no emphasis, links, HTML or mentions inside). The fence is one
 * backtick longer than the longest run inside; `|` is escaped so the span can sit in a table cell.
 */
export function mdCode(s: string, max = 200): string {
  const t = oneLine(clip(s, max)).replace(/\|/g, '\\|');
  let longest = 0;
  for (const m of t.matchAll(/`+/g)) longest = Math.max(longest, m[0].length);
  const fence = '`'.repeat(longest + 1);
  const pad = t.startsWith('`') || t.endsWith('`') || (t.startsWith(' ') && t.endsWith(' ') && t.trim()) ? ' ' : '';
  return t === '' ? '` `' : `${fence}${pad}${t}${pad}${fence}`;
}

/** A Markdown table; cells are given already escaped. */
export function mdTable(head: string[], rows: string[][], align?: ('l' | 'r')[]): string {
  const sep = head.map((_, i) => (align?.[i] === 'r' ? '---:' : '---'));
  return [head, sep, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

/**
 * A folded section: `<details><summary>…</summary>`, the body Markdown after a blank line. The summary
 * sits in an HTML block, where Markdown's backslash escapes do nothing: its text is HTML-escaped, and
 * untrusted parts (`{code}`) go in a `<code>` element, where GitHub makes no mentions, references or
 * emoji either.
 */
export function mdDetails(summary: (string | { code: string })[], body: string): string {
  const html = summary
    .map((p) => (typeof p === 'string' ? htmlText(p) : `<code>${htmlText(clip(p.code, 200))}</code>`))
    .join('');
  return `<details><summary>${html}</summary>\n\n${body}\n\n</details>`;
}
