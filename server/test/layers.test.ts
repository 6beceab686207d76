// The server's layers, beside the web's boundary (web/test/imports.test.ts): which folders of server/src
// may import which. Every relative import counts, `import type` too (a type names a dependency as much as
// a value does). The lower layers know nothing of those above them: model and the contract (api) sit at
// the bottom, ingest and analysis on the model, the store and sources beside them, services on all of
// those, routes on services, the composition root (compose.ts, app.ts) on top; the CLI reads a comparison
// through the API and starts the app, never the services or the store directly. Biome's noImportCycles
// (biome.jsonc) keeps any module from reaching itself.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/paths.ts';

const SRC = join(repoRoot, 'server/src');

/** Each unit of server/src (a folder, or a file at its top) and the units it may import besides itself. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  model: [],
  api: ['model'],
  analysis: ['model'],
  ingest: ['model', 'analysis'],
  store: [],
  sources: ['store'],
  render: ['model', 'api'],
  'paths.ts': [],
  'logging.ts': [],
  'config.ts': ['ingest', 'sources', 'store', 'logging.ts', 'paths.ts'],
  // The context is the services' own handle on each other (types of services, built by compose.ts).
  'context.ts': ['config.ts', 'store', 'services'],
  services: [
    'model',
    'api',
    'analysis',
    'ingest',
    'store',
    'sources',
    'render',
    'config.ts',
    'context.ts',
    'paths.ts',
    'logging.ts',
  ],
  // The contract's client: reads a comparison through the API (over HTTP or an app in this process) and
  // judges `check` rules on what it read; the CLI and the MCP tools both use it.
  client: ['model', 'api', 'analysis'],
  mcp: ['model', 'api', 'analysis', 'client'],
  routes: ['model', 'api', 'ingest', 'store', 'services', 'context.ts', 'mcp', 'config.ts'],
  'compose.ts': ['config.ts', 'context.ts', 'services', 'store'],
  'app.ts': ['compose.ts', 'config.ts', 'context.ts', 'logging.ts', 'routes', 'store'],
  'local-app.ts': ['app.ts', 'config.ts', 'ingest', 'services'],
  'server.ts': ['app.ts', 'config.ts', 'logging.ts', 'services'],
  cli: [
    'model',
    'api',
    'analysis',
    'ingest',
    'sources',
    'render',
    'client',
    'mcp',
    'config.ts',
    'local-app.ts',
    'server.ts',
  ],
};

/** Every relative module a source file names in an import or export, static or dynamic, type or value. */
export function importedPaths(source: string): string[] {
  const text = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|;|\n)\s*(?:import|export)\s[^;'"]*?from\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  return out.filter((s) => s.startsWith('.'));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sourceFiles(p);
    return /\.(ts|mjs)$/.test(name) ? [p] : [];
  });
}

/** The unit of a path relative to server/src: its first folder, or the file itself at the top. */
function unitOf(rel: string): string {
  return rel.split('/')[0]!;
}

/** One import that crosses units: from a file to a file, both relative to server/src. */
interface Edge {
  from: string;
  to: string;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = relative(SRC, file);
    for (const spec of importedPaths(readFileSync(file, 'utf8'))) {
      const to = relative(SRC, resolve(dirname(file), spec));
      if (!to.startsWith('..') && unitOf(to) !== unitOf(from)) out.push({ from, to });
    }
  }
  return out;
}

/** The imports the rules do not allow, as "from → to". */
export function violations(list: readonly Edge[], rules = MAY_IMPORT): string[] {
  return list
    .filter(({ from, to }) => {
      const allowed = rules[unitOf(from)] ?? [];
      return !allowed.includes(unitOf(to));
    })
    .map(({ from, to }) => `${from} → ${to}`);
}

describe('the layers of server/src', () => {
  it('reads every form of import', () => {
    const src = [
      "import type { A } from '../x/a.ts';",
      "import { type B, c } from './b.ts';",
      "export { d } from './d.ts';",
      "export type { E } from './e.ts';",
      "import './side.ts';",
      "const f = await import('./lazy.ts');",
      "import { readFileSync } from 'node:fs';",
      '// import { g } from "./commented.ts";',
    ].join('\n');
    expect(importedPaths(src)).toEqual(['../x/a.ts', './b.ts', './d.ts', './e.ts', './side.ts', './lazy.ts']);
  });

  it('finds an import against the layers', () => {
    expect(
      violations([
        { from: 'analysis/diff.ts', to: 'ingest/errors.ts' },
        { from: 'ingest/gobench.ts', to: 'analysis/benchstat.ts' },
        { from: 'cli/report.ts', to: 'services/analysis.ts' },
        { from: 'mcp/tools.ts', to: 'client/pair.ts' },
        { from: 'mcp/tools.ts', to: 'cli/pair.ts' },
        { from: 'client/pair.ts', to: 'cli/flags.ts' },
      ]),
    ).toEqual([
      'analysis/diff.ts → ingest/errors.ts',
      'cli/report.ts → services/analysis.ts',
      'mcp/tools.ts → cli/pair.ts',
      'client/pair.ts → cli/flags.ts',
    ]);
  });

  it('places every folder and top-level file in a layer', () => {
    const units = [...new Set(sourceFiles(SRC).map((f) => unitOf(relative(SRC, f))))].sort();
    expect(units.filter((u) => !(u in MAY_IMPORT))).toEqual([]);
    // every rule names a unit that exists
    expect(Object.keys(MAY_IMPORT).filter((u) => !units.includes(u))).toEqual([]);
  });

  it('imports only downwards', () => {
    const all = edges();
    // the walk sees the imports it judges: it would pass vacuously otherwise
    expect(all.some((e) => e.from.startsWith('ingest/') && e.to.startsWith('analysis/'))).toBe(true);
    expect(all.some((e) => e.from.startsWith('routes/') && e.to.startsWith('services/'))).toBe(true);
    expect(violations(all)).toEqual([]);
  });
});
