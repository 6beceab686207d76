/**
 * The version that cached derived data carries: a hash of the code that derives it (the parsers,
 * the model and the analysis), so any change to that code makes every older cache entry invisible
 * and results are re-derived from the stored originals. Nobody has to remember to bump a number.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Every file below the given roots (files or directories), in a stable order. */
function filesBelow(root: string): string[] {
  if (!statSync(root).isDirectory()) return [root];
  return readdirSync(root, { withFileTypes: true })
    .map((e) => e.name)
    .sort()
    .flatMap((name) => filesBelow(join(root, name)));
}

/**
 * A positive 31-bit number from the contents and relative paths of every file below `roots`.
 * Roots that do not exist are skipped; with none left, `fallback` (a file) is hashed instead.
 */
export function sourceVersion(roots: readonly string[], fallback: string): number {
  const present = roots.filter((r) => existsSync(r));
  const h = createHash('sha256');
  for (const root of present.length > 0 ? present : [fallback]) {
    for (const f of filesBelow(root)) {
      h.update(f.slice(root.length)).update('\0').update(readFileSync(f)).update('\0');
    }
  }
  return h.digest().readUInt32BE(0) & 0x7fffffff;
}

const here = fileURLToPath(import.meta.url);
const src = fileURLToPath(new URL('../', import.meta.url));

/** The code whose output is cached: parsers, model, analysis, the analysis operations and image rendering. */
export const derivingCode = [
  join(src, 'ingest'),
  join(src, 'model'),
  join(src, 'analysis'),
  join(src, 'render'),
  ...['analysis-ops', 'analysis', 'images'].flatMap((n) => [
    join(src, 'services', `${n}.ts`),
    join(src, 'services', `${n}.js`),
  ]),
];

/**
 * The version of this build's deriving code. In a single-file bundle the directories do not
 * exist, and the bundle itself is the code.
 */
export const CODE_VERSION = sourceVersion(derivingCode, here);
