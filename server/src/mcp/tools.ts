import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Change, ChangePointMark, StageRow, StageTable, Verdict } from '../api/changes.ts';
import { type ClientQuery, type Reply, endpointUrl } from '../api/endpoints.ts';
import { formatValue } from '../api/format.ts';
import { FIGURES } from '../api/labels.ts';
import { DIFF_MODE_PARAMS, GRANULARITIES, PROFILE_KINDS } from '../api/options.ts';
import { evaluate, parseRule } from '../client/check-rules.ts';
import { readPair } from '../client/pair.ts';
import type { FigureKey } from '../api/changes.ts';
import { ApiRefusal, type McpBackend, comparisonSource, request } from './backend.ts';
import { type McpFigure, estimate, figure, functionChange } from './present.ts';
import { captureRecipe } from './recipe.ts';

/*
 * The agent surface: MCP tools over the HTTP API, so an agent gets the engine's answers and nothing
 * else. Every figure goes through `figure()` (present.ts): its verdict, p and n travel with it, and a
 * change that is not significant reads "not measurable". Answers are kept small: the named changes and
 * the top rows first, with `limit` to ask for more.
 */

export const MCP_SERVER_NAME = 'stagediff';

const ID = z.string().min(1).max(200).describe('a comparison id, or its share link (https://host/c/ID)');
const STAGE = z.string().min(1).max(200).describe('a stage name or id');
const KINDS = PROFILE_KINDS;

const Estimate = z.object({ median: z.number(), lo: z.number().nullable(), hi: z.number().nullable(), n: z.number() });
const Figure = z.object({
  metric: z.string(),
  label: z.string(),
  subject: z.string().nullable(),
  unit: z.string(),
  better: z.enum(['higher', 'lower']),
  base: Estimate.nullable(),
  target: Estimate.nullable(),
  status: z.string(),
  significant: z.boolean(),
  p: z.number().nullable(),
  nBase: z.number(),
  nTarget: z.number(),
  ratio: z.number().nullable(),
  deltaPercent: z.number().nullable(),
  direction: z.enum(['improvement', 'regression']).nullable(),
  reading: z.string(),
  warning: z.string().nullable(),
});
const StageRefOut = z.object({ id: z.string(), name: z.string(), note: z.string() });
const FunctionOut = z.object({
  name: z.string(),
  change: z.enum(['removed', 'added', 'shrank', 'grew']),
  base: z.number(),
  target: z.number(),
  delta: z.number(),
  unit: z.string(),
  status: z.string(),
  significant: z.boolean(),
  p: z.number().nullable(),
  nBase: z.number(),
  nTarget: z.number(),
  reading: z.string(),
});

/** A comparison id from an id or a share link. */
export function comparisonId(given: string): string {
  const link = /\/c\/([A-Za-z0-9_-]+)\/?(?:[?#].*)?$/.exec(given);
  const id = link ? link[1]! : given.trim();
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id))
    throw new ApiRefusal(400, `not a comparison id or share link: "${given}"`, null);
  return id;
}

/** A change with its sign, in the view's unit: "+1.2 µs/req", "−58.2 µs/req". */
function signed(v: number, unit: string): string {
  return `${v < 0 ? '−' : '+'}${formatValue(Math.abs(v), unit)}`;
}

function ok<T extends Record<string, unknown>>(text: string, structured: T): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

function refused(e: unknown): CallToolResult {
  const text = e instanceof ApiRefusal ? e.message : `error: ${(e as Error)?.message ?? String(e)}`;
  return { content: [{ type: 'text', text }], isError: true };
}

/** Runs a tool body; an API refusal (429 past the fair share, 404, 400 …) is the tool's error answer. */
async function guarded(body: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await body();
  } catch (e) {
    return refused(e);
  }
}

type Comparison = Reply<'getComparison'>;

async function getComparison(b: McpBackend, id: string): Promise<Comparison> {
  return request<Comparison>(b, 'GET', endpointUrl('getComparison', { id }));
}

function stageOf(c: Comparison, given: string, what: string): Comparison['stages'][number] {
  const hit = c.stages.find((s) => s.id === given) ?? c.stages.find((s) => s.name === given);
  if (!hit)
    throw new ApiRefusal(
      404,
      `${what} "${given}": no such stage (stages: ${c.stages.map((s) => s.name).join(', ')})`,
      null,
    );
  return hit;
}

/** base → target: both named, or the defaults (the target's previous stage; the last stage). */
function pairOf(c: Comparison, base: string | undefined, target: string | undefined) {
  if (c.stages.length < 2) throw new ApiRefusal(400, `comparison ${c.id} has fewer than two stages`, null);
  const t = target ? stageOf(c, target, 'target') : c.stages[c.stages.length - 1]!;
  const ti = c.stages.indexOf(t);
  const bs = base ? stageOf(c, base, 'base') : c.stages[Math.max(0, ti - 1)]!;
  if (bs.id === t.id) throw new ApiRefusal(400, 'base and target are the same stage', null);
  return { base: bs, target: t };
}

function direction(v: Verdict, better: 'higher' | 'lower'): Change['direction'] {
  if (v.status !== 'significant' || v.ratio === null || v.ratio === 1) return null;
  return v.ratio > 1 === (better === 'higher') ? 'improvement' : 'regression';
}

/** A stage-table cell against the previous stage, as a judged figure. */
function rowChange(key: FigureKey, prev: StageRow, row: StageRow): McpFigure | null {
  const v = row.vsPrevious?.[key];
  if (!v || v.status === 'missing') return null;
  const t = FIGURES[key];
  return figure({
    metric: t.metric,
    label: t.label,
    subject: null,
    unit: t.unit,
    better: t.better,
    base: prev.figures[key],
    target: row.figures[key],
    verdict: v,
    deltaPercent: v.ratio === null ? null : (v.ratio - 1) * 100,
    direction: direction(v, t.better),
    reason: v.reason ?? null,
    warning: row.conditionsVsPrevious ?? null,
  });
}

function tableAnswer(c: Comparison, table: StageTable) {
  const keys = Object.keys(FIGURES) as FigureKey[];
  return {
    comparison: { id: c.id, title: c.title },
    alpha: table.alpha,
    runsNeeded: table.runsNeeded,
    stages: table.rows.map((row, i) => ({
      id: row.stageId,
      name: row.name,
      note: row.note,
      summary: row.summary,
      loadTests: row.loadTests,
      figures: keys
        .filter((k) => row.figures[k] !== null)
        .map((k) => ({ metric: FIGURES[k].metric, unit: FIGURES[k].unit, ...estimate(row.figures[k])! })),
      vsPrevious:
        i === 0 ? [] : keys.map((k) => rowChange(k, table.rows[i - 1]!, row)).filter((f): f is McpFigure => f !== null),
    })),
    changePoints: table.changePoints.map(changePointOut),
  };
}

/** A change point as the tools give it: the figure, the two stages around it, the means and the test. */
function changePointOut(p: ChangePointMark) {
  return {
    metric: FIGURES[p.figure].metric,
    unit: FIGURES[p.figure].unit,
    between: [p.previousStageName, p.stageName] as [string, string],
    meanBefore: p.meanBefore,
    meanAfter: p.meanAfter,
    changePercent: p.changePercent,
    p: p.pValue,
    direction: p.direction,
  };
}

const ChangePointOut = z.object({
  metric: z.string(),
  unit: z.string(),
  between: z.tuple([z.string(), z.string()]),
  meanBefore: z.number(),
  meanAfter: z.number(),
  changePercent: z.number(),
  p: z.number(),
  direction: z.enum(['better', 'worse']),
});

function changePointLine(p: ReturnType<typeof changePointOut>): string {
  return `change point of ${p.metric} between ${p.between[0]} and ${p.between[1]}: ${p.changePercent >= 0 ? '+' : ''}${p.changePercent.toFixed(1)} % (${p.direction}, p=${p.p.toPrecision(2)})`;
}

export interface McpOptions {
  /** Writes (stage notes) need the comparison's edit token: from the tool's `token` or this default. */
  token?: string;
}

/** The MCP server with every tool, resource and prompt of stagediff, over `b`. */
export function createMcpServer(b: McpBackend, opts: McpOptions = {}): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: '1' },
    {
      instructions: `stagediff judges performance changes between stages of a Go service (${b.where}). Repeat a change only as its "reading" says it: a figure that is not significant is "not measurable", never a gain or a loss.`,
    },
  );

  server.registerTool(
    'list_comparisons',
    {
      title: 'List comparisons',
      description:
        'The comparisons this surface knows, or those named by id or share link: title and stages. A server never lists comparisons nobody named (a link is the right to read).',
      inputSchema: { ids: z.array(ID).max(20).optional() },
      outputSchema: {
        comparisons: z.array(
          z.object({ id: z.string(), title: z.string(), url: z.string().nullable(), stages: z.array(StageRefOut) }),
        ),
      },
    },
    ({ ids }) =>
      guarded(async () => {
        const wanted = (ids && ids.length > 0 ? ids : b.known).map(comparisonId);
        const comparisons = [];
        for (const id of wanted) {
          const c = await getComparison(b, id);
          comparisons.push({
            id: c.id,
            title: c.title,
            url: b.origin ? c.url : null,
            stages: c.stages.map((s) => ({ id: s.id, name: s.name, note: s.note })),
          });
        }
        const text =
          comparisons.length === 0
            ? 'No comparison named: pass ids (or share links).'
            : comparisons.map((c) => `${c.id} "${c.title}": ${c.stages.map((s) => s.name).join(' → ')}`).join('\n');
        return ok(text, { comparisons });
      }),
  );

  server.registerTool(
    'stage_table',
    {
      title: 'Stage table',
      description:
        "Every stage's figures (median of its runs with benchstat's 95 % interval), each change against the previous stage with its verdict, p and n, and — over six stages or more — the change points of QPS, P99 and CPU per request (E-Divisive over the stages' medians).",
      inputSchema: { comparison: ID },
      outputSchema: {
        comparison: z.object({ id: z.string(), title: z.string() }),
        alpha: z.number(),
        runsNeeded: z.number(),
        stages: z.array(
          z.object({
            id: z.string(),
            name: z.string(),
            note: z.string(),
            summary: z.string(),
            loadTests: z.number(),
            figures: z.array(Estimate.extend({ metric: z.string(), unit: z.string() })),
            vsPrevious: z.array(Figure),
          }),
        ),
        changePoints: z.array(ChangePointOut),
      },
    },
    ({ comparison }) =>
      guarded(async () => {
        const id = comparisonId(comparison);
        const c = await getComparison(b, id);
        const table = await request<StageTable>(b, 'GET', endpointUrl('stageTable', { id }));
        const answer = tableAnswer(c, table);
        const lines = answer.stages.map(
          (s) =>
            `${s.name}: ${s.vsPrevious.length === 0 ? 'first stage' : s.vsPrevious.map((f) => f.reading).join('; ')}`,
        );
        for (const p of answer.changePoints) lines.push(changePointLine(p));
        return ok(lines.join('\n'), answer);
      }),
  );

  server.registerTool(
    'what_changed',
    {
      title: 'What changed between two stages',
      description:
        "The change engine's judgement of a base → target pair: its sentences, every figure with its verdict, and the functions where the change starts (the first `limit`). Defaults: the last stage against the one before it.",
      inputSchema: {
        comparison: ID,
        base: STAGE.optional(),
        target: STAGE.optional(),
        kind: z.enum(KINDS).optional().describe('profile kind for the functions (default: CPU when there is one)'),
        limit: z.number().int().min(1).max(200).default(10).describe('functions to return'),
      },
      outputSchema: {
        comparison: z.object({ id: z.string(), title: z.string() }),
        base: StageRefOut,
        target: StageRefOut,
        sentences: z.array(z.string()),
        figures: z.array(Figure),
        functions: z.object({
          status: z.string(),
          message: z.string().nullable(),
          kind: z.string().nullable(),
          normalisation: z.string(),
          unit: z.string(),
          total: z.number(),
          changes: z.array(FunctionOut),
        }),
        runtime: z.array(Figure),
        benchmarks: z.array(Figure),
        changePoints: z
          .array(ChangePointOut)
          .optional()
          .describe("the stage table's change points between base and target (absent when the pair straddles none)"),
      },
    },
    ({ comparison, base, target, kind, limit }) =>
      guarded(async () => {
        const id = comparisonId(comparison);
        const c = await getComparison(b, id);
        const pair = pairOf(c, base, target);
        const q: ClientQuery<'changes'> = {
          base: pair.base.id,
          target: pair.target.id,
          functions: 'on',
          ...(kind ? { kind: kind as ClientQuery<'changes'>['kind'] } : {}),
        };
        const ch = await request<Reply<'changes'>>(b, 'GET', endpointUrl('changes', { id }, q as never));
        const fc = ch.functions;
        const answer = {
          comparison: { id: c.id, title: c.title },
          base: ch.base,
          target: ch.target,
          sentences: ch.sentences,
          figures: ch.figures.filter((f) => f.verdict.status !== 'missing').map(figure),
          functions: {
            status: fc.status,
            message: fc.message,
            kind: fc.kind,
            normalisation: fc.normalisation,
            unit: fc.unit,
            total: fc.changes.length,
            changes: fc.changes.slice(0, limit).map((f) => functionChange(f, fc)),
          },
          runtime: (ch.runtime?.figures ?? []).map(figure),
          benchmarks: (ch.benchmarks?.rows ?? []).map(figure),
          ...(ch.changePoints ? { changePoints: ch.changePoints.map(changePointOut) } : {}),
        };
        const text = [
          `${ch.base.name} → ${ch.target.name}`,
          ...(answer.changePoints ?? []).map((p) => `- ${changePointLine(p)}`),
          ...answer.figures.map((f) => `- ${f.reading}`),
          ...(answer.functions.changes.length > 0 ? ['Functions where the change starts:'] : []),
          ...answer.functions.changes.map((f) => `- ${f.reading}`),
        ].join('\n');
        return ok(text, answer);
      }),
  );

  server.registerTool(
    'diff_rows',
    {
      title: 'Diff rows',
      description:
        "A profile diff's rows (function, line or file), ranked by |Δ flat| or |Δ cum|, each with its noise verdict when the stages have several profiles. Filters are Go regular expressions, as go tool pprof's -focus/-ignore/-hide/-show.",
      inputSchema: {
        comparison: ID,
        base: STAGE,
        target: STAGE,
        kind: z.enum(KINDS).optional(),
        sampleType: z.string().min(1).max(100).optional(),
        granularity: z.enum(GRANULARITIES).optional(),
        mode: z.enum(DIFF_MODE_PARAMS).optional(),
        sort: z.enum(['flat', 'cum']).optional(),
        focus: z.string().max(512).optional(),
        ignore: z.string().max(512).optional(),
        hide: z.string().max(512).optional(),
        show: z.string().max(512).optional(),
        limit: z.number().int().min(1).max(200).default(20),
      },
      outputSchema: {
        mode: z.string(),
        modeReason: z.string().nullable(),
        kind: z.string(),
        sampleType: z.string(),
        unit: z.string(),
        rowsTotal: z.number(),
        warnings: z.array(z.string()),
        noise: z.string(),
        rows: z.array(
          z.object({
            name: z.string(),
            base: z.object({ flat: z.number(), cum: z.number() }),
            target: z.object({ flat: z.number(), cum: z.number() }),
            deltaFlat: z.number(),
            deltaCum: z.number(),
            status: z.string(),
            verdict: z.string(),
          }),
        ),
      },
    },
    (a) =>
      guarded(async () => {
        const id = comparisonId(a.comparison);
        const c = await getComparison(b, id);
        const pair = pairOf(c, a.base, a.target);
        const q = {
          base: pair.base.id,
          target: pair.target.id,
          kind: a.kind,
          sampleType: a.sampleType,
          granularity: a.granularity,
          mode: a.mode,
          sort: a.sort,
          focus: a.focus,
          ignore: a.ignore,
          hide: a.hide,
          show: a.show,
          limit: a.limit,
          minFraction: 0.01,
        };
        const d = await request<Reply<'diff'>>(b, 'GET', endpointUrl('diff', { id }, q as never));
        const noise = d.noise
          ? d.noise.status === 'tested'
            ? `each row tested across ${d.noise.nBase}+${d.noise.nTarget} profiles (${d.noise.normalisation})`
            : `not tested: ${d.noise.status} (${d.noise.nBase}+${d.noise.nTarget} profiles)`
          : 'not tested: one profile per stage';
        const rows = d.top.map((r) => ({
          name: r.name,
          base: r.base,
          target: r.target,
          deltaFlat: r.deltaFlat,
          deltaCum: r.deltaCum,
          status: r.status,
          verdict: !r.verdict
            ? 'not tested'
            : r.verdict.cum.status === 'significant' || r.verdict.flat.status === 'significant'
              ? `significant (flat ${r.verdict.flat.status}, p=${r.verdict.flat.p?.toFixed(3) ?? '—'}; cum ${r.verdict.cum.status}, p=${r.verdict.cum.p?.toFixed(3) ?? '—'})`
              : `not measurable — within the noise (flat p=${r.verdict.flat.p?.toFixed(3) ?? '—'}, cum p=${r.verdict.cum.p?.toFixed(3) ?? '—'})`,
        }));
        const answer = {
          mode: d.mode,
          modeReason: d.modeReason,
          kind: d.kind,
          sampleType: d.sampleType,
          unit: d.unit,
          rowsTotal: d.rowsTotal,
          warnings: d.warnings,
          noise,
          rows,
        };
        const text = [
          `${pair.base.name} → ${pair.target.name}, ${d.kind} ${d.sampleType} (${d.mode}, ${d.unit}); ${noise}; ${rows.length} of ${d.rowsTotal} rows`,
          ...rows.map(
            (r) =>
              `- ${r.name}: Δflat ${signed(r.deltaFlat, d.unit)}, Δcum ${signed(r.deltaCum, d.unit)} (${r.status}; ${r.verdict})`,
          ),
        ].join('\n');
        return ok(text, answer);
      }),
  );

  server.registerTool(
    'function_lines',
    {
      title: "A function's lines in two stages",
      description:
        "A function's source lines in the base and the target stage, aligned, with each line's flat and cum (as go tool pprof -list) and its verdict; the first `limit` rows.",
      inputSchema: {
        comparison: ID,
        base: STAGE,
        target: STAGE,
        fn: z.string().min(1).max(4096).describe('the function, as the views name it (e.g. main.appendJSONString)'),
        kind: z.enum(KINDS).optional(),
        limit: z.number().int().min(1).max(400).default(80),
      },
      outputSchema: {
        fn: z.string(),
        mode: z.string(),
        unit: z.string(),
        rowsTotal: z.number(),
        rows: z.array(
          z.object({
            change: z.string(),
            baseLine: z.number().nullable(),
            targetLine: z.number().nullable(),
            base: z.object({ flat: z.number(), cum: z.number() }).nullable(),
            target: z.object({ flat: z.number(), cum: z.number() }).nullable(),
            text: z.string().nullable(),
          }),
        ),
      },
    },
    (a) =>
      guarded(async () => {
        const id = comparisonId(a.comparison);
        const c = await getComparison(b, id);
        const pair = pairOf(c, a.base, a.target);
        const q = { base: pair.base.id, target: pair.target.id, fn: a.fn, kind: a.kind };
        const v = await request<Reply<'source'>>(b, 'GET', endpointUrl('source', { id }, q as never));
        const rows = v.rows.slice(0, a.limit).map((r) => ({
          change: r.change,
          baseLine: r.base?.line ?? null,
          targetLine: r.target?.line ?? null,
          base: r.base ? { flat: r.base.flat, cum: r.base.cum } : null,
          target: r.target ? { flat: r.target.flat, cum: r.target.cum } : null,
          text: (r.targetText ?? r.baseText ?? null)?.slice(0, 240) ?? null,
        }));
        const answer = { fn: v.fn, mode: v.mode, unit: v.unit, rowsTotal: v.rows.length, rows };
        const text = [
          `${v.fn}, ${pair.base.name} → ${pair.target.name} (${v.unit}); ${rows.length} of ${v.rows.length} rows`,
          ...rows
            .filter((r) => (r.base?.cum ?? 0) !== 0 || (r.target?.cum ?? 0) !== 0)
            .map(
              (r) =>
                `${r.targetLine ?? r.baseLine ?? '?'}: cum ${formatValue(r.base?.cum ?? 0, v.unit)} → ${formatValue(r.target?.cum ?? 0, v.unit)}  ${JSON.stringify(r.text ?? '')}`,
            ),
        ].join('\n');
        return ok(text, answer);
      }),
  );

  server.registerTool(
    'pair_conditions',
    {
      title: 'Conditions of a pair',
      description:
        'How each stage of a pair was measured (load tool and settings, Go version, GOMAXPROCS, GOGC, GOMEMLIMIT, build, machine) and whether the engine compares them: load-test figures of different tools or settings get no verdict; other differences are a warning on every figure.',
      inputSchema: { comparison: ID, base: STAGE.optional(), target: STAGE.optional() },
      outputSchema: {
        base: z.object({
          name: z.string(),
          conditions: z.array(z.object({ key: z.string(), label: z.string(), values: z.array(z.string()) })),
        }),
        target: z.object({
          name: z.string(),
          conditions: z.array(z.object({ key: z.string(), label: z.string(), values: z.array(z.string()) })),
        }),
        loadComparable: z.boolean(),
        loadReason: z.string().nullable(),
        differences: z.array(z.object({ key: z.string(), text: z.string() })),
        warning: z.string().nullable(),
      },
    },
    ({ comparison, base, target }) =>
      guarded(async () => {
        const id = comparisonId(comparison);
        const c = await getComparison(b, id);
        const pair = pairOf(c, base, target);
        const q = { base: pair.base.id, target: pair.target.id };
        const ch = await request<Reply<'changes'>>(b, 'GET', endpointUrl('changes', { id }, q as never));
        const pc = ch.conditions;
        const answer = {
          base: { name: ch.base.name, conditions: pc.base.summary },
          target: { name: ch.target.name, conditions: pc.target.summary },
          loadComparable: pc.loadComparable,
          loadReason: pc.loadReason,
          differences: pc.differences.map((d) => ({ key: d.key, text: d.text })),
          warning: pc.warning,
        };
        const text = [
          `${ch.base.name} → ${ch.target.name}: ${pc.loadComparable ? 'load-test figures comparable (same tool and settings)' : `load-test figures NOT compared — ${pc.loadReason}`}`,
          ...(pc.differences.length === 0
            ? ['No other condition differs where both stages state it.']
            : pc.differences.map((d) => `- differs: ${d.text}`)),
        ].join('\n');
        return ok(text, answer);
      }),
  );

  server.registerTool(
    'check_rules',
    {
      title: 'Check rules',
      description:
        "What `stagediff check --fail-on RULE…` would say of a pair: each rule's outcome (fail, pass, unjudged, no-data) in the engine's words. Rules: METRIC:+N% or METRIC:-N% (rps, p50, p95, p99, error-rate, cpu-per-request, alloc-per-request, bench:UNIT, runtime rows).",
      inputSchema: {
        comparison: ID,
        base: STAGE.optional(),
        target: STAGE.optional(),
        rules: z.array(z.string().min(1).max(200)).min(1).max(40),
        tooFewRuns: z.enum(['pass', 'fail']).default('pass'),
      },
      outputSchema: {
        failed: z.boolean(),
        base: z.string(),
        target: z.string(),
        results: z.array(
          z.object({ rule: z.string(), outcome: z.string(), message: z.string(), figure: Figure.nullable() }),
        ),
      },
    },
    (a) =>
      guarded(async () => {
        let rules: ReturnType<typeof parseRule>[];
        try {
          rules = a.rules.map(parseRule);
        } catch (e) {
          throw new ApiRefusal(400, (e as Error).message, null);
        }
        const id = comparisonId(a.comparison);
        const c = await getComparison(b, id);
        const pair = pairOf(c, a.base, a.target);
        const data = await readPair(comparisonSource(b, id), { base: pair.base.id, target: pair.target.id, top: 1 });
        const results = evaluate(rules, data);
        const failUnjudged = a.tooFewRuns === 'fail';
        const failed = results.some(
          (r) => r.outcome === 'fail' || (failUnjudged && (r.outcome === 'unjudged' || r.outcome === 'no-data')),
        );
        const answer = {
          failed,
          base: pair.base.name,
          target: pair.target.name,
          results: results.map((r) => ({
            rule: r.rule.text,
            outcome: r.outcome,
            message: r.message,
            figure: r.change ? figure(r.change) : null,
          })),
        };
        const text = [
          ...answer.results.map((r) => `${r.outcome.padEnd(7)} ${r.rule}: ${r.figure?.reading ?? r.message}`),
          failed ? 'check fails' : 'check passes',
        ].join('\n');
        return ok(text, answer);
      }),
  );

  server.registerTool(
    'capture_recipe',
    {
      title: 'Capture recipe for the next stage',
      description:
        'The exact `stagediff capture` command that records the next stage the way this comparison was recorded: several runs, profiles inside the load window, filed on the server when one is named.',
      inputSchema: {
        pprofUrl: z.string().url().describe("the service's pprof base URL, e.g. http://127.0.0.1:6060"),
        stage: z.string().min(1).max(120),
        note: z.string().max(500).optional(),
        runs: z.number().int().min(1).max(50).default(6),
        loadCommand: z
          .array(z.string().max(1000))
          .max(100)
          .optional()
          .describe('the load command, e.g. ["wrk","-t2","-c32","-d30s","--latency","http://127.0.0.1:8080/"]'),
        url: z.string().url().optional().describe('without a load command: the URL the built-in generator loads'),
        comparison: ID.optional().describe('file the stage in this comparison (needs the edit token at run time)'),
        out: z.string().max(500).optional().describe('also keep the files in this folder'),
      },
      outputSchema: { command: z.string(), argv: z.array(z.string()), notes: z.array(z.string()) },
    },
    (a) =>
      guarded(async () => {
        const r = captureRecipe({
          ...a,
          server: a.comparison ? b.origin : null,
          ...(a.comparison ? { comparison: comparisonId(a.comparison) } : {}),
        });
        return ok([r.command, ...r.notes].join('\n'), { ...r });
      }),
  );

  server.registerTool(
    'set_stage_note',
    {
      title: "Set a stage's note",
      description:
        "Writes a stage's note (what the stage changed). Needs the comparison's edit token; a visitor with a link can read, not write.",
      inputSchema: {
        comparison: ID,
        stage: STAGE,
        note: z.string().max(2000),
        token: z.string().min(1).max(200).optional().describe("the comparison's edit token"),
      },
      outputSchema: { stage: StageRefOut },
    },
    (a) =>
      guarded(async () => {
        const token = a.token ?? opts.token;
        if (!token) throw new ApiRefusal(401, "set_stage_note needs the comparison's edit token", null);
        const id = comparisonId(a.comparison);
        const c = await getComparison(b, id);
        const st = stageOf(c, a.stage, 'stage');
        const s = await request<Reply<'patchStage'>>(
          b,
          'PATCH',
          endpointUrl('patchStage', { id, stageId: st.id }),
          { note: a.note },
          token,
        );
        return ok(`${s.name}: note saved`, { stage: { id: s.id, name: s.name, note: s.note } });
      }),
  );

  server.registerResource(
    'comparison',
    new ResourceTemplate('stagediff://comparisons/{id}', {
      list: async () => ({
        resources: b.known.map((id) => ({
          uri: `stagediff://comparisons/${id}`,
          name: id,
          mimeType: 'application/json',
        })),
      }),
    }),
    {
      title: 'A comparison',
      description: 'Its stages and their figures (the stage_table answer)',
      mimeType: 'application/json',
    },
    async (uri, vars) => {
      const id = comparisonId(String(vars.id));
      const c = await getComparison(b, id);
      const table = await request<StageTable>(b, 'GET', endpointUrl('stageTable', { id }));
      return {
        contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(tableAnswer(c, table)) }],
      };
    },
  );

  server.registerResource(
    'stage',
    new ResourceTemplate('stagediff://comparisons/{id}/stages/{stage}', { list: undefined }),
    {
      title: 'A stage',
      description: "One stage's figures and its change against the previous stage",
      mimeType: 'application/json',
    },
    async (uri, vars) => {
      const id = comparisonId(String(vars.id));
      const c = await getComparison(b, id);
      const st = stageOf(c, decodeURIComponent(String(vars.stage)), 'stage');
      const table = await request<StageTable>(b, 'GET', endpointUrl('stageTable', { id }));
      const row = tableAnswer(c, table).stages.find((s) => s.id === st.id);
      return { contents: [{ uri: uri.href, mimeType: 'application/json', text: JSON.stringify(row ?? null) }] };
    },
  );

  server.registerPrompt(
    'explain_stage',
    {
      title: 'Explain a stage',
      description: 'Walks through what one stage changed, honestly: figures with verdicts first, then functions.',
      argsSchema: { comparison: z.string(), stage: z.string() },
    },
    ({ comparison, stage }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text: [
              `Explain what stage "${stage}" of stagediff comparison ${comparison} changed.`,
              `1. Call what_changed with comparison=${comparison} and target="${stage}" (the base defaults to the stage before it).`,
              '2. Lead with the figures whose reading says "significant"; for each, give the reading as it is, with p and n.',
              '3. Say plainly which figures are "not measurable" and why (within the noise, too few runs); never describe them as gains or losses.',
              '4. Then name the functions where the change starts (their readings), and call function_lines for the largest one to show the lines that moved.',
              '5. If a figure reads "not compared", say what differed between the stages and that the runs must be recorded alike.',
              '6. End with what to record next if the answer is "not measurable" (call capture_recipe).',
            ].join('\n'),
          },
        },
      ],
    }),
  );

  return server;
}
