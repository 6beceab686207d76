import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import type { Change, StageChanges, StageTable } from '../../src/api/changes.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';
import { runCli, stagediffBin } from '../helpers/cli.ts';
import { fixturesDir, repoRoot } from '../helpers/paths.ts';

/*
 * The agent surface through the SDK's own client: over HTTP (POST /mcp on a real socket) and over stdio
 * (`stagediff mcp` as a child process). Its answers must be the engine's, figure for figure, and never
 * a bare ratio for a change the engine does not call significant.
 */

const TOOLS = [
  'list_comparisons',
  'stage_table',
  'what_changed',
  'diff_rows',
  'function_lines',
  'pair_conditions',
  'check_rules',
  'capture_recipe',
  'set_stage_note',
];

let app: StagediffApp;
let base: string;
/** A comparison of wrk runs against k6 runs: load-test figures the engine must not compare. */
let toolsId: string;

type Structured = Record<string, unknown>;
interface ToolAnswer {
  isError?: boolean;
  structuredContent?: Structured;
  content: { type: string; text?: string }[];
}

async function httpClient(address: string, token?: string): Promise<Client> {
  const headers: Record<string, string> = { 'x-forwarded-for': address };
  if (token) headers.authorization = `Bearer ${token}`;
  const client = new Client({ name: 'stagediff-test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }));
  return client;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<ToolAnswer> {
  return (await client.callTool({ name, arguments: args })) as ToolAnswer;
}

function text(a: ToolAnswer): string {
  return a.content.map((c) => c.text ?? '').join('\n');
}

async function api<T>(path: string): Promise<T> {
  const r = await fetch(`${base}${path}`);
  expect(r.status, path).toBe(200);
  return (await r.json()) as T;
}

/** The figures of a /changes answer as the agent surface must carry them. */
function engineFigures(cs: Change[]) {
  return cs
    .filter((c) => c.verdict.status !== 'missing')
    .map((c) => ({
      metric: c.metric,
      subject: c.subject,
      unit: c.unit,
      base: c.base?.median ?? null,
      target: c.target?.median ?? null,
      status: c.verdict.status,
      p: c.verdict.p,
      n: [c.verdict.nBase, c.verdict.nTarget],
      ratio: c.verdict.ratio,
    }));
}

function mcpFigures(fs: Structured[]) {
  return fs.map((f) => ({
    metric: f.metric,
    subject: f.subject,
    unit: f.unit,
    base: (f.base as { median: number } | null)?.median ?? null,
    target: (f.target as { median: number } | null)?.median ?? null,
    status: f.status,
    p: f.p,
    n: [f.nBase, f.nTarget],
    ratio: f.ratio,
  }));
}

beforeAll(async () => {
  // Trusting the loopback proxy lets each test client speak for its own address (X-Forwarded-For).
  app = await testApp({ TRUST_PROXY: '127.0.0.1', MCP_CLIENT_CALLS: '4' });
  await seedDemo(app.ctx);
  const c = await createComparison(app, 'wrk against k6');
  toolsId = c.id;
  const wrk = await addStage(app, c.id, c.auth, 'pooled');
  expect(
    (await upload(app, c.id, wrk, c.auth, [join(fixturesDir, 'loadtests', 'wrk', 'three-runs.txt')])).statusCode,
  ).toBe(200);
  const k6 = await addStage(app, c.id, c.auth, 'async-log');
  for (const f of ['console-v1-ok.txt', 'console-v0-ok.txt', 'console-v1-errors-full.txt', 'console-v0-errors.txt'])
    expect((await upload(app, c.id, k6, c.auth, [join(fixturesDir, 'loadtests', 'k6', f)])).statusCode).toBe(200);
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
}, 180_000);

afterAll(async () => {
  await app?.close();
});

describe('POST /mcp (Streamable HTTP)', () => {
  it('lists every tool with an input and an output schema', async () => {
    const client = await httpClient('198.51.100.1');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const t of tools) {
      expect(t.inputSchema.type, t.name).toBe('object');
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect(t.description?.length ?? 0, t.name).toBeGreaterThan(20);
    }
    // The published schemas are the ones served (regenerate with node --import tsx scripts/mcp-session.ts).
    const published = JSON.parse(readFileSync(join(repoRoot, 'docs/mcp-tools.json'), 'utf8'));
    expect(published).toEqual(JSON.parse(JSON.stringify(tools)));
    const prompts = await client.listPrompts();
    expect(prompts.prompts.map((p) => p.name)).toContain('explain_stage');
    await client.close();
  });

  it('answers what changed for every demo pair exactly as GET …/changes and stagediff report do', async () => {
    const client = await httpClient('198.51.100.2');
    const c = await api<{ stages: { id: string; name: string }[] }>('/api/comparisons/demo');
    for (let i = 1; i < c.stages.length; i++) {
      const [b, t] = [c.stages[i - 1]!, c.stages[i]!];
      const a = await call(client, 'what_changed', { comparison: 'demo', base: b.name, target: t.name, limit: 5 });
      expect(a.isError, text(a)).toBeFalsy();
      const s = a.structuredContent!;
      const changes = await api<StageChanges>(`/api/comparisons/demo/changes?base=${b.id}&target=${t.id}&functions=on`);
      expect(mcpFigures(s.figures as Structured[])).toEqual(engineFigures(changes.figures));
      expect(s.sentences).toEqual(changes.sentences);
      const fns = (s.functions as { changes: Structured[] }).changes;
      expect(fns.map((f) => [f.name, f.change, f.status, f.p])).toEqual(
        changes.functions.changes.slice(0, 5).map((f) => [f.name, f.change, f.verdict.status, f.verdict.p]),
      );
      // The same figures as `stagediff report --format json` prints for the pair.
      const r = await runCli([
        'report',
        '--server',
        base,
        '--comparison',
        'demo',
        '--base',
        b.name,
        '--target',
        t.name,
        '--format',
        'json',
      ]);
      expect(r.status, r.stderr).toBe(0);
      // (The report leaves out figures without a ratio, such as an error rate of 0 on both sides.)
      const reported = engineFigures(JSON.parse(r.stdout).changes as Change[]);
      const metrics = new Set(reported.map((f) => `${f.metric} ${f.subject}`));
      expect(reported.length).toBeGreaterThan(3);
      expect(mcpFigures(s.figures as Structured[]).filter((f) => metrics.has(`${f.metric} ${f.subject}`))).toEqual(
        reported,
      );
    }
    await client.close();
  }, 300_000);

  it('gives the stage table with every change judged as the table judges it', async () => {
    const client = await httpClient('198.51.100.3');
    const a = await call(client, 'stage_table', { comparison: 'https://example.invalid/c/demo' });
    expect(a.isError, text(a)).toBeFalsy();
    const table = await api<StageTable>('/api/comparisons/demo/stage-table');
    const stages = a.structuredContent!.stages as { name: string; figures: Structured[]; vsPrevious: Structured[] }[];
    expect(stages.map((s) => s.name)).toEqual(table.rows.map((r) => r.name));
    for (const [i, row] of table.rows.entries()) {
      const rps = stages[i]!.figures.find((f) => f.metric === 'rps')!;
      expect(rps.median).toBe(row.figures.rps!.median);
      if (i === 0) continue;
      const q = stages[i]!.vsPrevious.find((f) => f.metric === 'rps')!;
      expect([q.status, q.p, q.nBase, q.nTarget, q.ratio]).toEqual([
        row.vsPrevious!.rps.status,
        row.vsPrevious!.rps.p,
        row.vsPrevious!.rps.nBase,
        row.vsPrevious!.rps.nTarget,
        row.vsPrevious!.rps.ratio,
      ]);
    }
    await client.close();
  });

  it('never carries a ratio for pooled → async-log QPS without saying it is not measurable', async () => {
    const client = await httpClient('198.51.100.4');
    const answers = [
      await call(client, 'what_changed', { comparison: 'demo', base: 'pooled', target: 'async-log' }),
      await call(client, 'stage_table', { comparison: 'demo' }),
      await call(client, 'check_rules', {
        comparison: 'demo',
        base: 'pooled',
        target: 'async-log',
        rules: ['rps:-1%', 'rps:+1%'],
      }),
    ];
    const what = answers[0]!.structuredContent!;
    const qps = (what.figures as Structured[]).find((f) => f.metric === 'rps')!;
    expect(qps.status).toBe('no-change');
    expect(qps.significant).toBe(false);
    expect(qps.reading).toMatch(/^QPS \(.*\): not measurable — within the noise \(p=\d\.\d{3}, n=6\+6\)$/);
    expect(text(answers[0]!)).toContain(qps.reading as string);
    const row = (answers[1]!.structuredContent!.stages as { name: string; vsPrevious: Structured[] }[]).find(
      (s) => s.name === 'async-log',
    )!;
    expect(row.vsPrevious.find((f) => f.metric === 'rps')!.reading).toMatch(/not measurable/);
    for (const r of answers[2]!.structuredContent!.results as { figure: Structured }[])
      expect(r.figure.reading).toMatch(/not measurable/);
    // Every QPS line of every text answer that shows its ratio says so too.
    for (const a of answers)
      for (const line of text(a)
        .split('\n')
        .filter((l) => /QPS.*×/.test(l)))
        expect(line).toMatch(/not measurable/);
    await client.close();
  });

  it('says a pair of wrk and k6 runs is not compared, and why, with no ratio', async () => {
    const client = await httpClient('198.51.100.8');
    const cond = await call(client, 'pair_conditions', { comparison: toolsId });
    expect(cond.isError, text(cond)).toBeFalsy();
    expect(cond.structuredContent!.loadComparable).toBe(false);
    expect(cond.structuredContent!.loadReason).toMatch(/^pooled: wrk, .* · async-log: k6, 10 VUs/);
    expect(text(cond)).toMatch(/load-test figures NOT compared — pooled: wrk/);
    const what = await call(client, 'what_changed', { comparison: toolsId });
    for (const f of (what.structuredContent!.figures as Structured[]).filter((x) =>
      ['rps', 'p50', 'p99'].includes(x.metric as string),
    )) {
      expect(f.status, String(f.metric)).toBe('not-comparable');
      expect(f.ratio).toBeNull();
      expect(f.reading).toMatch(/: not compared — .*wrk.*k6/);
    }
    const check = await call(client, 'check_rules', { comparison: toolsId, rules: ['p50:+5%'] });
    expect((check.structuredContent!.results as Structured[])[0]!.outcome).not.toBe('pass');
    // The demo's pairs were recorded alike.
    const demo = await call(client, 'pair_conditions', { comparison: 'demo', base: 'pooled', target: 'async-log' });
    expect(demo.structuredContent!.loadComparable).toBe(true);
    expect(demo.structuredContent!.differences).toEqual([]);
    await client.close();
  });

  it('shows a function in two stages and a capture recipe', async () => {
    const client = await httpClient('198.51.100.5');
    const lines = await call(client, 'function_lines', {
      comparison: 'demo',
      base: 'fast-json',
      target: 'pooled',
      fn: 'main.appendJSONString',
      limit: 200,
    });
    expect(lines.isError, text(lines)).toBeFalsy();
    const rows = lines.structuredContent!.rows as { base: { cum: number } | null; text: string | null }[];
    expect(rows.some((r) => (r.base?.cum ?? 0) > 0 && r.text !== null)).toBe(true);
    const recipe = await call(client, 'capture_recipe', {
      pprofUrl: 'http://127.0.0.1:6060',
      stage: "it's pooled",
      loadCommand: ['wrk', '-t2', '-c32', '-d30s', '--latency', 'http://127.0.0.1:8080/api/orders'],
      comparison: 'demo',
    });
    // Without PUBLIC_URL the server cannot name itself: the recipe keeps the files and says so.
    expect(recipe.structuredContent!.command).toBe(
      "npx stagediff capture --pprof http://127.0.0.1:6060 --stage 'it'\\''s pooled' --runs 6 -- wrk -t2 -c32 -d30s --latency http://127.0.0.1:8080/api/orders",
    );
    expect(recipe.structuredContent!.notes).toContain('No server to file on here: the files stay in --out.');
    await client.close();
  });

  it('refuses a write without the edit token and makes it with one', async () => {
    const { id, token, auth } = await createComparison(app, 'mcp writes');
    await addStage(app, id, auth, 'first');
    const visitor = await httpClient('198.51.100.6');
    const refused = await call(visitor, 'set_stage_note', { comparison: id, stage: 'first', note: 'x' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/edit token/);
    const wrong = await call(visitor, 'set_stage_note', { comparison: id, stage: 'first', note: 'x', token: 'nope' });
    expect(wrong.isError).toBe(true);
    expect(text(wrong)).toMatch(/HTTP 403/);
    await visitor.close();
    const editor = await httpClient('198.51.100.7', token);
    const done = await call(editor, 'set_stage_note', { comparison: id, stage: 'first', note: 'shared transport' });
    expect(done.isError, text(done)).toBeFalsy();
    const c = await api<{ stages: { note: string }[] }>(`/api/comparisons/${id}`);
    expect(c.stages[0]!.note).toBe('shared transport');
    await editor.close();
  });

  it('refuses calls past one client’s share with 429 while another client still answers', async () => {
    const flood = await httpClient('203.0.113.9');
    const calls = Array.from({ length: 40 }, (_, k) =>
      flood
        .callTool({
          name: 'diff_rows',
          arguments: { comparison: 'demo', base: 'baseline', target: 'async-log', limit: 1 + (k % 20) },
        })
        .then(
          (a) => ({ ok: !(a as ToolAnswer).isError, text: text(a as ToolAnswer) }),
          (e: Error) => ({ ok: false, text: e.message }),
        ),
    );
    // A batch would run many calls under one slot: refused whole.
    const call1 = {
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'stage_table', arguments: { comparison: 'demo' } },
    };
    const batch = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(Array.from({ length: 50 }, (_, k) => ({ ...call1, id: k + 1 }))),
    });
    expect(batch.status).toBe(400);
    expect((await batch.json()).error.message).toMatch(/one JSON-RPC message per request/);
    const other = await httpClient('192.0.2.77');
    const mine = await call(other, 'stage_table', { comparison: 'demo' });
    const results = await Promise.all(calls);
    expect(mine.isError, text(mine)).toBeFalsy();
    const refused = results.filter((r) => !r.ok);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.text).toMatch(/429/);
    expect(results.some((r) => r.ok)).toBe(true);
    await flood.close();
    await other.close();
  }, 120_000);
});

describe('stagediff mcp (stdio)', () => {
  it('serves the same tools over a server, and over capture folders', async () => {
    const client = new Client({ name: 'stagediff-test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [stagediffBin, 'mcp', '--server', base, '--comparison', 'demo'],
        stderr: 'pipe',
      }),
    );
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    const list = await call(client, 'list_comparisons', {});
    expect((list.structuredContent!.comparisons as { id: string }[]).map((c) => c.id)).toEqual(['demo']);
    const a = await call(client, 'what_changed', { comparison: 'demo', base: 'fast-json', target: 'pooled' });
    const c = await api<{ stages: { id: string; name: string }[] }>('/api/comparisons/demo');
    const id = (n: string) => c.stages.find((s) => s.name === n)!.id;
    const changes = await api<StageChanges>(
      `/api/comparisons/demo/changes?base=${id('fast-json')}&target=${id('pooled')}&functions=on`,
    );
    expect(mcpFigures(a.structuredContent!.figures as Structured[])).toEqual(engineFigures(changes.figures));
    const names = (a.structuredContent!.functions as { changes: Structured[] }).changes.map((f) => f.name);
    expect(names).toContain('net/http.(*Transport).dialConnFor');
    const write = await call(client, 'set_stage_note', { comparison: 'demo', stage: 'pooled', note: 'x' });
    expect(write.isError).toBe(true);
    await client.close();

    // Capture folders, loaded into a throwaway in-process server as `report --out` does.
    const local = new Client({ name: 'stagediff-test', version: '1' });
    await local.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [
          stagediffBin,
          'mcp',
          '--out',
          join(fixturesDir, 'demo', 'fast-json'),
          '--out',
          join(fixturesDir, 'demo', 'pooled'),
        ],
        stderr: 'pipe',
      }),
    );
    const listed = (await call(local, 'list_comparisons', {})).structuredContent!.comparisons as {
      id: string;
      stages: { name: string }[];
    }[];
    expect(listed.map((l) => l.stages.map((st) => st.name))).toEqual([['fast-json', 'pooled']]);
    const fromFolders = await call(local, 'what_changed', { comparison: listed[0]!.id });
    const rps = (x: ToolAnswer) =>
      mcpFigures(x.structuredContent!.figures as Structured[]).find((f) => f.metric === 'rps');
    // The same files give the same figures as the demo on a server.
    expect(rps(fromFolders)).toEqual(rps(a));
    await local.close();
  }, 180_000);

  it('says what it needs on a bad command line', async () => {
    const r = await runCli(['mcp']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^stagediff: mcp needs --server URL/);
  });
});
