import type { ClientQuery, Reply } from '../api/endpoints.ts';
import type { ProfileKind } from '../model/profile.ts';
import { type ComparisonSource, call, callOptional } from './comparison-source.ts';

/**
 * What `report` and `check` read for one base → target pair, all from the API: the change engine's
 * judgement of the pair (GET …/changes), the stage table, and the diff whose functions the report
 * lists. Nothing is judged here; the CLI only formats.
 */
export interface PairData {
  comparison: Reply<'getComparison'>;
  changes: Reply<'changes'>;
  table: Reply<'stageTable'>;
  /** The diff of the pair's profiles (null when a stage has none of the kind). */
  diff: Reply<'diff'> | null;
  /** The query of that diff, for its image. */
  diffQuery: ClientQuery<'diff'> | null;
}

/** Reads a pair: STAGE is a stage name or id; the defaults are the first and the last stage. */
export async function readPair(
  src: ComparisonSource,
  opts: { base?: string; target?: string; kind?: ProfileKind; sampleType?: string; top: number },
): Promise<PairData> {
  const comparison = await call(src, 'getComparison');
  if (comparison.stages.length < 2)
    throw new Error(`comparison ${comparison.id} has ${comparison.stages.length} stage(s): a report needs two`);
  const base = resolveStage(comparison, 'base', opts.base);
  const target = resolveStage(comparison, 'target', opts.target);
  if (base === target) throw new Error(`--base and --target are the same stage (${opts.base ?? opts.target})`);
  const changes = await call(src, 'changes', {
    base,
    target,
    ...(opts.kind ? { kind: opts.kind } : {}),
    functions: 'on',
  });
  const table = await call(src, 'stageTable');
  const diffQuery: ClientQuery<'diff'> = {
    base: changes.base.id,
    target: changes.target.id,
    ...(opts.kind
      ? { kind: opts.kind }
      : changes.functions.kind
        ? { kind: changes.functions.kind as ProfileKind }
        : {}),
    ...(opts.sampleType ? { sampleType: opts.sampleType } : {}),
    limit: Math.max(1, opts.top),
    minFraction: 0.0001,
  };
  const diff = await callOptional(src, 'diff', diffQuery);
  return { comparison, changes, table, diff, diffQuery: diff ? diffQuery : null };
}

/** The id of the stage --base or --target names (an id or a name); defaults: the first and the last stage. */
function resolveStage(c: Reply<'getComparison'>, which: 'base' | 'target', given: string | undefined): string {
  if (given === undefined) return (which === 'base' ? c.stages[0]! : c.stages[c.stages.length - 1]!).id;
  const hit = c.stages.find((s) => s.id === given) ?? c.stages.find((s) => s.name === given);
  if (!hit) throw new Error(`--${which} ${given}: no such stage (stages: ${c.stages.map((s) => s.name).join(', ')})`);
  return hit.id;
}
