import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.ts';
import { type Inject, injectBackend } from '../mcp/backend.ts';
import { createMcpServer } from '../mcp/tools.ts';
import { clientKey } from '../services/fair-share.ts';
import { bearer } from './auth.ts';

/**
 * POST /mcp: the agent surface over Streamable HTTP, stateless (a new MCP server per request, JSON
 * answers, no session kept on the server). Every tool call is an API request made in this process with
 * the caller's own address, so the caller's fair share, rate limits and edit rights are the ones a
 * browser at that address has: a visitor with a link reads; writes need the comparison's edit token
 * (the tool's `token`, or this request's `Authorization: Bearer`). One client may have MCP_CLIENT_CALLS
 * requests in flight; beyond, 429 with Retry-After.
 */
export default async function mcpRoutes(app: FastifyInstance, { ctx }: { ctx: AppContext }) {
  const limit = ctx.config.mcpClientCalls;
  if (limit <= 0) return;
  const inFlight = new Map<string, number>();
  const inject = app.inject.bind(app) as unknown as Inject;

  app.post('/mcp', { schema: { hide: true } }, async (req, reply) => {
    // One message per request: a batch would run many tool calls under one in-flight slot (the
    // protocol's current revision has no batches).
    if (Array.isArray(req.body))
      return reply.status(400).send({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: 'one JSON-RPC message per request: batches are not taken' },
      });
    const who = clientKey(req.ip);
    const n = inFlight.get(who) ?? 0;
    if (n >= limit) {
      reply.header('retry-after', '1');
      return reply.status(429).send({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32000,
          message: `429: too many MCP calls in flight from this address (MCP_CLIENT_CALLS=${limit}): retry in 1 s`,
        },
      });
    }
    inFlight.set(who, n + 1);
    const token = bearer(req) ?? undefined;
    const backend = injectBackend(inject, {
      known: [],
      origin: ctx.config.publicUrl ?? null,
      where: 'this stagediff server',
      remoteAddress: req.ip,
    });
    const server = createMcpServer(backend, token ? { token } : {});
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    const done = () => {
      const left = (inFlight.get(who) ?? 1) - 1;
      if (left <= 0) inFlight.delete(who);
      else inFlight.set(who, left);
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    };
    reply.raw.once('close', done);
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (e) {
      req.log.warn({ err: e }, 'mcp request failed');
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'internal error' } }));
      }
    }
  });

  const notAllowed = {
    jsonrpc: '2.0',
    id: null,
    error: { code: -32000, message: 'this server answers MCP over POST only (stateless, no event stream)' },
  };
  app.get('/mcp', { schema: { hide: true } }, async (_req, reply) =>
    reply.status(405).header('allow', 'POST').send(notAllowed),
  );
  app.delete('/mcp', { schema: { hide: true } }, async (_req, reply) =>
    reply.status(405).header('allow', 'POST').send(notAllowed),
  );
}
