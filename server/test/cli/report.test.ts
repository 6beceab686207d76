import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { HtmlRenderer, Parser } from 'commonmark';
import MarkdownIt from 'markdown-it';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { injectSource } from '../../src/client/comparison-source.ts';
import { MARKDOWN_LIMIT, buildReport, renderMarkdown } from '../../src/cli/report.ts';
import { Report as reportSchema } from '../../src/api/report.ts';
import { readPair } from '../../src/client/pair.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { runCli } from '../helpers/cli.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { fixturesDir, repoRoot } from '../helpers/paths.ts';
import { uploadRepeatedRuns } from '../helpers/repeated-runs.ts';
import { encodePprof } from '../helpers/pprof-encode.ts';

const ORIGIN = 'https://stagediff.example';
const GOLDEN = join(repoRoot, 'server/test/cli/golden/demo-report.md');

const HOSTILE_STAGE = '<script>alert(1)</script> @team #1 **bold** [x](javascript:alert(2))';
/** What once reached GitHub's renderer as markup inside `<details><summary>`: a link and an image. */
const SUMMARY_PAYLOAD = '<a href=//evil.example>x</a><img src=x onerror=alert(1)>';
const HOSTILE_FUNCTIONS = [
  '<img src=x onerror=alert(3)>',
  'pipe|in|name',
  'tick`s``',
  '[link](https://evil.example) @someone #12 :smile: $x$',
];

let app: StagediffApp;
let socketUrl: string;
let hostileId: string;
let summaryId: string;
let bigId: string;
const validate = new Ajv({ allErrors: true, strict: false }).compile(reportSchema);

async function report(id: string, opts: { base?: string; target?: string; top?: number } = {}) {
  const src = injectSource(app, id, ORIGIN);
  const pair = await readPair(src, { ...opts, top: opts.top ?? 20 });
  const r = buildReport(pair, { share: pair.comparison.url, image: (p) => src.publicUrl(p) });
  return { pair, report: r, markdown: renderMarkdown(r, { top: opts.top ?? 20 }) };
}

/** Stage ids are random per run: the golden file names them. */
function stable(text: string, stages: { id: string; name: string }[]): string {
  let out = text;
  for (const s of stages) out = out.replaceAll(s.id, `{${s.name}}`);
  return out;
}

/** wrk's Requests/sec of each run of a demo stage (fixtures/demo/<stage>/run-K/wrk.txt), as printed. */
function wrkRuns(stage: string): number[] {
  const dir = join(fixturesDir, 'demo', stage);
  return readdirSync(dir)
    .filter((d) => /^run-\d+$/.test(d))
    .map((d) => Number(/^Requests\/sec:\s+([\d.]+)$/m.exec(readFileSync(join(dir, d, 'wrk.txt'), 'utf8'))![1]));
}

/** The median of a demo stage's wrk Requests/sec across its runs. */
function wrkRps(stage: string): number {
  const s = wrkRuns(stage).sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function folded(dir: string, name: string, lines: string[]): string {
  const p = join(dir, name);
  writeFileSync(p, `${lines.join('\n')}\n`);
  return p;
}

beforeAll(async () => {
  app = await testApp({ PUBLIC_URL: ORIGIN });
  await seedDemo(app.ctx);
  const dir = mkdtempSync(join(tmpdir(), 'stagediff-report-'));

  const h = await createComparison(app, '<b>Title</b> & @everyone');
  hostileId = h.id;
  for (const [i, name] of ['base', HOSTILE_STAGE].entries()) {
    const st = await addStage(app, h.id, h.auth, name);
    const file = folded(
      dir,
      `h${i}.folded`,
      HOSTILE_FUNCTIONS.map((f, k) => `main;${f} ${(k + 1) * 10 + i * 7 * k}`),
    );
    const r = await upload(app, h.id, st, h.auth, [file]);
    expect(r.statusCode, r.body).toBe(200);
  }

  // A profile pair whose hot-path table alone would pass GitHub's limit many times over.
  const b = await createComparison(app, 'many long names');
  bigId = b.id;
  for (const side of [0, 1]) {
    const st = await addStage(app, b.id, b.auth, `stage-${side}`);
    const lines = Array.from({ length: 400 }, (_, k) => `main;pkg.${'LongName'.repeat(60)}${k} ${k + 1 + side * k}`);
    const r = await upload(app, b.id, st, b.auth, [folded(dir, `big${side}.folded`, lines)]);
    expect(r.statusCode, r.body).toBe(200);
  }

  // A sample type (and a stage) named with the summary payload: it heads a folded section.
  const p = await createComparison(app, 'summary payload');
  summaryId = p.id;
  for (const [i, name] of ['base', `target ${SUMMARY_PAYLOAD}`].entries()) {
    const st = await addStage(app, p.id, p.auth, name);
    const bytes = encodePprof({
      sampleTypes: [[SUMMARY_PAYLOAD, 'count']],
      locations: [{ lines: [{ fn: 'main.work' }] }, { lines: [{ fn: 'main.other' }] }],
      samples: [
        { stack: [0], values: [10 + i * 5] },
        { stack: [1], values: [20] },
      ],
    });
    const file = join(dir, `payload${i}.pb`);
    writeFileSync(file, bytes);
    const r = await upload(app, p.id, st, p.auth, [file]);
    expect(r.statusCode, r.body).toBe(200);
  }

  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  socketUrl = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}, 120_000);

afterAll(async () => {
  await app?.close();
});

describe('report on the demo comparison', () => {
  it('matches the reviewed golden Markdown', async () => {
    const { pair, markdown } = await report('demo');
    const text = stable(markdown, pair.comparison.stages);
    if (process.env.UPDATE_GOLDEN === '1' || !existsSync(GOLDEN)) writeFileSync(GOLDEN, text);
    expect(text).toBe(readFileSync(GOLDEN, 'utf8'));
    expect(markdown.length).toBeLessThan(MARKDOWN_LIMIT);
  });

  it('gives JSON valid against the schema, with the stage table figures wrk printed', async () => {
    const { report: r } = await report('demo');
    const json = JSON.parse(JSON.stringify(r));
    expect(validate(json), JSON.stringify(validate.errors)).toBe(true);
    expect(r.base.name).toBe('baseline');
    expect(r.target.name).toBe('async-log');
    const rps = r.changes.find((c) => c.metric === 'rps')!;
    // The medians of what wrk printed in each stage's six runs (fixtures/demo/*/run-K/wrk.txt).
    expect(rps.base!.median).toBe(wrkRps('baseline'));
    expect(rps.target!.median).toBe(wrkRps('async-log'));
    expect(rps.verdict.ratio).toBeCloseTo(wrkRps('async-log') / wrkRps('baseline'), 12);
    // Every async-log run served more than every baseline run: significant, on all the runs.
    expect(Math.min(...wrkRuns('async-log'))).toBeGreaterThan(Math.max(...wrkRuns('baseline')));
    expect(rps).toMatchObject({ direction: 'improvement' });
    expect(rps.verdict).toMatchObject({
      status: 'significant',
      nBase: wrkRuns('baseline').length,
      nTarget: wrkRuns('async-log').length,
    });
    expect(rps.verdict.p).toBeLessThan(0.05);
    expect(r.summary.improvements).toBeGreaterThan(0);
    expect(r.summary.tooFewRuns).toBe(0);
    const cpu = r.changes.find((c) => c.metric === 'cpu-per-request')!;
    expect(cpu.unit).toBe('nanoseconds/request');
    // The engine's own figures: the report selects, never recomputes.
    const engine = (
      await app.inject({ url: `/api/comparisons/demo/changes?base=${r.base.id}&target=${r.target.id}&functions=on` })
    ).json();
    // Every figure measured on both sides (the demo's runs had no errors: that row is left out).
    expect(JSON.parse(JSON.stringify(r.changes))).toEqual(
      engine.figures.filter(
        (f: { metric: string; verdict: { status: string } }) =>
          f.verdict.status !== 'missing' && f.metric !== 'error-rate',
      ),
    );
    expect(r.sentences).toEqual(engine.sentences);
    expect(r.images.diffSvg).toBe(
      `${ORIGIN}/api/comparisons/demo/diff.svg?base=${r.base.id}&target=${r.target.id}&kind=cpu&minFraction=0.0001`,
    );
  });

  it('takes --base and --target by name', async () => {
    const { report: r } = await report('demo', { base: 'fast-json', target: 'pooled' });
    expect([r.base.name, r.target.name]).toEqual(['fast-json', 'pooled']);
    await expect(report('demo', { base: 'nope' })).rejects.toThrow(
      '--base nope: no such stage (stages: baseline, fast-json, pooled, async-log)',
    );
  });
});

describe('the report schema', () => {
  it('is published as docs/report-schema.json, identical to the one the tests validate with', () => {
    // Regenerate with: node --import tsx scripts/write-report-schema.ts
    const published = JSON.parse(readFileSync(join(repoRoot, 'docs/report-schema.json'), 'utf8'));
    expect(published).toEqual(JSON.parse(JSON.stringify(reportSchema)));
  });
});

describe('report on hostile text', () => {
  it('carries hostile stage names, titles and function names as text through a CommonMark renderer', async () => {
    const { report: r, markdown } = await report(hostileId);
    expect(validate(JSON.parse(JSON.stringify(r))), JSON.stringify(validate.errors)).toBe(true);
    // Functions are ranked by change; every hostile name is in the table.
    const names = r.topFunctions!.rows.map((x) => x.name);
    for (const f of HOSTILE_FUNCTIONS.slice(1)) expect(names).toContain(f);
    const html = new MarkdownIt({ html: true, linkify: true }).render(markdown);
    const tags = new Set([...html.matchAll(/<([a-z][a-z0-9]*)\b/g)].map((m) => m[1]));
    expect(
      [...tags].every((t) =>
        [
          'h2',
          'h3',
          'p',
          'strong',
          'a',
          'ul',
          'li',
          'table',
          'thead',
          'tbody',
          'tr',
          'th',
          'td',
          'details',
          'summary',
          'sub',
          'code',
          'blockquote',
          'img',
        ].includes(t!),
      ),
    ).toBe(true);
    expect(html).not.toMatch(/<script|<img src="?x|href="javascript/i);
    expect(html).not.toMatch(/<[a-z]+[^>]*\son\w+=/i);
    // The names read back as the same text.
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('<code>&lt;img src=x onerror=alert(3)&gt;</code>');
    expect(html).toContain('<code>pipe|in|name</code>');
    expect(html).toContain('<code>tick`s``</code>');
    expect(html).toContain('&lt;b&gt;Title&lt;/b&gt; &amp; @everyone');
    // Mentions and issue references are escaped in the Markdown source (GitHub links them otherwise).
    expect(markdown).toContain('\\@team \\#1');
    expect(markdown).not.toMatch(/(^|[^\\`])@everyone/m);
  });

  it('keeps a sample-type or stage name inside <summary> as text, under markdown-it and commonmark.js', async () => {
    const { report: r, markdown } = await report(summaryId);
    expect(r.topFunctions?.sampleType).toBe(SUMMARY_PAYLOAD);
    const summary = /^<details><summary>Top functions by .*$/m.exec(markdown)?.[0];
    expect(summary).toBeDefined();
    const renderers: [string, (md: string) => string][] = [
      ['markdown-it', (md) => new MarkdownIt({ html: true, linkify: true }).render(md)],
      ['commonmark.js', (md) => new HtmlRenderer({ safe: false }).render(new Parser().parse(md))],
    ];
    for (const [name, render] of renderers) {
      const html = render(markdown);
      expect(html, name).not.toMatch(/<a href="?\/\/evil|<img src="?x/i);
      // No element gains an event handler (attribute values, such as the image's alt text, set aside).
      expect(html.replace(/"[^"]*"/g, '""'), name).not.toMatch(/<[a-z]+[^>]*\son\w+=/i);
      // Read back as text, in a code element inside the summary.
      expect(html, name).toContain(
        '<summary>Top functions by Δ flat <code>&lt;a href=//evil.example&gt;x&lt;/a&gt;&lt;img src=x onerror=alert(1)&gt;</code>',
      );
      // The stage name in the headings is text too.
      expect(html, name).toContain('target &lt;a href=//evil.example&gt;x&lt;/a&gt;');
    }
  });

  it('stays under a PR comment limit however long the names are', async () => {
    const { markdown, report: r } = await report(bigId, { top: 400 });
    expect(r.topFunctions!.rowsTotal).toBe(401);
    expect(markdown.length).toBeLessThanOrEqual(MARKDOWN_LIMIT);
    // The table was shortened to fit, and says how much it shows.
    expect(markdown).toMatch(/Top functions by Δ flat <code>samples<\/code> \((\d+) of 401\)/);
    const shown = Number(/\((\d+) of 401\)/.exec(markdown)![1]);
    expect(shown).toBeGreaterThan(10);
    expect(shown).toBeLessThan(400);
  });
});

describe('stagediff report (the command)', () => {
  it('prints Markdown and JSON from a server over HTTP, and saves the diff image', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-report-cli-'));
    const md = await runCli([
      'report',
      '--server',
      socketUrl,
      '--comparison',
      'demo',
      '--image',
      join(dir, 'diff.svg'),
    ]);
    expect(md.status, md.stderr).toBe(0);
    expect(md.stdout).toMatch(/^## stagediff: baseline → async-log\n/);
    expect(md.stderr).toBe(`diff flamegraph saved as ${join(dir, 'diff.svg')}\n`);
    expect(readFileSync(join(dir, 'diff.svg'), 'utf8')).toMatch(/^<\?xml[\s\S]*<svg [\s\S]*<\/svg>\n$/);
    const js = await runCli([
      'report',
      '--comparison',
      `${socketUrl}/c/demo`,
      '--format',
      'json',
      '--base',
      'pooled',
      '--target',
      'async-log',
    ]);
    expect(js.status, js.stderr).toBe(0);
    const r = JSON.parse(js.stdout);
    expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
    expect([r.base.name, r.target.name]).toEqual(['pooled', 'async-log']);
  });

  it('reads stages from capture folders (--out) through an in-process server', async () => {
    // fixtures/demo is what `stagediff capture --out` wrote: per stage a wrk capture of several runs
    // (run-K/), and a fixed-rate vegeta capture of the same stage in a sub-folder.
    const dir = join(fixturesDir, 'demo');
    const js = await runCli([
      'report',
      '--out',
      join(dir, 'baseline'),
      '--out',
      join(dir, 'pooled'),
      '--format',
      'json',
    ]);
    expect(js.status, js.stderr).toBe(0);
    const r = JSON.parse(js.stdout);
    expect(validate(r), JSON.stringify(validate.errors)).toBe(true);
    expect([r.base.name, r.target.name]).toEqual(['baseline', 'pooled']);
    expect(r.comparison.url).toBeNull();
    expect(r.images.diffSvg).toBeNull();
    // The same figures as the demo comparison on a server: the medians of wrk's Requests/sec.
    const rps = r.changes.find((c: { metric: string }) => c.metric === 'rps');
    expect([rps.base.median, rps.target.median]).toEqual([wrkRps('baseline'), wrkRps('pooled')]);
    const { report: onServer } = await report('demo', { base: 'baseline', target: 'pooled' });
    // Every figure and verdict agrees with the seeded demo on a server (the same files).
    expect(r.changes).toEqual(JSON.parse(JSON.stringify(onServer.changes)));
    expect(r.changes.map((c: { metric: string }) => c.metric)).toContain('cpu-per-request');
    // A parent folder finds both captures and orders them by capture time.
    const md = await runCli(['report', '--out', dir, '--base', 'baseline', '--target', 'pooled']);
    expect(md.status, md.stderr).toBe(0);
    expect(md.stdout).toContain('## stagediff: baseline → pooled');
    // Without --base/--target: the first and the last captured stage.
    expect((await runCli(['report', '--out', dir])).stdout).toContain('## stagediff: baseline → async-log');
    expect(md.stdout).toContain('No image link\\: this report was made from local capture folders');
    const nope = join(tmpdir(), 'stagediff-no-such-folder');
    const none = await runCli(['report', '--out', nope]);
    expect(none.status).toBe(1);
    expect(none.stderr).toBe(`stagediff: --out ${nope}: no such folder\n`);
    // Five CLI processes, each analysing the demo in its own in-process server: a guard against a hang,
    // generous enough for a loaded machine.
  }, 300_000);

  it('fails with one clear line on bad input', async () => {
    const bad = await runCli(['report', '--server', socketUrl, '--comparison', 'demo', '--target', 'nope']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toBe(
      'stagediff: --target nope: no such stage (stages: baseline, fast-json, pooled, async-log)\n',
    );
    const missing = await runCli(['report', '--server', socketUrl, '--comparison', 'nosuchcomparison']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(
      'stagediff: GET /api/comparisons/nosuchcomparison: HTTP 404: no comparison nosuchcomparison\n',
    );
    const usage = await runCli(['report', '--comparison', 'demo', '--format', 'html']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^stagediff: --format must be markdown or json, got "html"\n/);
    const kind = await runCli(['report', '--server', socketUrl, '--comparison', 'demo', '--kind', 'cpux']);
    expect(kind.status).toBe(2);
    expect(kind.stderr).toMatch(/^stagediff: --kind must be one of cpu, .*; got "cpux"\n/);
  });
});

describe('one judgement: GET …/changes, report --format json and check agree on every pair', () => {
  const FIGS = ['rps', 'p50', 'p99', 'cpu-per-request'] as const;
  const RULE: Record<(typeof FIGS)[number], string> = {
    rps: 'rps:+0%',
    p50: 'p50:+0%',
    p99: 'p99:+0%',
    'cpu-per-request': 'cpu-per-request:+0%',
  };
  const brief = (v: { status: string; p: number | null; nBase: number; nTarget: number }) => ({
    status: v.status,
    p: v.p,
    nBase: v.nBase,
    nTarget: v.nTarget,
  });

  async function agree(id: string, base: string, target: string) {
    const engine = (
      await app.inject({
        url: `/api/comparisons/${id}/changes?base=${encodeURIComponent(base)}&target=${encodeURIComponent(target)}`,
      })
    ).json();
    const js = await runCli([
      'report',
      '--server',
      socketUrl,
      '--comparison',
      id,
      '--base',
      base,
      '--target',
      target,
      '--format',
      'json',
    ]);
    expect(js.status, js.stderr).toBe(0);
    const report = JSON.parse(js.stdout);
    const rules = FIGS.flatMap((f) => ['--fail-on', RULE[f]]);
    const check = await runCli([
      'check',
      '--server',
      socketUrl,
      '--comparison',
      id,
      '--base',
      base,
      '--target',
      target,
      ...rules,
      '--json',
    ]);
    const gate = JSON.parse(check.stdout);
    for (const [i, f] of FIGS.entries()) {
      const e = engine.figures.find((c: { metric: string }) => c.metric === f);
      const r = report.changes.find((c: { metric: string }) => c.metric === f);
      const g = gate.results[i].change;
      expect(brief(r.verdict), `${base} → ${target} ${f} (report)`).toEqual(brief(e.verdict));
      expect(brief(g.verdict), `${base} → ${target} ${f} (check)`).toEqual(brief(e.verdict));
    }
  }

  it('on the demo', async () => {
    for (const [b, t] of [
      ['baseline', 'fast-json'],
      ['fast-json', 'pooled'],
      ['pooled', 'async-log'],
      ['baseline', 'async-log'],
    ])
      await agree('demo', b!, t!);
  }, 180_000);

  it('on fixtures/repeated-runs', async () => {
    const { id } = await uploadRepeatedRuns(app);
    for (const [b, t] of [
      ['fast-json', 'pooled'],
      ['pooled', 'pooled-rerun'],
      ['fast-json', 'pooled-rerun'],
    ])
      await agree(id, b!, t!);
  }, 180_000);
});
