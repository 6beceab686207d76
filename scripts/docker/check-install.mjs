// Checks an `npm ci` by its result, not its exit code (npm has exited 0 with an empty node_modules):
// every package DIR/package-lock.json locks is installed in DIR at exactly its version (optional
// ones, e.g. other platforms' binaries, may be absent), and the native modules load.
//
//   node check-install.mjs DIR
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const dir = resolve(process.argv[2] ?? '.');
const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8'));
const problems = [];
let installed = 0;
for (const [path, entry] of Object.entries(lock.packages ?? {})) {
  if (path === '' || entry.link || !path.includes('node_modules/')) continue;
  const manifest = join(dir, path, 'package.json');
  if (!existsSync(manifest)) {
    if (!entry.optional && !entry.dev && !entry.devOptional) problems.push(`${path}: not installed`);
    continue;
  }
  const { version } = JSON.parse(readFileSync(manifest, 'utf8'));
  if (version !== entry.version) problems.push(`${path}: ${version} installed, ${entry.version} locked`);
  installed++;
}

const req = createRequire(join(dir, 'package.json'));
if (existsSync(join(dir, 'node_modules', 'better-sqlite3'))) {
  try {
    const Database = req('better-sqlite3');
    new Database(':memory:').prepare('SELECT 1').get();
  } catch (e) {
    problems.push(`better-sqlite3 does not load: ${e.message}`);
  }
}
if (existsSync(join(dir, 'node_modules', '@resvg', 'resvg-js'))) {
  try {
    const { Resvg } = req('@resvg/resvg-js');
    new Resvg('<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"/>').render();
  } catch (e) {
    problems.push(`@resvg/resvg-js does not load: ${e.message}`);
  }
}

if (problems.length > 0 || installed === 0) {
  console.error(`check-install: ${dir}: ${problems.length > 0 ? problems.join('; ') : 'nothing installed'}`);
  process.exit(1);
}
console.log(`check-install: ${installed} packages in ${dir} match package-lock.json`);
