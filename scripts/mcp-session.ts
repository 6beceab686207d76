// Records a real session of an MCP client with stagediff's agent surface on the demo, and the tools'
// published schemas: docs/mcp-session.md (each call and the text the agent reads) and
// docs/mcp-tools.json (tools/list as the server answers it; server/test/mcp/tools.test.ts checks it
// is current).
//   node --import tsx scripts/mcp-session.ts
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { buildApp } from '../server/src/app.ts';
import { loadConfig } from '../server/src/config.ts';
import { seedDemo } from '../server/src/services/seed.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-mcp-session-'));
const app = await buildApp(
  loadConfig({
    DATA_DIR: dataDir,
    STAGEDIFF_SEED_DEMO: '0',
    WEB_DIST: '/nonexistent',
    PUBLIC_URL: 'https://stagediff.example',
  }),
  { logger: false },
);
await seedDemo(app.ctx);
await app.listen({ host: '127.0.0.1', port: 0 });
const addr = app.server.address();
const url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}/mcp`;

const client = new Client({ name: 'mcp-session-recorder', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
writeFileSync(new URL('../docs/mcp-tools.json', import.meta.url), `${JSON.stringify(tools, null, 2)}\n`);

const calls: [string, Record<string, unknown>][] = [
  ['list_comparisons', { ids: ['demo'] }],
  ['stage_table', { comparison: 'demo' }],
  ['what_changed', { comparison: 'demo', base: 'fast-json', target: 'pooled', limit: 5 }],
  ['what_changed', { comparison: 'demo', base: 'pooled', target: 'async-log', limit: 3 }],
  ['diff_rows', { comparison: 'demo', base: 'fast-json', target: 'pooled', limit: 5 }],
  [
    'function_lines',
    { comparison: 'demo', base: 'fast-json', target: 'pooled', fn: 'main.appendJSONString', limit: 40 },
  ],
  [
    'check_rules',
    { comparison: 'demo', base: 'pooled', target: 'async-log', rules: ['rps:-3%', 'p99:+5%', 'cpu-per-request:+5%'] },
  ],
  [
    'capture_recipe',
    {
      pprofUrl: 'http://127.0.0.1:6060',
      stage: 'batched-writes',
      note: 'one write per batch of log lines',
      comparison: 'demo',
      loadCommand: ['wrk', '-t2', '-c16', '-d10s', '--latency', 'http://127.0.0.1:8080/api/orders'],
    },
  ],
  ['set_stage_note', { comparison: 'demo', stage: 'pooled', note: 'one shared transport' }],
];

const out: string[] = [
  '# A session with `stagediff mcp`',
  '',
  "Recorded by `node --import tsx scripts/mcp-session.ts`: the MCP TypeScript SDK's client over Streamable",
  'HTTP (`POST /mcp`) against a server seeded with the demo. Each call is shown with the text part of',
  'its answer, which is what an agent reads first; the structured part carries the same figures as',
  '`GET …/changes` (schemas: [mcp-tools.json](mcp-tools.json)). The last call has no edit token and is',
  'refused.',
  '',
  `Tools: ${tools.map((t) => `\`${t.name}\``).join(', ')}.`,
  '',
];
for (const [name, args] of calls) {
  const r = (await client.callTool({ name, arguments: args })) as { isError?: boolean; content: { text?: string }[] };
  out.push(`## ${name}`, '', '```json', JSON.stringify(args), '```', '');
  out.push(
    r.isError ? 'Refused:' : 'Answer (text):',
    '',
    '```text',
    r.content.map((c) => c.text ?? '').join('\n'),
    '```',
    '',
  );
}
writeFileSync(new URL('../docs/mcp-session.md', import.meta.url), out.join('\n'));
await client.close();
// The analysis workers end on unreferenced handles: keep the loop alive until the app has closed.
const keep = setInterval(() => undefined, 1000);
await app.close();
clearInterval(keep);
rmSync(dataDir, { recursive: true, force: true });
