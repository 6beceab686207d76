// The web client's boundary with the server's code: at run time the browser bundle may import only the
// API contract's plain modules (server/src/api/routes.ts, format.ts, words.ts, benchstat-format.ts, labels.ts,
// page-requests.ts, summaries.ts, …) — never other server code, never the schema library. Types may come from
// anywhere (they are erased).
// Walks every module reachable at run time from web/src, following relative imports.
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './harness.ts';

const ALLOWED = [
  'routes.ts',
  'format.ts',
  'words.ts',
  'benchstat-format.ts',
  'labels.ts',
  'page-requests.ts',
  'capture-files.ts',
  'options.ts',
  'code-change-words.ts',
  'summaries.ts',
  'request-parts.ts',
]
  .map((f) => join(REPO, 'server/src/api', f))
  // The parts of a traced request are declared once, in the model, as plain data the contract's
  // options re-export; at run time that file is two constant lists.
  .concat(join(REPO, 'server/src/model/trace-requests.ts'));

/** Every module a file imports at run time: `import type` and all-`type` specifier lists are erased. */
export function runtimeImports(source: string): string[] {
  const out: string[] = [];
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const stmt = /(?:^|;|\n)\s*(import|export)\s+(type\s+)?([^;'"]*?)\s*from\s*['"]([^'"]+)['"]/g;
  for (const m of text.matchAll(stmt)) {
    if (m[2]) continue;
    const clause = m[3] ?? '';
    const named = /^\{([\s\S]*)\}$/.exec(clause.trim());
    const allTypes =
      named !== null &&
      named[1]!
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
        .every((s) => s.startsWith('type '));
    if (!allTypes) out.push(m[4]!);
  }
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return out;
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'testdata' ? [] : sources(p);
    return /\.tsx?$/.test(name) && !/\.test\.tsx?$/.test(name) && !name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The files reachable at run time from web/src, and the packages they import. */
function reachable(): { files: Set<string>; packages: Map<string, string> } {
  const files = new Set<string>();
  const packages = new Map<string, string>();
  const queue = sources(join(REPO, 'web/src'));
  for (let f = queue.shift(); f; f = queue.shift()) {
    if (files.has(f)) continue;
    files.add(f);
    for (const spec of runtimeImports(readFileSync(f, 'utf8'))) {
      if (!spec.startsWith('.')) {
        packages.set(spec, relative(REPO, f));
        continue;
      }
      const target = resolve(dirname(f), spec);
      if (!existsSync(target)) throw new Error(`${relative(REPO, f)}: cannot resolve ${spec}`);
      if (/\.tsx?$/.test(target)) queue.push(target);
    }
  }
  return { files, packages };
}

describe('the web bundle and the server code', () => {
  it('reads which modules a file imports at run time', () => {
    const src = [
      "import type { A } from '../x/a.ts';",
      "import { type B, type C } from './b.ts';",
      "import { type D, e } from './d.ts';",
      "export type { F } from './f.ts';",
      "export { g } from './g.ts';",
      "import './style.css';",
      "const L = lazy(() => import('./lazy.tsx'));",
      '// import { h } from "./commented.ts";',
    ].join('\n');
    expect(runtimeImports(src)).toEqual(['./d.ts', './g.ts', './style.css', './lazy.tsx']);
  });

  it('imports only the contract’s plain modules of the server at run time, and no schema library', () => {
    const { files, packages } = reachable();
    const server = [...files].filter((f) => f.startsWith(join(REPO, 'server'))).sort();
    const outside = server.filter((f) => !ALLOWED.includes(f)).map((f) => relative(REPO, f));
    expect(outside).toEqual([]);
    // The page does use the shared modules: the test would pass vacuously otherwise.
    expect(server.map((f) => relative(REPO, f))).toEqual(
      [
        'benchstat-format.ts',
        'capture-files.ts',
        'code-change-words.ts',
        'format.ts',
        'labels.ts',
        'options.ts',
        'page-requests.ts',
        'request-parts.ts',
        'routes.ts',
        'summaries.ts',
        'words.ts',
      ]
        .map((f) => `server/src/api/${f}`)
        .concat('server/src/model/trace-requests.ts'),
    );
    expect([...packages.keys()].filter((p) => /typebox|fastify|^node:/.test(p))).toEqual([]);
  });
});
