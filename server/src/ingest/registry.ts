/**
 * Wires every importer into detection. Importing this module once (the CLI and the server do)
 * makes `ingest` recognise all supported formats.
 */
import { registerLoadTestImporters, registerWholeFileImporters } from './detect.ts';
import { loadTestImporters } from './loadtest/index.ts';
import * as gobench from './gobench.ts';
import * as gctrace from './gctrace.ts';
import * as schedtrace from './schedtrace.ts';
import * as metrics from './metrics/index.ts';
import * as folded from './folded.ts';
import * as cpuprofile from './cpuprofile.ts';
import * as speedscope from './speedscope.ts';
import * as perfScript from './perf-script.ts';
import * as legacyPprof from './legacy-pprof.ts';

registerLoadTestImporters(loadTestImporters);
registerWholeFileImporters([
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
  {
    detect: folded.detect,
    parse: (b, n) => {
      const profile = folded.parse(b, n);
      return { kind: 'profile', format: profile.format, profile };
    },
  },
  {
    detect: cpuprofile.detect,
    parse: (b, n) => {
      const profile = cpuprofile.parse(b, n);
      return { kind: 'profile', format: profile.format, profile };
    },
  },
  {
    detect: speedscope.detect,
    parse: (b, n) => {
      const profile = speedscope.parse(b, n);
      return { kind: 'profile', format: profile.format, profile };
    },
  },
  {
    detect: perfScript.detect,
    parse: (b, n) => {
      const profile = perfScript.parse(b, n);
      return { kind: 'profile', format: profile.format, profile };
    },
  },
  // recognised only to say what they are and how to convert them
  { detect: legacyPprof.detect, parse: legacyPprof.refuse },
]);
