/**
 * What stagediff reads, for the home page's "What it reads" table. Every format the server can
 * report is named here: the `Record<…Format, …>` types make the build fail when the server gains
 * a format this table does not describe.
 */
import type { LoadTestFormat } from '../../../server/src/model/loadtest.ts';
import type { ProfileFormat } from '../../../server/src/model/profile.ts';

/** One line per profile format: what produces it. */
export const PROFILE_FORMATS: Record<ProfileFormat, string> = {
  pprof: 'pprof (gzip or raw protobuf): Go CPU, heap, allocs, mutex, block, goroutine; Node.js pprof',
  otlp: 'OpenTelemetry profiles, OTLP 1.10 and 1.11 (protobuf or JSON, plain or gzip’d), and 1.7 protobuf as async-profiler (Java) writes it: the Profiles of one resource and window regrouped',
  folded:
    'folded stacks (FlameGraph’s collapsed format, py-spy --format raw): comments, empty frames, bad lines skipped',
  cpuprofile: 'Chrome / Node .cpuprofile (current nodes layout and the older head/timestamps layout)',
  speedscope: 'speedscope files (.speedscope.json, sampled and evented: py-spy, rbspy, …)',
  'perf-script': 'Linux perf script output of perf record -g (folded as stackcollapse-perf does)',
};

/** One line per load-test format. */
export const LOADTEST_FORMATS: Record<LoadTestFormat, string> = {
  wrk: 'wrk (also pasted without its “Running … test @” line)',
  wrk2: 'wrk2 (HdrHistogram output)',
  hey: 'hey summary (also a partial paste without its status codes)',
  'hey-csv': 'hey -o csv',
  'vegeta-json': 'vegeta encode -to=json',
  'vegeta-csv': 'vegeta encode -to=csv',
  'vegeta-report': 'vegeta report (text, v11 and later, or -type=json)',
  'vegeta-hist': 'vegeta report -type=hist',
  'k6-json': 'k6 --out json',
  'k6-csv': 'k6 --out csv',
  'k6-summary': 'k6 --summary-export / handleSummary JSON',
  'k6-stdout': 'k6 end-of-test console summary (classic v0.x and grouped v1.x layouts)',
  ab: 'ab (ApacheBench) report',
  'ab-gnuplot': 'ab -g',
  'ab-csv': 'ab -e',
  autocannon: 'autocannon tables (also all-2xx runs) and --json',
  bombardier: 'bombardier -o json',
  'bombardier-text': 'bombardier text output',
  locust: 'Locust CSVs, --json-file and console table (1.x and 2.x)',
  'locust-history': 'Locust _stats_history.csv',
  'locust-failures': 'Locust _failures.csv',
  jmeter: 'JMeter JTL (CSV, XML), dashboard statistics.json, console summariser',
  'jmeter-xml': 'JMeter JTL XML',
  ghz: 'ghz text summary, JSON report and details CSV',
  oha: 'oha text summary (1.x and older layouts)',
  'oha-json': 'oha --output-format json',
  prometheus:
    'requests a Prometheus-compatible server counted over a run imported from a profiler (stagediff import --requests-query)',
};

/** Everything else, and the wrappers every text format may come in. */
export const OTHER_INPUTS: string[] = [
  'go test -bench output (compared as benchstat does)',
  'GODEBUG=gctrace=1 logs',
  'any text format as UTF-16 (PowerShell’s >) or gzip’d',
  'legacy pprof (pre-protobuf CPU and text profiles) is named, with the go tool pprof -proto command that converts it',
];
