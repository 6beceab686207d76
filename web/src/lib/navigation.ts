/** Client-side navigation over the History API (the server answers every non-/api path with index.html). */

const listeners = new Set<() => void>();

export function navigate(url: string, replace = false): void {
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const l of listeners) l();
}

export function onNavigate(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener('popstate', listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener('popstate', listener);
  };
}

/** Route of a path: home, a comparison, or not found. */
export type Route = { name: 'home' } | { name: 'comparison'; id: string } | { name: 'not-found' };

export function matchRoute(pathname: string): Route {
  if (pathname === '/' || pathname === '') return { name: 'home' };
  const m = /^\/c\/([^/]+)\/?$/.exec(pathname);
  if (m?.[1]) {
    try {
      return { name: 'comparison', id: decodeURIComponent(m[1]) };
    } catch {
      return { name: 'not-found' };
    }
  }
  return { name: 'not-found' };
}
