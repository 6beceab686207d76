#!/usr/bin/env node
// The server package's runtime dependencies exactly as the repository's lockfile pins them, as a
// lockfile of their own (lockfileVersion 3):
//
//   node scripts/shrinkwrap.mjs                  writes server/npm-shrinkwrap.json (the package's
//                                                prepack runs this: `npm install stagediff` then
//                                                installs the locked versions, not whatever its
//                                                version ranges resolve to that day)
//   node scripts/shrinkwrap.mjs --app DIR        writes DIR/package.json and DIR/package-lock.json,
//                                                for `npm ci --omit=dev` of those dependencies alone
//                                                (the Docker image's dependency layer)
//
// The closure is walked the way Node resolves modules in the workspace install: from server/, each
// dependency is the nearest node_modules/<name> up the tree. Packages only reachable through
// optional dependencies (platform binaries) stay optional; dev-only packages are never included.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({ options: { app: { type: 'string' } } });

const lock = JSON.parse(readFileSync(join(repo, 'package-lock.json'), 'utf8'));
const server = JSON.parse(readFileSync(join(repo, 'server', 'package.json'), 'utf8'));
const packages = lock.packages ?? {};
const WORKSPACE = 'server';

/** The directory whose node_modules is searched next after `at`'s own ('' is the root). */
function parent(at) {
  const i = at.lastIndexOf('/node_modules/');
  if (i >= 0) return at.slice(0, i); // node_modules/a/node_modules/b → node_modules/a
  if (at.startsWith('node_modules/')) return '';
  const d = dirname(at); // a workspace directory: server → the root
  return d === '.' ? '' : d;
}

/** The location a package at `from` gets `name` from: the nearest node_modules/<name> up the tree. */
function resolve(from, name) {
  for (let at = from; ; at = parent(at)) {
    const candidate = `${at === '' ? '' : `${at}/`}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (at === '') return null;
  }
}

/** Edges of a package: [name, optional]. Peers count unless their meta marks them optional. */
function edges(entry) {
  const out = [];
  for (const name of Object.keys(entry.dependencies ?? {})) out.push([name, false]);
  for (const name of Object.keys(entry.optionalDependencies ?? {})) out.push([name, true]);
  for (const name of Object.keys(entry.peerDependencies ?? {}))
    out.push([name, entry.peerDependenciesMeta?.[name]?.optional === true]);
  return out;
}

/** Locations reachable from the workspace; with `requiredOnly`, through required edges alone. */
function closure(requiredOnly) {
  const seen = new Set();
  const queue = [WORKSPACE];
  const root = { dependencies: server.dependencies, optionalDependencies: server.optionalDependencies };
  while (queue.length > 0) {
    const at = queue.shift();
    const entry = at === WORKSPACE ? root : packages[at];
    for (const [name, optional] of edges(entry)) {
      if (requiredOnly && optional) continue;
      const loc = resolve(at, name);
      if (loc === null) {
        if (optional) continue;
        throw new Error(`shrinkwrap: ${name}, needed by ${at}, is not in package-lock.json (run npm install)`);
      }
      if (seen.has(loc)) continue;
      seen.add(loc);
      queue.push(loc);
    }
  }
  return seen;
}

const all = closure(false);
const required = closure(true);

// The package is installed as the root of its own tree: the workspace's own node_modules move up.
const out = {};
for (const loc of [...all].sort()) {
  const path = loc.startsWith(`${WORKSPACE}/`) ? loc.slice(WORKSPACE.length + 1) : loc;
  if (out[path]) throw new Error(`shrinkwrap: two versions of ${path} would share one place`);
  const { dev: _dev, devOptional: _devOptional, optional: _optional, peer: _peer, ...entry } = packages[loc];
  if (entry.link) throw new Error(`shrinkwrap: ${loc} is a link (a workspace), not a registry package`);
  out[path] = required.has(loc) ? entry : { ...entry, optional: true };
}

const root = {
  name: server.name,
  version: server.version,
  ...(server.license ? { license: server.license } : {}),
  dependencies: server.dependencies,
  ...(server.bin ? { bin: server.bin } : {}),
  ...(server.engines ? { engines: server.engines } : {}),
};

function lockfile(rootEntry) {
  return `${JSON.stringify(
    {
      name: rootEntry.name,
      version: rootEntry.version,
      lockfileVersion: 3,
      requires: true,
      packages: { '': rootEntry, ...out },
    },
    null,
    2,
  )}\n`;
}

if (args.app) {
  // A project whose only dependencies are the package's: `npm ci --omit=dev` installs exactly them.
  const app = {
    name: 'stagediff-runtime',
    version: server.version,
    private: true,
    dependencies: server.dependencies,
  };
  mkdirSync(args.app, { recursive: true });
  writeFileSync(join(args.app, 'package.json'), `${JSON.stringify(app, null, 2)}\n`);
  writeFileSync(join(args.app, 'package-lock.json'), lockfile({ ...app, private: undefined }));
  console.log(`shrinkwrap: ${Object.keys(out).length} packages into ${args.app}`);
} else {
  writeFileSync(join(repo, 'server', 'npm-shrinkwrap.json'), lockfile(root));
  console.log(`shrinkwrap: server/npm-shrinkwrap.json, ${Object.keys(out).length} packages`);
}
