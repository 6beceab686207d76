/**
 * How a stage was captured: the record `stagediff capture` writes beside the files it collected
 * (`capture.json` in `--out`) and attaches to the stage it uploads to. Plain JSON; times are
 * ISO-8601 UTC strings, durations in seconds, the machine's load as `os.loadavg()` reports it.
 *
 * One record per `capture` invocation; `runs` holds one entry per repetition (`--runs N`), each with
 * its own files, window and machine state, so a stage has a noise estimate.
 */
export interface CaptureRecord {
  schema: 'stagediff-capture/1';
  stage: string;
  note: string;
  /** The `stagediff capture …` command line as typed (argv joined, shell-quoted where needed). */
  command: string;
  /** Base URL of net/http/pprof, or null when no profile was asked for. */
  pprof: string | null;
  /** Profile types asked for, in the order they were fetched. */
  profiles: string[];
  /** `--trace S`: an execution trace of S seconds taken inside each run's window (absent or null: none). */
  traceSeconds?: number | null;
  /**
   * `--metrics URL`: the runtime-metrics endpoint (Prometheus text or expvar) scraped once a second
   * over each run's window into `metrics.json` (absent or null: none).
   */
  metrics?: string | null;
  load: CaptureLoad;
  host: {
    os: string;
    arch: string;
    cores: number;
    node: string;
    stagediff: string;
    /** CPU model as the OS names it (`os.cpus()[0].model`); absent in records before it was kept. */
    cpu?: string | null;
    /** Kernel release (`os.release()`). */
    kernel?: string;
    /** Host name (`os.hostname()`). */
    hostname?: string;
  };
  /**
   * `--binary PATH`: the service binary's Go build information (`go version -m`), read from the binary;
   * absent or null when not given. `settings` are its `build` lines as KEY=VALUE (`-pgo=…`, `GOAMD64=…`).
   */
  build?: CaptureBuild | null;
  startedAt: string;
  endedAt: string | null;
  runs: CaptureRun[];
  /** Machine-wide notes (e.g. the machine was busy before a run). */
  warnings: string[];
  /** Why the capture stopped early, or null when every run completed. */
  error: string | null;
}

/** A service binary's build, as `stagediff capture --binary` read it. */
export interface CaptureBuild {
  /** The binary's path as given. */
  binary: string;
  goVersion: string;
  /** The main package's import path. */
  path: string;
  mainModule: string | null;
  settings: string[];
}

/** The load: an external command (any tool stagediff reads) or the built-in generator. */
export type CaptureLoad =
  | {
      kind: 'command';
      /** The command as run (shell-quoted). */
      command: string;
      /** Recognised tool (wrk, hey, vegeta, k6, …) or null. */
      tool: string | null;
      /** What `TOOL --version` (or equivalent) printed, first line; null when unknown. */
      version: string | null;
    }
  | {
      kind: 'built-in';
      /** e.g. `autocannon 9.0.0`. */
      generator: string;
      url: string;
      connections: number;
      durationSeconds: number;
      /** Requests per second over all connections (open loop), or null for a closed loop. */
      rate: number | null;
      /** The equivalent autocannon command line, to re-run the same load by hand. */
      equivalentCommand: string;
    };

/** One repetition: load + profiles over one window. */
export interface CaptureRun {
  run: number;
  startedAt: string;
  endedAt: string | null;
  /** The profile window: CPU profile and allocs/mutex/block deltas cover [start, end]. */
  window: { start: string; end: string; seconds: number } | null;
  machine: {
    /** 1, 5 and 15 minute load averages just before the run. */
    loadAverage: [number, number, number];
    /** Share of all cores idle over the second before the run, in %. */
    cpuIdlePercent: number;
    busy: boolean;
    /** With `--wait-quiet`: how long the run waited for the machine to calm down, seconds. */
    waitedForQuietSeconds?: number;
  };
  load: {
    startedAt: string;
    endedAt: string | null;
    exitCode: number | null;
    signal: string | null;
  };
  files: CaptureFile[];
  summary: CaptureSummary | null;
  warnings: string[];
  error: string | null;
}

/** One file a run produced, path relative to the capture's folder. */
export interface CaptureFile {
  path: string;
  /**
   * `loadtest`, `profile`, `trace` (a Go execution trace, `/debug/pprof/trace`) and `metrics` (the
   * window's runtime-metric series, `metrics.json`) files are uploaded; `raw` files (tool stderr,
   * binary results) are kept locally.
   */
  role: 'loadtest' | 'profile' | 'trace' | 'metrics' | 'raw';
  size: number;
  sha256: string;
  /** For profiles: cpu, allocs, heap, mutex, block, goroutine. */
  profileType?: string;
  /** How the profile relates to the window: sampled over it, a delta over it, a snapshot at its end, or cumulative since the process started. */
  span?: 'interval' | 'delta' | 'snapshot' | 'cumulative';
  url?: string;
  command?: string;
  fetchedFrom?: string;
  fetchedTo?: string;
}

/** What the run's own files say, for the one-line summary. */
export interface CaptureSummary {
  rps: number | null;
  requests: number | null;
  errors: number | null;
  p99Ms: number | null;
  /** CPU time in the CPU profile, seconds. */
  cpuSeconds: number | null;
  /** CPU profile duration as the profile records it, seconds. */
  profileSeconds: number | null;
  /** CPU µs per request: CPU time ÷ (rps × profile duration), the server's fallback method. */
  cpuMicrosPerRequest: number | null;
}
