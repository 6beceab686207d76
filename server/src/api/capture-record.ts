import Type, { type Static } from 'typebox';
import type { CaptureRecord } from '../model/capture.ts';
import { Nullable, Literals } from './kit.ts';

/*
 * The capture record (`stagediff-capture/1`, model/capture.ts) as JSON Schema: what POST …/captures
 * accepts, checked field by field, so a record the page cannot read (`runs: [{}]`) is a 400 naming what
 * is missing instead of a comparison page that fails for every visitor. Fields a later CLI may add are
 * allowed; every field the page or the report reads is required and typed. Arrays are bounded by
 * count; strings, and the record as a whole, by its bytes (MAX_CAPTURE_BYTES).
 */

const Time = Type.String();
/*
 * A string or number that may be null, as one JSON type list: the server's validator coerces types,
 * and would turn a null into "" or 0 trying the first branch of an anyOf.
 */
const TextOrNull = Type.Unsafe<string | null>({ type: ['string', 'null'] });
const NumberOrNull = Type.Unsafe<number | null>({ type: ['number', 'null'] });
const Words = Type.Array(Type.String(), { maxItems: 1000 });

const CaptureLoadSchema = Type.Union([
  Type.Object({
    kind: Type.Literal('command'),
    command: Type.String(),
    tool: TextOrNull,
    version: TextOrNull,
  }),
  Type.Object({
    kind: Type.Literal('built-in'),
    generator: Type.String(),
    url: Type.String(),
    connections: Type.Number(),
    durationSeconds: Type.Number(),
    rate: NumberOrNull,
    equivalentCommand: Type.String(),
  }),
]);

const CaptureFileSchema = Type.Object({
  path: Type.String(),
  role: Literals(['loadtest', 'profile', 'trace', 'metrics', 'raw']),
  size: Type.Number(),
  sha256: Type.String(),
  profileType: Type.Optional(Type.String()),
  span: Type.Optional(Literals(['interval', 'delta', 'snapshot', 'cumulative'])),
  url: Type.Optional(Type.String()),
  command: Type.Optional(Type.String()),
  fetchedFrom: Type.Optional(Time),
  fetchedTo: Type.Optional(Time),
});

const Figure = NumberOrNull;

const CaptureRunSchema = Type.Object({
  run: Type.Integer({ minimum: 0 }),
  startedAt: Time,
  endedAt: TextOrNull,
  window: Nullable(Type.Object({ start: Time, end: Time, seconds: Type.Number() })),
  machine: Type.Object({
    loadAverage: Type.Tuple([Type.Number(), Type.Number(), Type.Number()]),
    cpuIdlePercent: Type.Number(),
    busy: Type.Boolean(),
    waitedForQuietSeconds: Type.Optional(Type.Number()),
  }),
  load: Type.Object({
    startedAt: Time,
    endedAt: TextOrNull,
    exitCode: NumberOrNull,
    signal: TextOrNull,
  }),
  files: Type.Array(CaptureFileSchema, { maxItems: 1000 }),
  summary: Nullable(
    Type.Object({
      rps: Figure,
      requests: Figure,
      errors: Figure,
      p99Ms: Figure,
      cpuSeconds: Figure,
      profileSeconds: Figure,
      cpuMicrosPerRequest: Figure,
    }),
  ),
  warnings: Words,
  error: TextOrNull,
});

export const CaptureRecordSchema = Type.Object({
  schema: Type.Literal('stagediff-capture/1'),
  stage: Type.String(),
  note: Type.String(),
  command: Type.String(),
  pprof: TextOrNull,
  profiles: Type.Array(Type.String(), { maxItems: 100 }),
  traceSeconds: Type.Optional(NumberOrNull),
  metrics: Type.Optional(TextOrNull),
  load: CaptureLoadSchema,
  host: Type.Object({
    os: Type.String(),
    arch: Type.String(),
    cores: Type.Number(),
    node: Type.String(),
    stagediff: Type.String(),
  }),
  build: Type.Optional(
    Nullable(
      Type.Object({
        binary: Type.String(),
        goVersion: Type.String(),
        path: Type.String(),
        mainModule: TextOrNull,
        settings: Type.Array(Type.String(), { maxItems: 1000 }),
      }),
    ),
  ),
  startedAt: Time,
  endedAt: TextOrNull,
  runs: Type.Array(CaptureRunSchema, { maxItems: 100 }),
  warnings: Words,
  error: TextOrNull,
});

// The schema and the model's type say the same (a compile-time check both ways).
type Declared = Static<typeof CaptureRecordSchema>;
export const sameShape: [(r: CaptureRecord) => Declared, (r: Declared) => CaptureRecord] = [(r) => r, (r) => r];
