// Analysis worker entry when the server runs from its TypeScript sources: the worker process
// registers tsx's loader before importing the analysis worker itself. The compiled build has its own
// file of this name in dist/ (written by scripts/build.mjs) that runs the compiled worker with plain node.
import { register } from 'tsx/esm/api';

register();
await import('./analysis-worker.ts');
