import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { parseRule } from '../../src/client/check-rules.ts';
import { formatChange, formatRatio, formatValue } from '../../src/api/format.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { runCli } from '../helpers/cli.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir } from '../helpers/paths.ts';

const RUNS = 5;

const DEMO_STAGES = ['baseline', 'fast-json', 'pooled', 'async-log'];

/** wrk's 99 % latency of the first run of a demo stage in ms, as printed. */
function wrkP99(stage: string): number {
  const m = /^\s+99%\s+([\d.]+)(us|ms|s)$/m.exec(
    readFileSync(join(fixturesDir, 'demo', stage, 'run-1', 'wrk.txt'), 'utf8'),
  )!;
  return Number(m[1]) * (m[2] === 'us' ? 1e-3 : m[2] === 's' ? 1e3 : 1);
}

let app: StagediffApp;
let url: string;
let runsId: string;
let benchId: string;
let singleId: string;

beforeAll(async () => {
  app = await testApp();
  await seedDemo(app.ctx);
  const c = await createComparison(app, 'regression gate');
  runsId = c.id;
  for (const stage of ['pooled', 'pooled-slow', 'pooled-rerun']) {
    const st = await addStage(app, c.id, c.auth, stage);
    // Runs first, then their profiles, named by run (run-3-cpu.pb.gz): the server pairs them by name.
    for (const what of ['wrk.txt', 'cpu.pb.gz'])
      for (let i = 1; i <= RUNS; i++) {
        const r = await upload(
          app,
          c.id,
          st,
          c.auth,
          [join(fixturesDir, 'regression-runs', stage, `run-${i}`, what)],
          [`run-${i}-${what}`],
        );
        expect(r.statusCode, r.body).toBe(200);
      }
  }
  const b = await createComparison(app, 'benchmarks');
  benchId = b.id;
  for (const name of ['after', 'before', 'rerun']) {
    const st = await addStage(app, b.id, b.auth, name);
    const r = await upload(app, b.id, st, b.auth, [join(fixturesDir, 'gobench', `kvjoin-${name}.txt`)]);
    expect(r.statusCode, r.body).toBe(200);
  }
  // One run per stage: the first wrk run of each demo stage.
  const one = await createComparison(app, 'single runs');
  singleId = one.id;
  for (const stage of DEMO_STAGES) {
    const st = await addStage(app, one.id, one.auth, stage);
    const r = await upload(app, one.id, st, one.auth, [join(fixturesDir, 'demo', stage, 'run-1', 'wrk.txt')]);
    expect(r.statusCode, r.body).toBe(200);
  }
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}, 120_000);

afterAll(async () => {
  await app?.close();
});

const RULES = ['--fail-on', 'rps:-3%', '--fail-on', 'p99:+5%', '--fail-on', 'cpu-per-request:+5%'];

describe('stagediff check on real runs', () => {
  it('fails on the deliberately slowed build, naming each rule with its figures', async () => {
    const r = await runCli([
      'check',
      '--server',
      url,
      '--comparison',
      runsId,
      '--base',
      'pooled',
      '--target',
      'pooled-slow',
      ...RULES,
    ]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(1);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toBe('stagediff check: pooled → pooled-slow (regression gate)');
    // QPS: every slowed run is below every pooled run (fixtures/regression-runs/runs.tsv), so the
    // U test gives its smallest p for 5 + 5 runs, 2/252.
    expect(lines[1]).toMatch(
      /^FAIL {2}rps:-3% {14}QPS 7,121 req\/s → 5,057 req\/s \(−29 %, ×0\.71\), significant \(p=0\.008, n=5\+5\)$/,
    );
    expect(lines[3]).toMatch(/^FAIL {2}cpu-per-request:\+5% {2}CPU per request .* significant \(p=0\.008, n=5\+5\)$/);
    expect(lines.at(-1)).toMatch(/^\d rules? failed: a significant regression past the threshold\.$/);
  });

  it('passes on a re-run of the same stage: its differences are noise', async () => {
    const r = await runCli([
      'check',
      '--server',
      url,
      '--comparison',
      runsId,
      '--base',
      'pooled',
      '--target',
      'pooled-rerun',
      ...RULES,
    ]);
    expect(r.status, r.stdout).toBe(0);
    for (const line of r.stdout.trim().split('\n').slice(1, 4)) expect(line).toMatch(/^pass /);
    expect(r.stdout).toContain('within the noise');
    expect(r.stdout.trim().split('\n').at(-1)).toBe('passed: no significant regression past any rule.');
  });

  it('gives the verdicts as JSON with --json', async () => {
    const r = await runCli([
      'check',
      '--comparison',
      `${url}/c/${runsId}`,
      '--base',
      'pooled',
      '--target',
      'pooled-slow',
      '--fail-on',
      'rps:-3%',
      '--json',
    ]);
    expect(r.status).toBe(1);
    const j = JSON.parse(r.stdout);
    expect(j.failed).toBe(true);
    expect(j.results[0]).toMatchObject({
      rule: 'rps:-3%',
      outcome: 'fail',
      change: {
        metric: 'rps',
        verdict: { status: 'significant', nBase: 5, nTarget: 5 },
        direction: 'regression',
      },
    });
  });

  it('judges arbitrary pairs with the same test (not only against the first or previous stage)', async () => {
    // pooled-slow → pooled-rerun: neither the first stage nor the previous one of the target.
    const r = await runCli([
      'check',
      '--server',
      url,
      '--comparison',
      runsId,
      '--base',
      'pooled-slow',
      '--target',
      'pooled-rerun',
      '--fail-on',
      'rps:+3%',
      '--json',
    ]);
    const j = JSON.parse(r.stdout);
    expect(j.results[0].change).toMatchObject({
      verdict: { status: 'significant', p: 2 / 252 },
      direction: 'improvement',
    });
    expect(r.status).toBe(1); // a rule on a rise fails on a significant rise, whatever the metric
  });
});

describe('stagediff check on single runs and benchmarks', () => {
  it('never fails on one run per stage, unless --too-few-runs fail', async () => {
    // Two stages whose P99 (as wrk printed it, fixtures/demo/*/run-1/wrk.txt) rises by more than 1 %
    // from the first to the second, in whichever order the capture has them.
    const pairs = DEMO_STAGES.flatMap((a) => DEMO_STAGES.filter((b) => b !== a).map((b) => [a, b] as const));
    const [base, target] = pairs.find(([a, b]) => wrkP99(b)! / wrkP99(a)! > 1.01)!;
    const args = ['check', '--server', url, '--comparison', singleId, '--base', base, '--target', target];
    const r = await runCli([...args, '--fail-on', 'p99:+1%']);
    expect(r.status).toBe(0);
    const [from, to] = [base, target].map((s) => wrkP99(s));
    expect(r.stdout).toContain(
      `?     p99:+1%  P99 ${formatValue(from!, 'ms')} → ${formatValue(to!, 'ms')} (${formatChange(to! / from!)}, ${formatRatio(to! / from!)}), not judged (1 run: no noise estimate); past the threshold but cannot be judged`,
    );
    const strict = await runCli([...args, '--fail-on', 'p99:+1%', '--too-few-runs', 'fail']);
    expect(strict.status).toBe(1);
    expect(strict.stdout).toContain('1 rule could not be judged (--too-few-runs fail).');
  });

  it("gates go test -bench output on benchstat's verdicts", async () => {
    const base = ['check', '--server', url, '--comparison', benchId, '--fail-on', 'bench:sec/op:+2%'];
    const worse = await runCli([...base, '--base', 'after', '--target', 'before']);
    expect(worse.status).toBe(1);
    // benchstat (fixtures/gobench/expected/kvjoin.benchstat.txt): Join/pairs=64-2 -97.75% (p=0.002 n=6), the other way round.
    expect(worse.stdout).toMatch(
      /^FAIL {2}bench:sec\/op:\+2% {2}.*Join\/pairs=64-2 sec\/op .*significant \(p=0\.002, n=6\+6\)$/m,
    );
    const rerun = await runCli([...base, '--base', 'before', '--target', 'rerun']);
    expect(rerun.status, rerun.stdout).toBe(0);
    // Join/pairs=64-2 is 10 % slower in the re-run, and benchstat says ~ (p=0.485 n=6).
    expect(rerun.stdout).toMatch(/past the threshold but inside the noise/);
  });

  it('refuses malformed rules before reading anything', async () => {
    const r = await runCli(['check', '--server', url, '--comparison', runsId, '--fail-on', 'p99>5%']);
    expect(r.status).toBe(2);
    expect(r.stderr.split('\n')[0]).toBe(
      'stagediff: --fail-on "p99>5%": expected METRIC:+N% or METRIC:-N% (e.g. p99:+5%, rps:-3%, cpu-per-request:+5%, bench:sec/op:+2%)',
    );
  });
});

describe('parseRule', () => {
  it('reads metric, direction and threshold', () => {
    expect(parseRule('p99:+5%')).toEqual({ text: 'p99:+5%', metric: 'p99', sign: 1, percent: 5 });
    expect(parseRule('QPS:-3.5%')).toEqual({ text: 'QPS:-3.5%', metric: 'rps', sign: -1, percent: 3.5 });
    expect(parseRule('bench:sec/op:+2%').metric).toBe('bench:sec/op');
    expect(() => parseRule('p98:+5%')).toThrow('unknown metric "p98"');
    expect(() => parseRule('p99:5%')).toThrow('expected METRIC:+N% or METRIC:-N%');
    expect(() => parseRule('bench::+2%')).toThrow();
  });
});

describe('stagediff check on hostile names', () => {
  it('prints no escape sequence, carriage return, C1 control or bidi override the server holds', async () => {
    // Names stored before the API refused them (written to the store directly): the CLI is the last guard.
    const title = 'gate\u001b]0;pwned\u0007 \u202eevil';
    const { comparison, editToken } = await app.ctx.store.createComparison({ title });
    const auth = { authorization: `Bearer ${editToken}` };
    const names = [
      'base\u001b[2J\u001b[H',
      'target\r✔ all checks passed\n\u001b]8;;https://evil.example\u0007link\u009b31m',
    ];
    for (const [i, name] of names.entries()) {
      const st = await app.ctx.store.createStage(comparison.id, { name });
      const r = await upload(app, comparison.id, st.id, auth, [
        join(fixturesDir, 'demo', DEMO_STAGES[i]!, 'run-1', 'wrk.txt'),
      ]);
      expect(r.statusCode, r.body).toBe(200);
    }
    const r = await runCli(['check', '--server', url, '--comparison', comparison.id, '--fail-on', 'p99:+1000%']);
    expect(r.status, r.stderr).toBe(0);
    const printed = r.stdout + r.stderr;
    // Nothing but line feeds below U+0020, no C1 control, no bidi override.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what must not be printed
    expect(printed).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(printed).not.toContain('\u001b');
    // The names are still there, as plain text on the first line.
    const first = r.stdout.split('\n')[0]!;
    expect(first).toContain('base[2J[H → target ✔ all checks passed ]8;;https://evil.examplelink31m');
    expect(first).toContain('gate]0;pwned evil');
  });
});

describe('rules on the traced requests', () => {
  it('name the request rows of the change engine', () => {
    expect(parseRule('request-p99:+10%')).toMatchObject({ metric: 'request-p99', sign: 1, percent: 10 });
    expect(parseRule('request-tail-sync:+20%')).toMatchObject({ metric: 'request-tail-sync' });
    expect(() => parseRule('request-tail-lunch:+20%')).toThrow('unknown metric "request-tail-lunch"');
  });
});
