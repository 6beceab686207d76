// Worker-thread entry when the server runs from its TypeScript sources: the worker registers tsx's
// loader before importing the analysis worker itself. The compiled build has its own file of this
// name in dist/ (written by scripts/build.mjs) that runs the compiled worker with plain node.
import { register } from 'tsx/esm/api';

register();
await import('./analysis-worker.ts');
