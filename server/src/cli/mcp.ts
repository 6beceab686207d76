import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { type LoadedFolders, loadFolders } from './capture-folders.ts';
import { UsageError, parseFlags, stringFlag } from './flags.ts';
import { type McpBackend, httpBackend, injectBackend } from '../mcp/backend.ts';
import { comparisonId, createMcpServer } from '../mcp/tools.ts';

/**
 * `stagediff mcp`: the agent surface on stdio, over a stagediff server (`--server URL`, the comparisons
 * an agent may name; `--comparison ID…` lists some up front) or over capture folders (`--out DIR…`,
 * loaded into a throwaway in-process server as `report` does). `--token` (or STAGEDIFF_TOKEN) is the
 * edit token writes use when a call gives none. Everything it prints on stdout is the protocol; its
 * diagnostics go to stderr.
 */
export async function mcpCommand(args: string[]): Promise<number> {
  const f = parseFlags(args, {
    server: 'string',
    comparison: 'strings',
    out: 'strings',
    title: 'string',
    token: 'string',
  });
  const outs = (f.values.out as string[] | undefined) ?? [];
  const server = stringFlag(f, 'server');
  const comparisons = (f.values.comparison as string[] | undefined) ?? [];
  if (outs.length > 0 && server) throw new UsageError('give either --server URL or --out DIR..., not both');
  if (outs.length === 0 && !server)
    throw new UsageError('mcp needs --server URL (a stagediff server) or --out DIR... (capture folders)');
  let known: string[];
  try {
    known = comparisons.map(comparisonId);
  } catch (e) {
    throw new UsageError(`--comparison: ${(e as Error).message}`);
  }
  let backend: McpBackend;
  let loaded: LoadedFolders | null = null;
  if (server) {
    if (!/^https?:\/\//.test(server)) throw new UsageError(`--server must be an http(s) URL, got "${server}"`);
    backend = httpBackend(server, known);
  } else {
    loaded = await loadFolders(outs, stringFlag(f, 'title') ?? 'Local capture');
    const inject = loaded.app.inject.bind(loaded.app) as unknown as Parameters<typeof injectBackend>[0];
    backend = injectBackend(inject, {
      known: [loaded.comparisonId],
      origin: null,
      where: `capture folders ${outs.join(', ')}`,
    });
  }
  const token = stringFlag(f, 'token') ?? process.env.STAGEDIFF_TOKEN;
  const mcp = createMcpServer(backend, token ? { token } : {});
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.on('end', () => resolve());
  });
  await mcp.connect(transport);
  process.stderr.write(`stagediff mcp: serving ${backend.where} on stdio\n`);
  await closed;
  await mcp.close().catch(() => undefined);
  await loaded?.close();
  return 0;
}
