import type { FastifyInstance, FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify';
import { ENDPOINT_ROUTES, type EndpointName, type EndpointSchema, type Query, SCHEMAS } from '../api/endpoints.ts';

/**
 * Registers an endpoint of the contract (api/endpoints.ts) by name: its method and path from
 * ENDPOINT_ROUTES, its schemas from SCHEMAS — validation of params, query and body, serialisation of the
 * answer, and the OpenAPI document all come from that one declaration.
 */
export function route<N extends EndpointName>(
  app: FastifyInstance,
  name: N,
  handler: (
    req: FastifyRequest<{ Params: Params<N>; Querystring: Query<N>; Body: BodyOf<N> }>,
    reply: FastifyReply,
  ) => Promise<unknown>,
  options: Omit<RouteShorthandOptions, 'schema'> = {},
): void {
  const { method, path } = ENDPOINT_ROUTES[name];
  const s: EndpointSchema = SCHEMAS[name];
  const status = s.status ?? 200;
  app.route({
    ...options,
    method,
    url: path,
    schema: {
      operationId: name,
      summary: s.summary,
      ...(s.description ? { description: s.description } : {}),
      ...(s.params ? { params: s.params } : {}),
      ...(s.querystring ? { querystring: s.querystring } : {}),
      ...(s.body ? { body: s.body } : {}),
      ...(s.auth ? { security: [{ editToken: [] }] } : {}),
      response: {
        [status]:
          status === 204
            ? { description: 'no content', type: 'null' }
            : s.produces
              ? { description: s.summary, content: { [s.produces.split(';')[0]!]: { schema: s.response } } }
              : s.response,
      },
    },
    handler: handler as never,
  });
}

type Params<N extends EndpointName> = (typeof SCHEMAS)[N] extends { params: infer P }
  ? P extends import('typebox').TSchema
    ? import('typebox').Static<P>
    : never
  : Record<string, never>;
type BodyOf<N extends EndpointName> = (typeof SCHEMAS)[N] extends { body: infer B }
  ? B extends import('typebox').TSchema
    ? import('typebox').Static<B>
    : never
  : unknown;
