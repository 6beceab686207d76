#!/usr/bin/env node
// The first thing `npm ci`/`npm install` (the root's preinstall) and `npm start` run: on a Node older
// than the root package.json's engines allow, ONE line naming the version found, the versions
// supported and scripts/install-node.sh, and exit 1. Without it an old Node gets as far as loading
// better-sqlite3's native module, built for a newer Node, and dies with "Segmentation fault".
//
// CommonJS with no dependency, so any Node that npm itself runs on (18 and later) can answer.
// `engine-strict` in .npmrc is not set: it stops `npm ci` earlier, but with npm's own EBADENGINE
// message naming neither the fix nor this script. npm runs the root's preinstall after the
// dependencies are unpacked (none of them builds anything at install), so `npm ci` ends here.
const { readFileSync } = require('node:fs');
const { join } = require('node:path');

const pkg = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8'));
const range = String(pkg.engines?.node ?? '');
const match = /^>=\s*(\d+)$/.exec(range.trim());
if (!match) {
  process.stderr.write(`stagediff: package.json engines.node is "${range}", not ">=MAJOR"\n`);
  process.exit(2);
}
const min = Number(match[1]);
const major = Number(process.versions.node.split('.')[0]);
if (major < min) {
  process.stderr.write(
    `stagediff needs Node ${min} or newer (24 LTS is the one tested), found Node ${process.version} (${process.execPath}): ` +
      'run scripts/install-node.sh and put the directory it prints first on PATH: export PATH="$(scripts/install-node.sh):$PATH"\n',
  );
  process.exit(1);
}
