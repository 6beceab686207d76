/**
 * Makes (or finds in the cache) generated test inputs and prints their paths, one a line, for
 * scripts that are not TypeScript: `node --import tsx scripts/testdata/make.ts synthetic-huge`.
 */
import { SYNTHETIC_HUGE_RUN2, generatedHostile, syntheticProfilePath } from './index.ts';

const makers: Record<string, () => string> = {
  'synthetic-huge': () => syntheticProfilePath(),
  'synthetic-huge-run2': () => syntheticProfilePath(SYNTHETIC_HUGE_RUN2),
  ...generatedHostile,
};
const names = process.argv.slice(2);
if (names.length === 0 || names.some((n) => !makers[n])) {
  console.error(`usage: make.ts NAME… (one of: ${Object.keys(makers).join(', ')})`);
  process.exit(2);
}
for (const n of names) console.log(makers[n]!());
