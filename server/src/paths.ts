import { fileURLToPath } from 'node:url';

/**
 * Set to `true` by the compiled build (esbuild `define`, see scripts/build.mjs); undeclared when the
 * sources run through tsx.
 */
declare const STAGEDIFF_COMPILED: boolean | undefined;

/** Whether this code is the compiled build (dist/) rather than the TypeScript sources. */
export const compiled = typeof STAGEDIFF_COMPILED !== 'undefined' && STAGEDIFF_COMPILED === true;

// The compiled build is flat (every chunk sits in dist/) and carries its own copies of the web client
// and the demo files; the sources find them in the checkout.
const base = import.meta.url;

/** Default directory of the built web client. */
export const defaultWebDist = fileURLToPath(new URL(compiled ? './web/' : '../../web/dist/', base));

/** The captured demo story seeded at /c/demo (a manifest and the files it lists). */
export const demoDir = fileURLToPath(new URL(compiled ? './demo/' : '../../fixtures/demo/', base));
