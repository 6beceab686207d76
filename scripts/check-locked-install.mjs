// Checks an installed stagediff package against the repository's lockfile: every package its
// npm-shrinkwrap.json lists carries the version package-lock.json locks, and is installed where Node
// resolves it from its dependent, at that version (optional packages of other platforms may be
// absent). What was tested is what a user installs.
//
//   node scripts/check-locked-install.mjs PACKAGE_LOCK INSTALLED_PACKAGE_DIR
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const [lockPath, pkgDir] = process.argv.slice(2);
const lock = JSON.parse(readFileSync(lockPath, 'utf8')).packages;
const shrinkwrap = JSON.parse(readFileSync(join(pkgDir, 'npm-shrinkwrap.json'), 'utf8')).packages;
/** Shrinkwrap location → the directory it is installed in. */
const where = new Map([['', resolve(pkgDir)]]);
const problems = [];
const depth = (k) => k.split('node_modules/').length;
const keys = Object.keys(shrinkwrap)
  .filter((k) => k !== '')
  .sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
for (const key of keys) {
  const entry = shrinkwrap[key];
  const locked = lock[key] ?? lock[`server/${key}`];
  if (locked?.version !== entry.version)
    problems.push(`${key}: ${entry.version} in the shrinkwrap, ${locked?.version} in package-lock.json`);
  const i = key.lastIndexOf('node_modules/');
  const name = key.slice(i + 'node_modules/'.length);
  const from = where.get(i === 0 ? '' : key.slice(0, i - 1));
  if (from === undefined) continue; // under an optional package this platform does not install
  let dir = null;
  for (let at = from; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) {
      dir = candidate;
      break;
    }
    if (dirname(at) === at) break;
  }
  if (!dir) {
    if (!entry.optional) problems.push(`${key}: not installed`);
    continue;
  }
  where.set(key, dir);
  const { version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  if (version !== entry.version) problems.push(`${key}: ${version} installed, ${entry.version} locked`);
}
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`check-locked-install: ${where.size - 1} installed dependencies are package-lock.json's versions`);
