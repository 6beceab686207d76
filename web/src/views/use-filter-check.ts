import { useEffect, useState } from 'react';
import { ApiError, apiUrl, getJson } from '../lib/api.ts';
import { FILTER_KEYS, type FilterKey, type ViewState } from '../lib/url-state.ts';

/** A filter expression the server refused: which, the value it refused, and its message. */
export interface FilterProblem {
  param: FilterKey;
  value: string;
  message: string;
}

/**
 * Asks the server whether the view's filters are valid Go expressions within its limits (only it can
 * say: Go's syntax is not JavaScript's), so a refused one is shown at its field and not sent.
 */
export function useFilterCheck(view: ViewState): FilterProblem | null {
  const any = FILTER_KEYS.some((k) => view[k] !== '');
  const url = any
    ? apiUrl('checkFilters', {
        params: {},
        query: Object.fromEntries(FILTER_KEYS.map((k) => [k, view[k]])),
      })
    : null;
  const [problem, setProblem] = useState<FilterProblem | null>(null);
  useEffect(() => {
    if (url === null) {
      setProblem(null);
      return;
    }
    const ctrl = new AbortController();
    const sent = new URL(url, window.location.origin).searchParams;
    getJson<unknown>(url, ctrl.signal).then(
      () => !ctrl.signal.aborted && setProblem(null),
      (e: unknown) => {
        if (ctrl.signal.aborted) return;
        const param = e instanceof ApiError ? (FILTER_KEYS as readonly string[]).find((k) => k === e.param) : undefined;
        // Anything else (the network, the server) is for the panels' own requests to report.
        setProblem(
          param ? { param: param as FilterKey, value: sent.get(param) ?? '', message: (e as Error).message } : null,
        );
      },
    );
    return () => ctrl.abort();
  }, [url]);
  return problem;
}
