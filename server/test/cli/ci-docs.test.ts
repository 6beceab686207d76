/**
 * docs/ci.md's GitHub Actions workflow, run: its `run:` steps as written, in bash as GitHub runs them,
 * against the demo service. The GitHub-only steps (checkout, toolchain setup, installing stagediff, the
 * git-worktree build of the base branch) are replaced by building fixtures/demo-service twice: the base
 * as is, the head deliberately slowed (demo-service/slowdown.go). The gate must fail on it, naming the
 * rules, and the report must land in the job summary.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { StagediffApp } from '../../src/app.ts';
import { Report as reportSchema } from '../../src/api/report.ts';
import { addStage, testApp, upload } from '../helpers/app.ts';
import { fixturesDir, inCi, repoRoot } from '../helpers/paths.ts';

const GO = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
const haveGo = spawnSync(GO, ['version']).status === 0;
const haveWrk = spawnSync('sh', ['-c', 'command -v wrk']).status === 0;
const haveCapture = existsSync(join(repoRoot, 'server/src/cli/capture.ts'));

interface Step {
  name: string;
  uses?: string;
  run?: string;
  if?: string;
}

/** The workflow as docs/ci.md shows it (the first yaml block). */
function workflow(): { env: Record<string, string | number>; steps: Step[] } {
  const md = readFileSync(join(repoRoot, 'docs/ci.md'), 'utf8');
  const block = /```yaml\n([\s\S]*?)```/.exec(md);
  if (!block) throw new Error('docs/ci.md has no yaml block');
  const doc = parse(block[1]!) as { jobs: Record<string, { env: Record<string, string | number>; steps: Step[] }> };
  return Object.values(doc.jobs)[0]!;
}

/** The shared-server variant's steps (the second yaml block: a list of steps). */
function serverSteps(): Step[] {
  const md = readFileSync(join(repoRoot, 'docs/ci.md'), 'utf8');
  const blocks = [...md.matchAll(/```yaml\n([\s\S]*?)```/g)];
  return parse(blocks[1]![1]!.replace(/^ {6}/gm, '')) as Step[];
}

/** Steps that only make sense on GitHub (actions, installing tools, the git worktree of the base branch). */
const REPLACED = new Set(['Install wrk and stagediff', 'Build the base and the head']);

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

/** Runs one step's script the way GitHub does (bash -e -o pipefail). */
function runStep(script: string, cwd: string, env: NodeJS.ProcessEnv) {
  return new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-e', '-o', 'pipefail', '-c', script], {
      cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

describe('docs/ci.md', () => {
  it('shows a workflow whose steps the test knows how to stand in for', () => {
    const w = workflow();
    const names = w.steps.map((s) => s.name);
    expect(names).toEqual([
      'Check out',
      'Set up Go',
      'Set up Node',
      'Install wrk and stagediff',
      'Build the base and the head',
      'Capture base and head',
      'Report',
      'Keep the captures',
      'Gate',
    ]);
    for (const s of w.steps) if (s.uses) expect(s.uses).toMatch(/^actions\/[a-z-]+@v\d+$/);
    expect(w.env.PPROF_URL).toBeDefined();
    expect(w.env.LOAD_URL).toBeDefined();
  });
});

describe('the shared-server variant of docs/ci.md', () => {
  let app: StagediffApp;
  let url: string;
  beforeAll(async () => {
    app = await testApp();
    await app.listen({ host: '127.0.0.1', port: 0 });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
  });

  it('creates the comparison with curl and jq, and the report links the share page and the diff image', async () => {
    const steps = serverSteps();
    expect(steps.map((s) => s.name)).toEqual(['Create the comparison', 'Comment']);
    const work = mkdtempSync(join(tmpdir(), 'stagediff-ci-server-'));
    const githubEnv = join(work, 'github-env');
    writeFileSync(githubEnv, '');
    const env = {
      ...process.env,
      STAGEDIFF_SERVER: url,
      TITLE: 'PR 42 "quoted" $(not run)',
      GITHUB_ENV: githubEnv,
      STAGEDIFF: `${process.execPath} ${join(repoRoot, 'server/bin/stagediff.mjs')}`,
    };
    const created = await runStep(steps[0]!.run!, work, env);
    expect(created.code, created.out).toBe(0);
    expect(created.out).toMatch(/^::add-mask::[A-Za-z0-9_-]{20,}\n$/);
    const exported = Object.fromEntries(
      readFileSync(githubEnv, 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split('=', 2) as [string, string]),
    );
    const c = (await app.inject({ url: `/api/comparisons/${exported.COMPARISON}` })).json() as { title: string };
    expect(c.title).toBe('PR 42 "quoted" $(not run)');
    // What the captures would upload with --server/--comparison/--token: the token works.
    const auth = { authorization: `Bearer ${exported.STAGEDIFF_TOKEN}` };
    for (const stage of ['pooled', 'pooled-slow']) {
      const st = await addStage(app, exported.COMPARISON!, auth, stage);
      for (let i = 1; i <= 5; i++) {
        const r = await upload(app, exported.COMPARISON!, st, auth, [
          join(fixturesDir, 'regression-runs', stage, `run-${i}`, 'wrk.txt'),
        ]);
        expect(r.statusCode, r.body).toBe(200);
      }
    }
    // The Comment step minus `gh pr comment` (GitHub-only).
    const script = steps[1]!
      .run!.split('\n')
      .filter((l) => !l.startsWith('gh '))
      .join('\n');
    const comment = await runStep(script, work, { ...env, ...exported });
    expect(comment.code, comment.out).toBe(0);
    const md = readFileSync(join(work, 'report.md'), 'utf8');
    expect(md).toContain(`[open in stagediff](${url}/c/${exported.COMPARISON})`);
    expect(md).toMatch(/🔴 \*\*QPS\*\* regressed: .*significant \(p=0\.008, n=5\+5\)/);
  });
});

describe.skipIf(!inCi && (!haveGo || !haveWrk || !haveCapture))(
  'the docs/ci.md workflow against the demo service',
  () => {
    let work = '';
    let env: NodeJS.ProcessEnv;
    const results: Record<string, { code: number | null; out: string }> = {};

    beforeAll(async () => {
      work = mkdtempSync(join(tmpdir(), 'stagediff-ci-'));
      const runnerTemp = join(work, 'runner-temp');
      mkdirSync(runnerTemp);
      const src = join(fixturesDir, 'demo-service');
      const build = (out: string, ldflags: string[]) => {
        const r = spawnSync(GO, ['build', ...ldflags, '-o', join(runnerTemp, out), '.'], {
          cwd: src,
          encoding: 'utf8',
        });
        if (r.status !== 0) throw new Error(`go build: ${r.stderr}`);
      };
      // In place of "Build the base and the head": the head burns 200 µs of CPU more per request.
      build('service-base', []);
      build('service-head', ['-ldflags', '-X main.slowdown=200us']);
      const [api, pprof, upstream] = [await freePort(), await freePort(), await freePort()];
      const summary = join(work, 'step-summary.md');
      writeFileSync(summary, '');
      const w = workflow();
      env = {
        ...process.env,
        ...Object.fromEntries(Object.entries(w.env).map(([k, v]) => [k, String(v)])),
        // The demo service's own flags and addresses; fewer and shorter runs than a real pipeline.
        SERVICE_FLAGS: `-addr 127.0.0.1:${api} -pprof-addr 127.0.0.1:${pprof} -upstream-addr 127.0.0.1:${upstream}`,
        PPROF_URL: `http://127.0.0.1:${pprof}`,
        LOAD_URL: `http://127.0.0.1:${api}/api/orders?n=20&currency=EUR`,
        RUNS: '4',
        LOAD_SECONDS: '4',
        GOMAXPROCS: '2',
        // What "Install wrk and stagediff" exports.
        STAGEDIFF: `${process.execPath} ${join(repoRoot, 'server/bin/stagediff.mjs')}`,
        RUNNER_TEMP: runnerTemp,
        GITHUB_STEP_SUMMARY: summary,
      };
      for (const s of w.steps) {
        if (s.uses || REPLACED.has(s.name) || !s.run) continue;
        results[s.name] = await runStep(s.run, work, env);
        if (results[s.name]!.code !== 0 && s.name !== 'Gate') break;
      }
    }, 600_000);

    it('captures both builds, alternating, into folders report and check read', () => {
      const cap = results['Capture base and head']!;
      expect(cap.code, cap.out).toBe(0);
      for (const side of ['base', 'head'])
        expect(readdirSync(join(work, 'perf', side)).sort()).toEqual(['run-1', 'run-2', 'run-3', 'run-4']);
      const record = JSON.parse(readFileSync(join(work, 'perf/head/run-2/capture.json'), 'utf8'));
      expect(record.stage).toBe('head');
    });

    it('writes the report into the job summary, the diff image and schema-valid JSON', () => {
      const rep = results.Report!;
      expect(rep.code, rep.out).toBe(0);
      const md = readFileSync(env.GITHUB_STEP_SUMMARY!, 'utf8');
      expect(md).toMatch(/^## stagediff: base → head\n/);
      expect(md).toMatch(/🔴 \*\*QPS\*\* regressed: .*significant \(p=0\.029, n=4\+4\)/);
      expect(md).toContain('The diff flamegraph is saved as perf/diff.svg.');
      expect(readFileSync(join(work, 'perf/diff.svg'), 'utf8')).toContain('<svg ');
      const json = JSON.parse(readFileSync(join(work, 'perf/report.json'), 'utf8'));
      const validate = new Ajv({ strict: false }).compile(reportSchema);
      expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
      const cpu = json.changes.find((c: { metric: string }) => c.metric === 'cpu-per-request');
      // 200 µs of CPU more per request, on top of the service's own cost (its last version, async-log).
      expect(cpu.target.median - cpu.base.median).toBeGreaterThan(100_000);
      expect(cpu.verdict.status).toBe('significant');
    });

    it('fails the gate on the slowed head, naming the rules and their figures', () => {
      const gate = results.Gate!;
      expect(gate.code, gate.out).toBe(1);
      expect(gate.out).toMatch(/^FAIL {2}rps:-3% +QPS .* significant \(p=0\.029, n=4\+4\)$/m);
      expect(gate.out).toMatch(/^FAIL {2}cpu-per-request:\+5% +CPU per request .* significant \(p=0\.029, n=4\+4\)$/m);
      expect(gate.out).toMatch(/rules? failed: a significant regression past the threshold\.\n$/);
    });
  },
);
