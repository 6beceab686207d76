/**
 * `stagediff bisect` end to end on the demo service: a scratch git repository of 16 commits (commit 1
 * the demo service as it is, each later one a small change, commit k planting a CPU slowdown through
 * slowdown.go's default), the recipe building and starting each commit with Go, wrk as the load, and
 * the stages landing on a real stagediff server. The slowdown is made so large (20 ms of CPU per
 * request: ~60 req/s against thousands) and --min-change 500 % (a 6x shift) so wide that the outcome does not
 * depend on how loaded the machine is (on this machine two A/A sets have differed by 2x): the
 * decision rules themselves are tested on recorded and seeded figures (bisect-decide, bisect-run).
 */
import { execFile, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { testApp } from '../helpers/app.ts';
import { fixturesDir, repoRoot } from '../helpers/paths.ts';

const GO = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
const haveGo = spawnSync(GO, ['version']).status === 0;
const haveWrk = spawnSync('sh', ['-c', 'command -v wrk']).status === 0;
const CLI = join(repoRoot, 'server/bin/stagediff.mjs');

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

function stagediff(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((res) => {
    execFile(process.execPath, [CLI, ...args], { cwd, maxBuffer: 1 << 24, timeout: 600_000 }, (err, stdout, stderr) => {
      res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}

function git(repo: string, ...args: string[]): string {
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** The demo service as commit 1, then 15 small commits; commit k (1-based) plants a 20 ms slowdown. */
function demoHistory(dir: string, k: number | null): string[] {
  cpSync(`${fixturesDir}demo-service`, dir, {
    recursive: true,
    filter: (src) => !/\/(history|capture\.sh)$/.test(src),
  });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'test');
  git(dir, 'config', 'user.email', 'test@example.invalid');
  git(dir, 'config', 'commit.gpgsign', 'false');
  const commits: string[] = [];
  for (let i = 1; i <= 16; i++) {
    writeFileSync(join(dir, 'CHANGES.txt'), `change ${i}\n`);
    let subject = `change ${i}`;
    if (i === k) {
      const p = join(dir, 'slowdown.go');
      const src = readFileSync(p, 'utf8');
      if (!src.includes('var slowdown string\n'))
        throw new Error('slowdown.go no longer declares `var slowdown string`');
      writeFileSync(p, src.replace('var slowdown string\n', 'var slowdown = "20ms"\n'));
      subject = `change ${i}: a slower order handler`;
    }
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', subject);
    commits.push(git(dir, 'rev-parse', 'HEAD'));
  }
  return commits;
}

describe.skipIf(!haveGo || !haveWrk)('stagediff bisect on the demo service', () => {
  let work: string;
  let app: StagediffApp;
  let server: string;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'stagediff-bisect-test-'));
    app = await testApp();
    server = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  async function bisect(repo: string, commits: string[]) {
    const [a, p] = [await freePort(), await freePort()];
    const bin = join(work, `svc-${a}`);
    const recipe = `${GO} build -o ${bin} . && exec ${bin} -addr 127.0.0.1:${a} -pprof-addr 127.0.0.1:${p} -upstream-addr 127.0.0.1:0`;
    return stagediff(
      [
        'bisect',
        '--good',
        commits[0]!,
        '--bad',
        commits[15]!,
        '--metric',
        'rps',
        '--min-change',
        '500',
        // The A/A spread rule is tested on recorded figures (bisect-decide.test.ts); here, on a machine
        // other jobs may load, only the U test between the two A/A sets is asked.
        '--max-spread',
        '10000',
        '--runs',
        '4',
        '--max-runs',
        '6',
        '--ready',
        `http://127.0.0.1:${a}/healthz`,
        '--load',
        `wrk -t1 -c4 -d1s --latency 'http://127.0.0.1:${a}/api/orders?n=20&currency=EUR'`,
        '--out',
        join(work, `out-${a}`),
        '--server',
        server,
        '--',
        'sh',
        '-c',
        recipe,
      ],
      repo,
    );
  }

  it('names the commit that planted the slowdown within ⌈log2 16⌉ + 2 steps, and links parent against culprit', async () => {
    const repo = join(work, 'planted');
    const k = 11;
    const commits = demoHistory(repo, k);
    git(repo, 'checkout', '-q', '-b', 'feature', commits[12]!);
    const r = await bisect(repo, commits);
    expect(r.stderr).toMatch(/pre-flight: A\/A/);
    expect(r.code, r.stderr).toBe(0);
    const culprit = /^first bad commit: ([0-9a-f]{40}) \(([^)]*)\) after (\d+) steps?$/m.exec(r.stdout);
    expect(culprit, r.stdout).not.toBeNull();
    expect(culprit![1]).toBe(commits[k - 1]);
    expect(culprit![2]).toMatch(/^[0-9a-f]{7,} change 11: a slower order handler$/);
    expect(Number(culprit![3])).toBeLessThanOrEqual(Math.ceil(Math.log2(16)) + 2);
    // The repository is back on the branch and commit it started on, no bisect left.
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('feature');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(commits[12]);
    expect(git(repo, 'status', '--porcelain', '--untracked-files=no')).toBe('');
    expect(existsSync(join(repo, '.git', 'BISECT_START'))).toBe(false);

    // The link: the comparison on the server, opening (the web client's own rule) on parent against culprit.
    const link = /^comparison \(parent against culprit\): (\S+)$/m.exec(r.stdout)?.[1];
    expect(link, r.stdout).toBeDefined();
    const url = new URL(link!);
    const id = /\/c\/([^/?]+)/.exec(url.pathname)?.[1] ?? url.pathname.split('/').pop()!;
    const cmp = (await (await fetch(`${server}/api/comparisons/${id}`)).json()) as {
      stages: { id: string; name: string; runCount?: number }[];
    };
    const names = new Map(cmp.stages.map((s) => [s.id, s.name]));
    // The page's view state takes base/target stage ids from the query (web/src/lib/url-state.ts).
    expect(names.get(url.searchParams.get('target')!)).toBe(culprit![2]);
    expect(names.get(url.searchParams.get('base')!)).toMatch(/^[0-9a-f]{7,} change 10$/);
    // Every measured commit is a stage: the two pre-flight ends and each step.
    expect(cmp.stages.length).toBe(2 + Number(culprit![3]));
  }, 600_000);

  it('with the slowdown removed: "no regression between good and bad", naming no commit', async () => {
    const repo = join(work, 'clean');
    const commits = demoHistory(repo, null);
    const r = await bisect(repo, commits);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toMatch(/^no regression between good and bad in requests\/s .*No commit named\.$/m);
    expect(r.stdout).not.toMatch(/first bad commit/);
    for (const c of commits) expect(r.stdout).not.toContain(c.slice(0, 7));
    expect(r.stderr).not.toMatch(/^step \d/m);
    expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
    expect(git(repo, 'rev-parse', 'HEAD')).toBe(commits[15]);
  }, 600_000);
});

describe.skipIf(!haveWrk)('stagediff bisect: Ctrl-C', () => {
  it('SIGINT mid-run stops the service and the load, resets the bisect and returns to the branch (exit 130)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-bisect-sigint-'));
    const repo = join(dir, 'repo');
    try {
      mkdirSync(repo);
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.name', 'test');
      git(repo, 'config', 'user.email', 'test@example.invalid');
      git(repo, 'config', 'commit.gpgsign', 'false');
      const commits: string[] = [];
      for (let i = 1; i <= 4; i++) {
        writeFileSync(join(repo, 'n.txt'), `${i}\n`);
        git(repo, 'add', '-A');
        git(repo, 'commit', '-q', '-m', `c${i}`);
        commits.push(git(repo, 'rev-parse', 'HEAD'));
      }
      git(repo, 'checkout', '-q', '-b', 'topic', commits[2]!);
      const port = await freePort();
      // The "service": a node HTTP server started by the recipe.
      const serve = `require('http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`;
      const child = spawn(
        process.execPath,
        [
          CLI,
          'bisect',
          '--good',
          commits[0]!,
          '--bad',
          commits[3]!,
          '--metric',
          'rps',
          '--ready',
          `http://127.0.0.1:${port}/`,
          '--load',
          `wrk -t1 -c2 -d3s --latency http://127.0.0.1:${port}/`,
          '--out',
          join(dir, 'out'),
          '--',
          process.execPath,
          '-e',
          serve,
        ],
        { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stderr = '';
      let stdout = '';
      child.stdout.on('data', (d: Buffer) => {
        stdout += d;
      });
      const exited = new Promise<number | null>((res) => child.on('close', (c) => res(c)));
      await new Promise<void>((res) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d;
          // Mid-way: one run done, the next one's load running.
          if (/run 1: /.test(stderr)) res();
        });
        child.on('close', () => res());
      });
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGINT');
      const code = await exited;
      expect(stderr).toMatch(/interrupted: stopping the service/);
      expect(code, stderr).toBe(130);
      expect(stdout).toMatch(/^stopped \(interrupted\) after 0 steps/m);
      expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('topic');
      expect(git(repo, 'rev-parse', 'HEAD')).toBe(commits[2]);
      expect(existsSync(join(repo, '.git', 'BISECT_START'))).toBe(false);
      // The recipe's service is gone.
      const up = await fetch(`http://127.0.0.1:${port}/`).then(
        () => true,
        () => false,
      );
      expect(up).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.skipIf(!haveWrk)('stagediff bisect: a commit whose recipe fails', () => {
  it('is skipped (the recipe exits before --ready) and the culprit is still named', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-bisect-skip-'));
    const repo = join(dir, 'repo');
    try {
      mkdirSync(repo);
      git(repo, 'init', '-q', '-b', 'main');
      git(repo, 'config', 'user.name', 'test');
      git(repo, 'config', 'user.email', 'test@example.invalid');
      git(repo, 'config', 'commit.gpgsign', 'false');
      const commits: string[] = [];
      for (let i = 1; i <= 8; i++) {
        // From commit 6 on, every answer waits 20 ms; commit 4 does not start at all.
        writeFileSync(join(repo, 'delay.txt'), `${i >= 6 ? 20 : 0}\n`);
        writeFileSync(join(repo, 'broken.txt'), `${i === 4 ? 1 : 0}\n`);
        writeFileSync(join(repo, 'n.txt'), `${i}\n`);
        git(repo, 'add', '-A');
        git(repo, 'commit', '-q', '-m', `c${i}`);
        commits.push(git(repo, 'rev-parse', 'HEAD'));
      }
      const port = await freePort();
      const serve = [
        "const fs = require('fs');",
        "if (fs.readFileSync('broken.txt', 'utf8').trim() === '1') { console.error('build failed'); process.exit(1); }",
        "const d = Number(fs.readFileSync('delay.txt', 'utf8'));",
        `require('http').createServer((q, s) => setTimeout(() => s.end('ok'), d)).listen(${port}, '127.0.0.1');`,
      ].join('\n');
      const r = await stagediff(
        [
          'bisect',
          '--good',
          commits[0]!,
          '--bad',
          commits[7]!,
          '--metric',
          'rps',
          '--min-change',
          '500',
          '--max-spread',
          '10000',
          '--runs',
          '4',
          '--max-runs',
          '6',
          '--ready',
          `http://127.0.0.1:${port}/`,
          '--load',
          `wrk -t1 -c2 -d1s --latency http://127.0.0.1:${port}/`,
          '--out',
          join(dir, 'out'),
          '--',
          process.execPath,
          '-e',
          serve,
        ],
        repo,
      );
      expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
      expect(r.stderr).toMatch(
        /^ {2}cannot start it \(the recipe exited \(1\) before http:\S+ answered: build failed\): skip$/m,
      );
      expect(r.stdout).toMatch(new RegExp(`^first bad commit: ${commits[5]} `, 'm'));
      expect(git(repo, 'symbolic-ref', '--short', 'HEAD')).toBe('main');
      expect(git(repo, 'rev-parse', 'HEAD')).toBe(commits[7]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
