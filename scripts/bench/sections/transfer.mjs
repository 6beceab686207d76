// Section "transfer": bytes a first visit to /c/demo costs in Chromium (empty cache, until both
// flamegraphs are drawn), with compression and without it (Accept-Encoding: identity, what every
// response cost before compression was served). web/test/bench-first-visit.ts does the work.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { printTable, repoRoot } from '../lib.mjs';

const kib = (b) => `${(b / 1024).toFixed(0)} KiB`;

export async function run() {
  if (!existsSync('/usr/bin/chromium')) {
    console.log('transfer: Debian chromium is not installed (apt-get install chromium); section skipped');
    return { status: 'skipped', reason: 'chromium missing' };
  }
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'web/test/bench-first-visit.ts')], {
    cwd: repoRoot,
    encoding: 'utf8',
    timeout: 10 * 60 * 1000,
  });
  process.stdout.write(r.stdout.split('\n').slice(0, -2).join('\n'));
  if (r.status !== 0) throw new Error(`bench-first-visit failed (${r.status}): ${r.stderr.slice(-1500)}`);
  const { before, after, targetBytes } = JSON.parse(r.stdout.trim().split('\n').pop());
  console.log('\nFirst visit to /c/demo (empty cache, until both flamegraphs are drawn); target ≤ 350 KiB');
  printTable(
    ['', 'bytes', 'requests', 'scripts', 'stylesheets', 'API (fetch)', 'document'],
    [
      ['uncompressed (before)', before, before.requests],
      ['compressed (after)', after, after.requests],
    ].map(([label, v, n]) => [
      label,
      kib(v.bytes),
      n,
      kib(v.byType.Script ?? 0),
      kib(v.byType.Stylesheet ?? 0),
      kib(v.byType.Fetch ?? 0),
      kib(v.byType.Document ?? 0),
    ]),
  );
  return { before, after, targetBytes, met: after.bytes <= targetBytes };
}
