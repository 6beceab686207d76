import Type from 'typebox';
import { FileResult } from './resources.ts';

/*
 * "Add from a profiler" (`stagediff import`): a stage's runs taken from a continuous profiler's
 * scrapes over a window. The server does the fetching, from the hosts its PROFILER_HOSTS allows.
 */

const Time = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'RFC 3339 time (2026-11-29T04:03:27Z) or milliseconds since the epoch',
});

export const ProfilerImportBody = Type.Object(
  {
    source: Type.Union([Type.Literal('parca'), Type.Literal('pyroscope')]),
    /** The profiler's base URL (Parca: the address of its UI and API, http://host:7070). */
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    /** Label matchers in braces, {job="api"}; the profile type is added per kind. */
    query: Type.String({ maxLength: 1000 }),
    from: Time,
    to: Time,
    runs: Type.Integer({ minimum: 1, maximum: 100 }),
    /**
     * A Prometheus-compatible server (http://host:9090) asked, for each run, for the requests its
     * window served: the load its per-request figures are divided by. Both or neither.
     */
    requestsUrl: Type.Optional(Type.String({ maxLength: 2000 })),
    /** The service's requests counter as a selector, http_requests_total{job="api"}: its samples around each run give the run's requests. */
    requestsQuery: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

const Span = Type.Object({ start: Type.String(), end: Type.String() });

export const ImportedRunSchema = Type.Object({
  run: Type.Integer(),
  requested: Span,
  /** The delta scrapes' span and their summed seconds (null when no delta type was scraped). */
  covered: Type.Union([Type.Object({ start: Type.String(), end: Type.String(), seconds: Type.Number() }), Type.Null()]),
  profiles: Type.Array(
    Type.Object({
      kind: Type.String(),
      mode: Type.Union([Type.Literal('delta'), Type.Literal('cumulative'), Type.Literal('snapshot')]),
      query: Type.String(),
      scrapes: Type.Integer(),
      from: Type.String(),
      to: Type.String(),
      total: Type.Number(),
      /** Delta kinds: the sum of the profiler's own series values of the scrapes taken. */
      seriesTotal: Type.Union([Type.Number(), Type.Null()]),
      filename: Type.String(),
    }),
  ),
  /** The requests the run's window served, as the requests query answered (null: none asked). */
  requests: Type.Union([
    Type.Object({
      requests: Type.Number(),
      from: Type.String(),
      to: Type.String(),
      /** The query as sent: the counter selector with the range around the window. */
      query: Type.String(),
      filename: Type.String(),
    }),
    Type.Null(),
  ]),
});

export const ProfilerImportReply = Type.Object({
  runs: Type.Array(ImportedRunSchema),
  /** Profile types the profiler had in the window that no kind takes. */
  skippedTypes: Type.Array(Type.String()),
  results: Type.Array(FileResult),
});
