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

interface HastNode {
  type: string;
  value?: string;
  properties?: { className?: unknown };
  children?: HastNode[];
}

function walk(node: HastNode, classes: string[], out: Token[]) {
  if (node.type === 'text') {
    if (node.value) out.push({ text: node.value, classes });
    return;
  }
  const own = node.properties?.className;
  const next = Array.isArray(own) ? [...classes, ...own.map(String).filter((c) => c !== 'token')] : classes;
  for (const child of node.children ?? []) walk(child, next, out);
}

/** The tokens of one line of Go. */
export function goTokens(line: string): Token[] {
  const out: Token[] = [];
  walk(refractor.highlight(line, 'go') as HastNode, [], out);
  return out;
}
