import { useEffect, useState } from 'react';
import { type StageChanges, api } from '../lib/api.ts';

/** Each stage's changes against the previous one, by the stage's id: the answer, or why it failed. */
export type ChangesByStage = Map<string, { data: StageChanges } | { error: string }>;

/** Nothing answered yet: one empty map, so a page that renders again before any answer passes the same one. */
const NONE: ChangesByStage = new Map();

/**
 * GET …/changes for every stage against the one before it, one request at a time (each can be heavy
 * for the server on large profiles), in stage order. Fetched again when the stages or the comparison's
 * revision change; answers of an older revision are dropped.
 */
export function useStageChanges(comparisonId: string, stageIds: readonly string[], revision: number | null) {
  const [state, setState] = useState<{ key: string; byStage: ChangesByStage }>({ key: '', byStage: new Map() });
  const key = revision === null ? '' : `${comparisonId}|${revision}|${stageIds.join(',')}`;
  useEffect(() => {
    if (!key) return;
    const ctrl = new AbortController();
    const ids = key.split('|')[2]!.split(',').filter(Boolean);
    setState({ key, byStage: new Map() });
    void (async () => {
      for (let i = 1; i < ids.length; i++) {
        if (ctrl.signal.aborted) return;
        const target = ids[i]!;
        let entry: { data: StageChanges } | { error: string };
        try {
          const data = await api(
            'changes',
            { params: { id: comparisonId }, query: { base: ids[i - 1]!, target } },
            ctrl.signal,
          );
          entry = { data };
        } catch (e) {
          if (ctrl.signal.aborted) return;
          entry = { error: e instanceof Error ? e.message : String(e) };
        }
        setState((s) => (s.key === key ? { key, byStage: new Map(s.byStage).set(target, entry) } : s));
      }
    })();
    return () => ctrl.abort();
  }, [key, comparisonId]);
  return state.key === key ? state.byStage : NONE;
}
