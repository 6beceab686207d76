#!/usr/bin/env node
// Entry point of the `stagediff` command.
//
// An installed package carries only the compiled build (dist/, made by scripts/build.mjs): plain node
// runs it, with source maps on so stack traces name the TypeScript lines. A checkout (src/ beside
// this file) runs the TypeScript through tsx's loader instead, so development and the tests never
// run a stale build; STAGEDIFF_COMPILED=1 makes a checkout run its dist/ (what `npm start` does).
import { existsSync, readFileSync } from 'node:fs';
import module from 'node:module';

// On a Node older than the package's engines, one line and exit 1, before anything loads
// better-sqlite3's native module (built for a newer Node, it dies there with "Segmentation fault").
const engines = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).engines?.node ?? '';
const minMajor = Number(/^>=\s*(\d+)$/.exec(engines.trim())?.[1] ?? 0);
if (Number(process.versions.node.split('.')[0]) < minMajor) {
  process.stderr.write(
    `stagediff needs Node ${minMajor} or newer (24 LTS is the one tested), found Node ${process.version} (${process.execPath})\n`,
  );
  process.exit(1);
}

const sources = new URL('../src/cli/main.ts', import.meta.url);
if (process.env.STAGEDIFF_COMPILED !== '1' && existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(sources.href);
} else {
  process.setSourceMapsEnabled(true);
  // V8's compiled code for the bundle is kept on disk (node's compile cache, in the OS's temporary
  // directory; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so a run after the first one does not
  // parse and compile half a megabyte of JavaScript again before reading a file.
  module.enableCompileCache?.();
  await import('../dist/cli.mjs');
}
