#!/usr/bin/env node
// `npm run build`: the production build, what `npm start`, the published package and the Docker
// image run.
//
//   web/dist/         the web client (vite), precompressed beside each asset (.br, .gz)
//   server/dist/      the server and CLI bundled by esbuild into ES modules with source maps:
//     cli.mjs                    the CLI (`stagediff serve` is the server); chunks load per command
//     analysis-worker-entry.mjs  the analysis worker process's entry, beside the chunks (the pool
//                                spawns it by this name, relative to its own module)
//     filter-thread-entry.mjs    the filter-check thread's entry, found the same way
//     hash-thread-entry.mjs      the module-zip hashing thread's entry, likewise
//     migrations/                the SQL migrations, read at start-up
//     web/, demo/                copies of the web client and of fixtures/demo, so the package is
//                                self-contained
//
// esbuild rather than tsc for emitting (tsc still type-checks, in `npm test`): one bundle starts
// faster than ~80 separate modules (`stagediff --help` 233 vs 321 ms median on this machine, node
// -e 0 157 ms) and builds in well under a second (tsc 17 s).
//
//   node scripts/build.mjs [--server-only | --web-only [--web-out DIR]]
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    'server-only': { type: 'boolean', default: false },
    'web-only': { type: 'boolean', default: false },
    'web-out': { type: 'string' },
  },
});
const webDist = args['web-out'] ? resolve(args['web-out']) : join(repo, 'web', 'dist');
const out = join(repo, 'server', 'dist');

function buildWeb() {
  const vite = join(repo, 'node_modules', 'vite', 'bin', 'vite.js');
  const r = spawnSync(process.execPath, [vite, 'build', '--outDir', webDist, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: join(repo, 'web'),
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('vite build failed');
  precompress(webDist);
}

/**
 * Writes `<file>.br` (quality 11) and `<file>.gz` (level 9) beside every compressible file, for
 * @fastify/static's `preCompressed`: the best ratio is paid for once at build time, never per request.
 */
function precompress(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      precompress(path);
      continue;
    }
    if (!/\.(js|mjs|css|html|svg|json|txt|map)$/.test(name) || statSync(path).size < 1024) continue;
    const raw = readFileSync(path);
    writeFileSync(
      `${path}.br`,
      brotliCompressSync(raw, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: constants.BROTLI_MAX_QUALITY,
          [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
        },
      }),
    );
    writeFileSync(`${path}.gz`, gzipSync(raw, { level: 9 }));
  }
}

async function buildServer() {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    absWorkingDir: repo,
    entryPoints: {
      cli: 'server/src/cli/main.ts',
      'analysis-worker': 'server/src/services/analysis-worker.ts',
      'filter-thread': 'server/src/services/filter-thread.ts',
      'hash-thread': 'server/src/services/hash-thread.ts',
    },
    outdir: out,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Dependencies stay in node_modules (better-sqlite3 is native; the rest install with the package).
    packages: 'external',
    sourcemap: true,
    sourcesContent: false,
    define: { STAGEDIFF_COMPILED: 'true' },
    logLevel: 'warning',
  });
  // Same contract as src/services/analysis-worker-entry.mjs: turn on source maps before the
  // worker's modules load, then run it.
  writeFileSync(
    join(out, 'analysis-worker-entry.mjs'),
    "// The analysis worker process's entry in the compiled build (see scripts/build.mjs).\nprocess.setSourceMapsEnabled(true);\nawait import('./analysis-worker.mjs');\n",
  );
  // The filter-check thread's entry, likewise (see src/services/filter-thread-entry.mjs).
  writeFileSync(
    join(out, 'filter-thread-entry.mjs'),
    "// The filter-check thread's entry in the compiled build (see scripts/build.mjs).\nprocess.setSourceMapsEnabled(true);\nawait import('./filter-thread.mjs');\n",
  );
  // The module-zip hashing thread's entry, likewise (see src/services/hash-thread-entry.mjs).
  writeFileSync(
    join(out, 'hash-thread-entry.mjs'),
    "// The module-zip hashing thread's entry in the compiled build (see scripts/build.mjs).\nprocess.setSourceMapsEnabled(true);\nawait import('./hash-thread.mjs');\n",
  );
  cpSync(join(repo, 'server', 'src', 'store', 'migrations'), join(out, 'migrations'), { recursive: true });
  if (existsSync(join(webDist, 'index.html'))) cpSync(webDist, join(out, 'web'), { recursive: true });
  else console.warn('build: web/dist is missing; the compiled server will show its "web client not built" page');
  // The demo as the seed reads it; vegeta's binary results (.bin, kept in the repository as the tool
  // wrote them) and the tests' go tool pprof -list answers (list-answers/) are not read by the
  // server, so the package leaves them out.
  cpSync(join(repo, 'fixtures', 'demo'), join(out, 'demo'), {
    recursive: true,
    filter: (src) => !/\.bin$|\/list-answers$/.test(src),
  });
}

const t0 = performance.now();
if (!args['server-only']) buildWeb();
if (!args['web-only']) await buildServer();
const built = [args['web-only'] ? null : 'server/dist', args['server-only'] ? null : webDist];
console.log(`build: ${built.filter(Boolean).join(' and ')} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
