/**
 * JSON Schema (draft-07) of `stagediff report --format json` (schema "stagediff-report/1"). Tools may
 * rely on every property listed as required; numbers are in the unit each object names, ratios are
 * target / base, percentages are (ratio − 1) × 100, `null` where a side has no figure.
 */
const num = { type: ['number', 'null'] } as const;
const str = { type: 'string' } as const;
const judgement = { enum: ['significant', 'within-noise', 'too-few-runs', 'not-tested', 'missing'] } as const;

const change = {
  type: 'object',
  additionalProperties: false,
  required: [
    'metric',
    'label',
    'subject',
    'unit',
    'better',
    'base',
    'target',
    'ratio',
    'deltaPercent',
    'ciBase',
    'ciTarget',
    'judgement',
    'p',
    'nBase',
    'nTarget',
    'reason',
    'direction',
  ],
  properties: {
    metric: { type: 'string', pattern: '^(rps|p50|p95|p99|cpu-per-request|bench:.+)$' },
    label: str,
    subject: { type: ['string', 'null'] },
    unit: str,
    better: { enum: ['higher', 'lower'] },
    base: num,
    target: num,
    ratio: num,
    deltaPercent: num,
    ciBase: { type: ['number', 'null'], minimum: 0 },
    ciTarget: { type: ['number', 'null'], minimum: 0 },
    judgement,
    p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
    nBase: { type: 'integer', minimum: 0 },
    nTarget: { type: 'integer', minimum: 0 },
    reason: { type: ['string', 'null'] },
    direction: { enum: ['improvement', 'regression', null] },
  },
} as const;

const stageRef = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'note'],
  properties: { id: str, name: str, note: str },
} as const;

const verdictCell = {
  type: 'object',
  additionalProperties: false,
  required: ['ratio', 'judgement', 'p', 'n'],
  properties: { ratio: num, judgement, p: num, n: { type: ['string', 'null'] } },
} as const;

const flatCum = {
  type: 'object',
  additionalProperties: false,
  required: ['flat', 'cum'],
  properties: { flat: { type: 'number' }, cum: { type: 'number' } },
} as const;

export const reportSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'urn:stagediff:report:1',
  title: 'stagediff report',
  type: 'object',
  additionalProperties: false,
  required: [
    'schema',
    'comparison',
    'base',
    'target',
    'summary',
    'changes',
    'stages',
    'topFunctions',
    'gc',
    'benchmarks',
    'images',
    'notes',
  ],
  properties: {
    schema: { const: 'stagediff-report/1' },
    comparison: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'title', 'url'],
      properties: { id: str, title: str, url: { type: ['string', 'null'] } },
    },
    base: stageRef,
    target: stageRef,
    summary: {
      type: 'object',
      additionalProperties: false,
      required: ['improvements', 'regressions', 'withinNoise', 'tooFewRuns', 'notTested'],
      properties: Object.fromEntries(
        ['improvements', 'regressions', 'withinNoise', 'tooFewRuns', 'notTested'].map((k) => [
          k,
          { type: 'integer', minimum: 0 },
        ]),
      ),
    },
    changes: { type: 'array', items: change },
    stages: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['id', 'name', 'role', 'summary', 'loadTests', 'rps', 'latencyMs', 'ci', 'vsPrevious'],
        properties: {
          id: str,
          name: str,
          role: { enum: ['base', 'target', null] },
          summary: { enum: ['single-run', 'median', 'aggregate', 'none'] },
          loadTests: { type: 'integer', minimum: 0 },
          rps: num,
          latencyMs: {
            type: 'object',
            additionalProperties: false,
            required: ['p50', 'p95', 'p99'],
            properties: { p50: num, p95: num, p99: num },
          },
          ci: {
            type: ['object', 'null'],
            additionalProperties: false,
            required: ['rps', 'p50', 'p95', 'p99'],
            properties: { rps: num, p50: num, p95: num, p99: num },
          },
          vsPrevious: {
            type: ['object', 'null'],
            additionalProperties: false,
            required: ['rps', 'p99'],
            properties: { rps: verdictCell, p99: verdictCell },
          },
        },
      },
    },
    topFunctions: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['sampleType', 'mode', 'unit', 'rowsTotal', 'warnings', 'rows'],
      properties: {
        sampleType: str,
        mode: { enum: ['absolute', 'share', 'normalize', 'per-request'] },
        unit: str,
        rowsTotal: { type: 'integer', minimum: 0 },
        warnings: { type: 'array', items: str },
        rows: {
          type: 'array',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['name', 'base', 'target', 'deltaFlat', 'deltaCum', 'status', 'verdict', 'p'],
            properties: {
              name: str,
              base: flatCum,
              target: flatCum,
              deltaFlat: { type: 'number' },
              deltaCum: { type: 'number' },
              status: { enum: ['new', 'removed', 'changed', 'unchanged'] },
              verdict: { anyOf: [judgement, { type: 'null' }] },
              p: num,
            },
          },
        },
      },
    },
    gc: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['stage', 'role', 'traces', 'summary'],
        properties: {
          stage: str,
          role: { enum: ['base', 'target'] },
          traces: { type: 'integer', minimum: 1 },
          summary: {
            type: 'object',
            required: ['cycles', 'forcedCycles', 'stwPauseMs', 'maxHeapMb'],
            properties: {
              cycles: { type: 'integer' },
              forcedCycles: { type: 'integer' },
              stwPauseMs: {
                type: 'object',
                required: ['total', 'p50', 'p99', 'max'],
                properties: {
                  total: { type: 'number' },
                  p50: { type: 'number' },
                  p99: { type: 'number' },
                  max: { type: 'number' },
                },
              },
              maxHeapMb: { type: 'number' },
            },
          },
        },
      },
    },
    benchmarks: { type: 'array', items: change },
    images: {
      type: 'object',
      additionalProperties: false,
      required: ['diffSvg', 'diffPng'],
      properties: { diffSvg: { type: ['string', 'null'] }, diffPng: { type: ['string', 'null'] } },
    },
    notes: { type: 'array', items: str },
  },
} as const;
