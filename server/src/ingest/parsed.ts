import type { Profile } from '../model/profile.ts';
import type { LoadTestRun } from '../model/loadtest.ts';
import type { BenchmarkRun } from '../model/benchmark.ts';
import type { GcTrace } from '../model/gctrace.ts';
import type { TraceModel } from '../model/trace.ts';
import type { SchedTrace } from '../model/schedtrace.ts';
import type { MetricsModel } from '../model/metrics.ts';

/** What one uploaded file turned out to be. */
export type Parsed =
  | { kind: 'profile'; format: Profile['format']; profile: Profile }
  /** Every run the file holds, in its order (one unless the file appends several runs of one tool). */
  | { kind: 'loadtest'; format: LoadTestRun['format']; runs: LoadTestRun[] }
  | { kind: 'benchmark'; format: 'go-bench'; benchmark: BenchmarkRun }
  | { kind: 'gctrace'; format: 'gctrace'; gctrace: GcTrace }
  | { kind: 'trace'; format: 'go-trace'; trace: TraceModel }
  | { kind: 'schedtrace'; format: 'schedtrace'; schedtrace: SchedTrace }
  | { kind: 'metrics'; format: 'stagediff-metrics'; metrics: MetricsModel };

/** A whole-file importer of a text or JSON format (small enough to read at once, under its limits). */
export interface WholeFileImporter {
  detect(head: Buffer, fileName?: string): number;
  parse(bytes: Buffer, fileName?: string): Parsed;
}
