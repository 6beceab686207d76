import { useCallback, useEffect, useState } from 'react';
import { apiGet } from '../lib/api.ts';

export interface FetchState<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/** GET a JSON URL (null = nothing to fetch); stale responses are dropped when the URL changes. */
export function useFetch<T>(url: string | null): FetchState<T> {
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean; url: string | null }>({
    data: null,
    error: null,
    loading: url !== null,
    url,
  });
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    if (url === null) {
      setState({ data: null, error: null, loading: false, url });
      return;
    }
    const ctrl = new AbortController();
    setState((s) => ({ data: s.url === url ? s.data : null, error: null, loading: true, url }));
    apiGet<T>(url, ctrl.signal).then(
      (data) => {
        if (!ctrl.signal.aborted) setState({ data, error: null, loading: false, url });
      },
      (error: unknown) => {
        if (!ctrl.signal.aborted) setState({ data: null, error, loading: false, url });
      },
    );
    return () => ctrl.abort();
  }, [url, nonce]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}
