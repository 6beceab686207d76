import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, type ApiRequest, type EndpointName, type Reply, apiUrl, getJson } from '../lib/api.ts';

// Requests started before their view mounts (e.g. flamegraphs named in the address while the comparison
// itself is still loading), handed over to the views that mount asking for the same URL: to every one
// of them that mounts in the same render (both graphs of a stage shown on both sides take one answer).
const prefetched = new Map<string, Promise<unknown>>();
// The prefetched answers that have arrived: a view mounting after that starts with its data, drawn in
// the render that mounts it rather than one request and one render later.
const arrived = new Map<string, unknown>();

/** Starts a GET whose answer the first view to ask for `url` takes (see useFetch); resolves with it. */
export function prefetchJson(url: string): Promise<unknown> {
  const running = prefetched.get(url);
  if (running) return running;
  const p = getJson<unknown>(url);
  p.then(
    (data) => prefetched.get(url) === p && arrived.set(url, data),
    () => undefined,
  );
  prefetched.set(url, p);
  setTimeout(() => forget(url), 30_000);
  return p;
}

function forget(url: string): void {
  prefetched.delete(url);
  arrived.delete(url);
}

function takePrefetched<T>(url: string): Promise<T> | null {
  const p = prefetched.get(url);
  if (!p) return null;
  // Gone after this task: the effects of one render's views all run before it ends.
  setTimeout(() => forget(url), 0);
  return p as Promise<T>;
}

export interface FetchState<T> {
  data: T | null;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * GET a JSON URL (null = nothing to fetch); stale responses are dropped when the URL changes. A change
 * of `version` (e.g. the comparison's revision) fetches the same URL again, keeping the old data on
 * screen until the new answer arrives.
 */
export function useFetch<T>(url: string | null, version: string | number = ''): FetchState<T> {
  // A prefetched answer already here is this view's first state (and its first load asks for nothing).
  const [early] = useState(() => (url !== null && arrived.has(url) ? url : null));
  const [state, setState] = useState<{ data: T | null; error: unknown; loading: boolean; url: string | null }>(() =>
    early !== null
      ? { data: arrived.get(early) as T, error: null, loading: false, url }
      : { data: null, error: null, loading: url !== null, url },
  );
  const [nonce, setNonce] = useState(0);
  const firstLoad = useRef(true);
  // biome-ignore lint/correctness/useExhaustiveDependencies: `nonce` and `version` are reload triggers: a change fetches the same URL again
  useEffect(() => {
    const first = firstLoad.current;
    firstLoad.current = false;
    if (url === null) {
      setState({ data: null, error: null, loading: false, url });
      return;
    }
    if (first && url === early) {
      // The answer is the state already; taking it lets the entry go with this task.
      void takePrefetched(url);
      return;
    }
    const ctrl = new AbortController();
    setState((s) => ({ data: s.url === url ? s.data : null, error: null, loading: true, url }));
    (takePrefetched<T>(url) ?? getJson<T>(url, ctrl.signal)).then(
      (data) => {
        if (!ctrl.signal.aborted) setState({ data, error: null, loading: false, url });
      },
      (error: unknown) => {
        if (!ctrl.signal.aborted) setState({ data: null, error, loading: false, url });
      },
    );
    return () => ctrl.abort();
  }, [url, nonce, version]);
  const reload = useCallback(() => setNonce((n) => n + 1), []);
  // While a new URL loads, the previous URL's answer is not this one's.
  const data = state.url === url ? state.data : null;
  return { data, error: state.url === url ? state.error : null, loading: state.loading, reload };
}

/** GET endpoint N of the contract (null = nothing to fetch), typed by its answer. */
export function useApi<N extends EndpointName>(
  name: N,
  req: Pick<ApiRequest<N>, 'params' | 'query'> | null,
  version: string | number = '',
): FetchState<Reply<N>> {
  return useFetch<Reply<N>>(req ? apiUrl(name, req) : null, version);
}

/**
 * GET several JSON URLs together; `data` holds each result, or null for a URL that failed with a 4xx
 * (e.g. a stage without the artifact asked for). Any other failure is the state's error.
 */
export function useFetchAll<T>(urls: readonly string[]): {
  data: (T | null)[] | null;
  error: unknown;
  loading: boolean;
} {
  const key = urls.join('\n');
  const [state, setState] = useState<{ key: string; data: (T | null)[] | null; error: unknown }>({
    key: '',
    data: null,
    error: null,
  });
  useEffect(() => {
    const ctrl = new AbortController();
    const list = key ? key.split('\n') : [];
    Promise.all(
      list.map((u) =>
        getJson<T>(u, ctrl.signal).catch((e: unknown) => {
          if (e instanceof ApiError && e.status >= 400 && e.status < 500) return null;
          throw e;
        }),
      ),
    ).then(
      (data) => !ctrl.signal.aborted && setState({ key, data, error: null }),
      (error: unknown) => !ctrl.signal.aborted && setState({ key, data: null, error }),
    );
    return () => ctrl.abort();
  }, [key]);
  const current = state.key === key;
  return { data: current ? state.data : null, error: current ? state.error : null, loading: !current };
}
