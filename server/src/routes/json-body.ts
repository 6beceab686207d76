import type { FastifyInstance } from 'fastify';
import { ApiError } from './errors.ts';

/**
 * The deepest nesting of arrays and objects in a JSON text, counted as its bytes go by (strings
 * skipped), stopping as soon as it passes `max`: a thousand-deep record is refused before anything
 * recursive (the parser, the validator, a serialiser) sees it. Returns the depth reached, at most max + 1.
 */
export function jsonDepth(text: string, max: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > max) return deepest;
      }
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * Every JSON body is checked for nesting (MAX_JSON_DEPTH) before it is parsed, then parsed as Fastify
 * parses it (prototype poisoning refused). Past the bound: 400 naming it.
 */
export function installJsonParser(app: FastifyInstance, maxDepth: number): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (jsonDepth(text, maxDepth) > maxDepth) {
      done(
        new ApiError(
          400,
          'invalid-request',
          `the JSON body is nested deeper than ${maxDepth} levels of arrays and objects (MAX_JSON_DEPTH)`,
        ),
        undefined,
      );
      return;
    }
    void parse(req, text, done);
  });
}
