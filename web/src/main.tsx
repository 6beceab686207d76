import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { matchRoute } from './lib/navigation.ts';
import { parseViewState } from './lib/url-state.ts';
import { prefetchFirstView } from './views/comparison-view.tsx';
import './styles.css';

/**
 * How long the first render waits for a comparison page's first data (preloaded by the page's head,
 * usually here by the time the script has run): rendered with it, the page draws its graphs in its first
 * commit instead of after a loading state and a render per answer; a slow answer (a large profile the
 * server has not computed yet) gets the loading state after this.
 */
const FIRST_DATA_WAIT_MS = 300;

const root = document.getElementById('root');
if (root) {
  const render = () =>
    createRoot(root).render(
      <StrictMode>
        <App />
      </StrictMode>,
    );
  const route = matchRoute(location.pathname);
  if (route.name === 'comparison')
    void Promise.race([
      prefetchFirstView(route.id, parseViewState(location.search)),
      new Promise((r) => setTimeout(r, FIRST_DATA_WAIT_MS)),
    ]).then(render);
  else render();
}
