/** Types of many-stacks.mjs, for the TypeScript tests that generate profiles with it. */
export interface ManyStacksOptions {
  samples?: number;
  stacks?: number;
  seed?: number;
  graphSeed?: number;
  functions?: number;
  locations?: number;
  deepShare?: number;
  out: string;
}
export function writeManyStacksProfile(
  o: ManyStacksOptions,
): Promise<{ path: string; inflatedBytes: number; samples: number; stacks: number }>;
export function manyStacksProfilePath(o?: { samples?: number; stacks?: number; seed?: number }): Promise<string>;
