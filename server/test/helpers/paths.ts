import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';

/** Absolute path of the repository root. */
export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
/** The shared sample corpus, beside the repository (../shared/samples). */
export const samplesDir = fileURLToPath(new URL('../../../../shared/samples/', import.meta.url));
export const fixturesDir = fileURLToPath(new URL('../../../fixtures/', import.meta.url));

export function samplePath(rel: string): string {
  return samplesDir + rel;
}

export const haveSamples = existsSync(samplesDir);
