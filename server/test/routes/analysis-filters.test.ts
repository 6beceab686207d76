/**
 * Filters through the HTTP API: expressions that make a backtracking engine run forever answer
 * with go tool pprof's figures, other comparisons are served meanwhile, and syntax Go rejects
 * is a 400 naming the parameter.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { total } from '../../src/analysis/flat-cum.ts';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { findGo, fixturesDir } from '../helpers/paths.ts';
import { parseTopAll, parseTopShown } from '../helpers/pprof-text.ts';

const go = findGo();
const haveGo = go !== null;
if (!haveGo) console.warn('\n*** go is not installed: API filter results are not compared with go tool pprof ***\n');
const cpu = (stage: string) => `${fixturesDir}demo/${stage}/run-1/cpu.pb.gz`;

function pprofTop(file: string, flags: string[]) {
  const r = spawnSync(
    go ?? 'go',
    ['tool', 'pprof', '-top', '-nodecount=0', '-nodefraction=0', '-edgefraction=0', ...flags, file],
    { encoding: 'utf8', env: { ...process.env, PPROF_BINARY_PATH: '/nonexistent' }, maxBuffer: 64 << 20 },
  );
  if (r.status !== 0) throw new Error(`go tool pprof failed: ${r.stderr}`);
  return { rows: parseTopAll(r.stdout), shown: parseTopShown(r.stdout) };
}

/** An alternation of 512 characters: one real function among made-up ones. */
function hugeAlternation(): string {
  const parts = [String.raw`encoding/json\.\(\*Encoder\)\.Encode$`];
  for (let i = 0; `${parts.join('|')}|zz${i}`.length <= 512; i++) parts.push(`zz${i}`);
  return parts.join('|');
}
/** 512 characters of nested quantifiers, matching Go function names ending in "Encode". */
function nestedQuantifiers(): string {
  const unit = String.raw`(\w+\.?)*`;
  const tail = ')*Encode$';
  let s = '(';
  while (s.length + unit.length + tail.length <= 512) s += unit;
  let pad = 512 - s.length - tail.length;
  if (pad % 2 === 1) {
    s += String.raw`\w*`;
    pad -= 3;
  }
  return `${s}${'.?'.repeat(pad / 2)}${tail}`;
}

const pathological: [string, string][] = [
  ['nested stars with an impossible anchor', '([^/]*)*^z$'],
  ['(a+)+b', '(a+)+b'],
  ['(x+x+)+y', '(x+x+)+y'],
  ['nested bounded repeats', '(?:(?:.*){0,100}){0,10}x'],
  ['a 512-character alternation', hugeAlternation()],
  ['512 characters of nested quantifiers', nestedQuantifiers()],
];

let app: StagediffApp;
let demo: { id: string; baseline: string; fastJson: string };
let other: { id: string; stage: string };

beforeAll(async () => {
  app = await testApp();
  const a = await createComparison(app, 'filters');
  const baseline = await addStage(app, a.id, a.auth, 'baseline');
  const fastJson = await addStage(app, a.id, a.auth, 'fast-json');
  expect((await upload(app, a.id, baseline, a.auth, [cpu('baseline')])).statusCode).toBe(200);
  expect((await upload(app, a.id, fastJson, a.auth, [cpu('fast-json')])).statusCode).toBe(200);
  demo = { id: a.id, baseline, fastJson };
  const b = await createComparison(app, 'another team');
  const stage = await addStage(app, b.id, b.auth, 'pooled');
  expect((await upload(app, b.id, stage, b.auth, [cpu('pooled')])).statusCode).toBe(200);
  other = { id: b.id, stage };
  // Parse both comparisons' profiles once, so the timings below are the filters' alone.
  for (const [id, st] of [
    [demo.id, baseline],
    [demo.id, fastJson],
    [other.id, stage],
  ] as const)
    expect((await app.inject({ url: `/api/comparisons/${id}/top?stage=${st}&sampleType=cpu` })).statusCode).toBe(200);
});
afterAll(async () => app.close());

const q = (params: Record<string, string>) => new URLSearchParams(params).toString();

/**
 * A request, answered. Not timed: a backtracking engine on these expressions never ends, so it meets
 * the analysis deadline (ANALYSIS_TIMEOUT_MS, 60 s by default) and answers 503, or the test's hang
 * guard, whatever the machine's load; a status of 200 with pprof's figures is the outcome to check.
 */
async function get(url: string) {
  return { r: await app.inject({ url }) };
}

describe('pathological expressions answer, with pprof-equal figures', () => {
  it('the patterns are what they claim: Go syntax, 512 characters where said', () => {
    expect(hugeAlternation().length).toBe(512);
    expect(nestedQuantifiers().length).toBe(512);
  });

  for (const [what, re] of pathological) {
    for (const filter of ['focus', 'hide'] as const) {
      it(`${filter}: ${what}`, async () => {
        const { r } = await get(
          `/api/comparisons/${demo.id}/top?${q({ stage: demo.baseline, sampleType: 'cpu', [filter]: re })}`,
        );
        expect(r.statusCode, r.body).toBe(200);
        const body = r.json() as { total: number; rows: { name: string; flat: number; cum: number }[] };
        if (!haveGo) return;
        const ref = pprofTop(cpu('baseline'), ['-unit=nanoseconds', `-${filter}=${re}`]);
        expect(body.total).toBe(ref.shown);
        expect(new Map(body.rows.map((x) => [x.name, [x.flat, x.cum]]))).toEqual(ref.rows);
      });
    }
  }

  it('a diff with every filter set to a pathological expression equals go tool pprof -diff_base', async () => {
    const filters = { focus: hugeAlternation(), ignore: '(x+x+)+y', hide: '([^/]*)*^z$', show: nestedQuantifiers() };
    const { r } = await get(
      `/api/comparisons/${demo.id}/diff?${q({ base: demo.baseline, target: demo.fastJson, sampleType: 'cpu', limit: '10000', ...filters })}`,
    );
    expect(r.statusCode, r.body).toBe(200);
    if (!haveGo) return;
    const body = r.json() as { top: { name: string; deltaFlat: number; deltaCum: number }[] };
    const ref = pprofTop(cpu('fast-json'), [
      '-unit=nanoseconds',
      `-diff_base=${cpu('baseline')}`,
      ...Object.entries(filters).map(([k, v]) => `-${k}=${v}`),
    ]);
    expect(ref.rows.size).toBeGreaterThan(0);
    const ours = body.top.filter((x) => x.deltaFlat !== 0 || x.deltaCum !== 0);
    expect(new Map(ours.map((x) => [x.name, [x.deltaFlat, x.deltaCum]]))).toEqual(ref.rows);
  });

  it("meanwhile another comparison's flamegraph answers normally", async () => {
    const worst = pathological.map(([, re]) =>
      get(`/api/comparisons/${demo.id}/flamegraph?${q({ stage: demo.baseline, sampleType: 'cpu', focus: re })}`),
    );
    const [flame, health, ...filtered] = await Promise.all([
      get(
        `/api/comparisons/${other.id}/flamegraph?${q({ stage: other.stage, sampleType: 'cpu', minFraction: '0.001' })}`,
      ),
      get('/healthz'),
      ...worst,
    ]);
    expect(flame.r.statusCode, flame.r.body).toBe(200);
    expect(flame.r.json().total).toBe(total(parsePprof(readFileSync(cpu('pooled'))), 1));
    expect(health.r.statusCode).toBe(200);
    for (const f of filtered) {
      expect(f.r.statusCode, f.r.body).toBe(200);
    }
  });
});

describe('syntax Go rejects is a 400 naming the parameter and the problem', () => {
  const bad: [string, string, string | RegExp][] = [
    [
      'focus',
      '(?=json)',
      'focus is not a valid Go regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
    ],
    [
      'ignore',
      '(?<!x)y',
      'ignore is not a valid Go regular expression: error parsing regexp: invalid named capture: `(?<!x)y`',
    ],
    [
      'hide',
      String.raw`(a)\1`,
      'hide is not a valid Go regular expression: error parsing regexp: invalid escape sequence: `\\1`',
    ],
    [
      'show',
      'a*+',
      'show is not a valid Go regular expression: error parsing regexp: invalid nested repetition operator: `*+`',
    ],
    [
      'focus',
      'x{1001}',
      'focus is not a valid Go regular expression: error parsing regexp: invalid repeat count: `{1001}`',
    ],
    ['hide', `${'a'.repeat(513)}`, 'hide is longer than 512 characters'],
    [
      'focus',
      'x{1000}y{1000}z{1000}w{1000}v{1000}u{1000}t{1000}s{1000}r{1000}q{1000}p{1000}',
      /^focus is too complex: its repetitions expand to about \d+ instructions \(limit 5000\)$/,
    ],
  ];
  for (const [param, re, message] of bad) {
    it(`${param}=${re.length > 40 ? `${re.slice(0, 40)}…` : re}`, async () => {
      for (const url of [
        `/api/comparisons/${demo.id}/flamegraph?${q({ stage: demo.baseline, [param]: re })}`,
        `/api/comparisons/${demo.id}/top?${q({ stage: demo.baseline, [param]: re })}`,
        `/api/comparisons/${demo.id}/diff?${q({ base: demo.baseline, target: demo.fastJson, [param]: re })}`,
      ]) {
        const r = await app.inject({ url });
        expect(r.statusCode, url).toBe(400);
        expect(r.json().error).toEqual({
          code: 'invalid-filter',
          param,
          message: typeof message === 'string' ? message : expect.stringMatching(message),
        });
      }
    });
  }

  it('/api/filters/check answers the same 400 without any analysis, or the expressions as they will apply', async () => {
    const bad = await app.inject({ url: `/api/filters/check?${q({ hide: 'x', show: '(?=json)' })}` });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toEqual({
      code: 'invalid-filter',
      param: 'show',
      message:
        'show is not a valid Go regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
    });
    const good = await app.inject({ url: '/api/filters/check?focus=a&focus=b&hide=(%3Fi)x' });
    expect(good.statusCode, good.body).toBe(200);
    expect(good.json()).toEqual({ focus: 'a|b', hide: '(?i)x' });
  });

  it('Go syntax that JavaScript rejects, such as (?i), is accepted and applied', async () => {
    const r = await app.inject({
      url: `/api/comparisons/${demo.id}/top?${q({ stage: demo.baseline, sampleType: 'cpu', focus: String.raw`(?i)ENCODE\.GO` })}`,
    });
    expect(r.statusCode, r.body).toBe(200);
    const plain = await app.inject({
      url: `/api/comparisons/${demo.id}/top?${q({ stage: demo.baseline, sampleType: 'cpu', focus: String.raw`encode\.go` })}`,
    });
    expect(r.json().total).toBeGreaterThan(0);
    expect(r.json().total).toBe(plain.json().total);
  });

  it('a parameter given several times is its values joined with |', async () => {
    const one = await app.inject({
      url: `/api/comparisons/${demo.id}/top?stage=${demo.baseline}&sampleType=cpu&show=${encodeURIComponent('^main|^net/http')}`,
    });
    const two = await app.inject({
      url: `/api/comparisons/${demo.id}/top?stage=${demo.baseline}&sampleType=cpu&show=%5Emain&show=${encodeURIComponent('^net/http')}`,
    });
    expect(two.statusCode, two.body).toBe(200);
    expect(two.json()).toEqual(one.json());
  });
});
