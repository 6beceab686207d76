// Worker-thread entry: the server is TypeScript run through tsx, so the worker registers the same
// loader before importing the analysis worker itself.
import { register } from 'tsx/esm/api';

register();
await import('./analysis-worker.ts');
