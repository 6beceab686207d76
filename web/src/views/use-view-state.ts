import { useCallback, useEffect, useState } from 'react';
import { applyViewPatch, parseViewState, serializeViewState, type ViewState } from '../lib/url-state.ts';

/** The view state, read from and written to the query string (replaceState: the address bar is the link). */
export function useViewState(): [ViewState, (patch: Partial<ViewState>) => void] {
  const [state, setState] = useState(() => parseViewState(location.search));
  useEffect(() => {
    const onPop = () => setState(parseViewState(location.search));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const update = useCallback((patch: Partial<ViewState>) => {
    setState((s) => {
      const next = applyViewPatch(s, patch);
      const url = `${location.pathname}${serializeViewState(next)}`;
      history.replaceState(null, '', url);
      return next;
    });
  }, []);
  return [state, update];
}
