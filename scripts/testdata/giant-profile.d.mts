/** Types of giant-profile.mjs, for the TypeScript tests that generate profiles with it. */
export interface GiantProfileOptions {
  samples: number;
  seed: number;
  graphSeed?: number;
  numFunctions?: number;
  numPaths?: number;
  skew?: number;
  callGraph?: boolean;
  out: string;
}
export function writeGiantProfile(
  o: GiantProfileOptions,
): Promise<{ path: string; inflatedBytes: number; samples: number }>;
export function giantProfilePath(o?: { samples?: number; seed?: number }): Promise<string>;
