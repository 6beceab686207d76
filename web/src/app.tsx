import { useEffect, useState } from 'react';
import { Link } from './components/link.tsx';
import { matchRoute, onNavigate } from './lib/navigation.ts';
import { ComparisonView } from './views/comparison-view.tsx';
import { HomeView } from './views/home-view.tsx';

type Theme = 'light' | 'dark';

function initialTheme(): Theme {
  const saved = localStorage.getItem('stagediff.theme');
  if (saved === 'light' || saved === 'dark') return saved;
  return matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

export function App() {
  const [loc, setLoc] = useState(() => ({ path: location.pathname, search: location.search }));
  const [theme, setTheme] = useState<Theme>(initialTheme);
  useEffect(() => onNavigate(() => setLoc({ path: location.pathname, search: location.search })), []);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    localStorage.setItem('stagediff.theme', theme);
  }, [theme]);
  const route = matchRoute(loc.path);
  const dark = theme === 'dark';
  return (
    <>
      <header className="top-bar">
        <Link href="/" className="brand">
          stagediff
        </Link>
        <nav aria-label="Main">
          <Link href="/">New comparison</Link>
          <Link href="/c/demo">Demo</Link>
        </nav>
        <button
          type="button"
          className="theme-toggle"
          aria-pressed={dark}
          aria-label="Dark theme"
          onClick={() => setTheme(dark ? 'light' : 'dark')}
        >
          {dark ? '☀ Light' : '☾ Dark'}
        </button>
      </header>
      <main>
        {route.name === 'home' && <HomeView search={loc.search} />}
        {route.name === 'comparison' && <ComparisonView key={route.id} id={route.id} dark={dark} />}
        {route.name === 'not-found' && (
          <div className="page">
            <h1>Not found</h1>
            <p>
              No page at this address. <Link href="/">Go home</Link>.
            </p>
          </div>
        )}
      </main>
    </>
  );
}
