/**
 * Go syntax highlighting as tokens (refractor: Prism's grammars giving a syntax tree, never an HTML
 * string): each token is its text and its classes, rendered by React as text, so source text can never
 * become markup.
 */
import { refractor } from 'refractor/core';
import go from 'refractor/go';

refractor.register(go);

export interface Token {
  text: string;
  /** Prism's token classes (e.g. `keyword`, `string`, `comment`); empty for plain text. */
  classes: string[];
}

/** A node of the syntax tree refractor gives (its own hast types, not restated here). */
type Root = ReturnType<typeof refractor.highlight>;
type Node = Root | Root['children'][number];

function walk(node: Node, classes: string[], out: Token[]) {
  if (node.type === 'text') {
    if (node.value) out.push({ text: node.value, classes });
    return;
  }
  const own = node.type === 'element' ? node.properties.className : undefined;
  const next = Array.isArray(own) ? [...classes, ...own.map(String).filter((c) => c !== 'token')] : classes;
  if (node.type === 'root' || node.type === 'element') for (const child of node.children) walk(child, next, out);
}

/** The tokens of one line of Go. */
export function goTokens(line: string): Token[] {
  const out: Token[] = [];
  walk(refractor.highlight(line, 'go'), [], out);
  return out;
}
