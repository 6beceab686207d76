/**
 * Every importer stagediff has, in two lists that detection (`detect.ts`) reads: the load-test
 * importers (streamed, several runs a file) and the whole-file importers of text and JSON formats.
 * Detection asks each for its confidence on a file's head and picks the most confident, so the order
 * here only breaks exact ties. A new input format is one module with `detect` and `parse`, added here.
 * (pprof and Go execution traces are recognised first, by detection itself: they are binary and streamed.)
 */
import type { Profile } from '../model/profile.ts';
import type { Parsed, WholeFileImporter } from './parsed.ts';
import * as gobench from './gobench.ts';
import * as gctrace from './gctrace.ts';
import * as schedtrace from './schedtrace.ts';
import * as metrics from './metrics/index.ts';
import * as folded from './folded.ts';
import * as cpuprofile from './cpuprofile.ts';
import * as speedscope from './speedscope.ts';
import * as perfScript from './perf-script.ts';
import * as legacyPprof from './legacy-pprof.ts';

export { loadTestImporters } from './loadtest/index.ts';

/** An importer of a format that reads as a profile (stacks and their values). */
function profileImporter(
  detect: WholeFileImporter['detect'],
  parse: (bytes: Buffer, fileName?: string) => Profile,
): WholeFileImporter {
  return {
    detect,
    parse: (b, n): Parsed => {
      const profile = parse(b, n);
      return { kind: 'profile', format: profile.format, profile };
    },
  };
}

export const wholeFileImporters: readonly WholeFileImporter[] = [
  {
    detect: gobench.detect,
    parse: (b, n) => ({ kind: 'benchmark', format: 'go-bench', benchmark: gobench.parse(b, n) }),
  },
  { detect: gctrace.detect, parse: (b, n) => ({ kind: 'gctrace', format: 'gctrace', gctrace: gctrace.parse(b, n) }) },
  {
    detect: metrics.detect,
    parse: (b, n) => ({ kind: 'metrics', format: 'stagediff-metrics', metrics: metrics.parse(b, n) }),
  },
  {
    detect: schedtrace.detect,
    parse: (b, n) => ({ kind: 'schedtrace', format: 'schedtrace', schedtrace: schedtrace.parse(b, n) }),
  },
  profileImporter(folded.detect, folded.parse),
  profileImporter(cpuprofile.detect, cpuprofile.parse),
  profileImporter(speedscope.detect, speedscope.parse),
  profileImporter(perfScript.detect, perfScript.parse),
  // recognised only to say what they are and how to convert them
  { detect: legacyPprof.detect, parse: legacyPprof.refuse },
];
