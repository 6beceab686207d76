// Module-zip hashing thread entry when the server runs from its TypeScript sources: the thread
// registers tsx's loader before importing the hasher itself. The compiled build has its own file of
// this name in dist/ (written by scripts/build.mjs) that runs the compiled hasher.
import { register } from 'tsx/esm/api';

register();
await import('./hash-thread.ts');
