import type {
  ConditionDifference,
  ConditionKey,
  ConditionValues,
  LoadSettings,
  PairConditions,
  RunConditions,
  StageConditions,
} from '../api/conditions.ts';
import { comparableBuildSettings } from '../ingest/go-buildinfo.ts';
import type { CaptureRecord } from '../model/capture.ts';
import type { LoadTestSummary } from '../model/loadtest.ts';
import { kinded } from '../model/artifact-summary.ts';
import type { StageWithArtifacts } from '../store/index.ts';
import { type StageRunSet, stageLoadRuns } from './stage-runs.ts';

/*
 * A stage's conditions, read from the stored summaries of its files and from its capture records (no
 * parsing), and the comparison of two stages' conditions the change engine makes before it compares
 * their figures (api/conditions.ts).
 */

const finite = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

/** The path and query of a target URL (a load's settings name what it asked for, not where the service ran). */
function targetPath(url: string | null): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return `${u.pathname}${u.search}`;
  } catch {
    return url.startsWith('/') ? url : null;
  }
}

/** One load-test run's tool and settings, from its stored summary. */
export function loadSettings(format: string, s: LoadTestSummary): LoadSettings {
  const m = s.meta ?? ({} as LoadTestSummary['meta']);
  const tool = text(m.tool) ?? format;
  const threads = finite(m.threads);
  const connections = finite(m.connections);
  const vus = finite(m.vus);
  const rate = finite(m.rate);
  const iterationRate = finite(m.iterationRate);
  const duration = text(m.configuredDuration);
  const method = text(m.method);
  const path = targetPath(text(m.targetUrl));
  const words = [tool];
  if (threads !== null) words.push(plural(threads, 'thread'));
  if (connections !== null) words.push(plural(connections, 'connection'));
  if (vus !== null) words.push(plural(vus, 'VU'));
  if (rate !== null && rate > 0) words.push(`${rate.toLocaleString('en-US')} req/s`);
  if (iterationRate !== null) words.push(`${iterationRate.toLocaleString('en-US')} iterations/s`);
  if (duration !== null) words.push(duration);
  if (method !== null || path !== null) words.push([method, path].filter(Boolean).join(' '));
  return {
    tool,
    format,
    version: text(m.version),
    threads,
    connections,
    vus,
    rate,
    iterationRate,
    duration,
    method,
    path,
    text: words.join(', '),
  };
}

function emptyRun(source: string, artifactId: string | null): RunConditions {
  return {
    source,
    artifactId,
    inFigures: false,
    load: null,
    goVersion: null,
    gomaxprocs: null,
    gogc: null,
    gomemlimit: null,
    build: [],
    cpu: null,
    cores: null,
    os: null,
    kernel: null,
    host: null,
  };
}

/** Node's architecture names as Go spells them, so a capture record and a benchmark header agree. */
const GO_ARCH: Record<string, string> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le' };

/** A trace header's `go 1.NN`: Go 1.24 writes the 1.23 format, so that header names either release. */
function traceGo(v: unknown): string | null {
  const s = text(v);
  if (!s) return null;
  return s === '1.23' ? 'go1.23/go1.24' : `go${s}`;
}

/** go1.26.8 → go1.26: stages are compared by release, the precision every source states. */
function goRelease(v: string): string {
  return /^go\d+\.\d+/.exec(v)?.[0] ?? v;
}

function isCaptureRecord(c: unknown): c is CaptureRecord {
  return typeof c === 'object' && c !== null && (c as { schema?: unknown }).schema === 'stagediff-capture/1';
}

/** Every file's and capture run's conditions, and each condition's distinct values across them. */
export function stageConditions(st: StageWithArtifacts, set: StageRunSet): StageConditions {
  const runs: RunConditions[] = [];
  const used = new Set(set.used.map((r) => `${r.artifact.id}\u0000${r.runInFile ?? ''}`));
  for (const r of stageLoadRuns(st)) {
    const c = emptyRun(
      r.runInFile === null ? r.artifact.filename : `${r.artifact.filename} (run ${r.runInFile})`,
      r.artifact.id,
    );
    c.load = loadSettings(r.artifact.format, r.summary);
    c.inFigures = used.has(`${r.artifact.id}\u0000${r.runInFile ?? ''}`);
    runs.push(c);
  }
  for (const a of st.artifacts) {
    const c = emptyRun(a.filename, a.id);
    const k = kinded(a);
    if (k.kind === 'trace') {
      const s = k.summary;
      c.goVersion = traceGo(s.goVersion);
      c.gomaxprocs = finite(s.gomaxprocs);
    } else if (k.kind === 'metrics') {
      const r = k.summary.runtimeSettings;
      if (!r) continue;
      c.goVersion = text(r.goVersion);
      c.gomaxprocs = finite(r.gomaxprocs);
      c.gogc = text(r.gogc);
      c.gomemlimit = text(r.gomemlimit);
    } else if (k.kind === 'benchmark') {
      const cfg = k.summary.config;
      if (!cfg) continue;
      c.cpu = text(cfg.cpu);
      const goos = text(cfg.goos);
      const goarch = text(cfg.goarch);
      c.os = goos && goarch ? `${goos}/${goarch}` : (goos ?? goarch);
    } else if (k.kind === 'schedtrace') {
      c.gomaxprocs = finite(k.summary.gomaxprocs);
    } else continue;
    runs.push(c);
  }
  st.captures.forEach((rec, i) => {
    if (!isCaptureRecord(rec) || !rec.host) return;
    const h = rec.host;
    const c = emptyRun(`capture ${i + 1} (${plural(rec.runs?.length ?? 0, 'run')})`, null);
    c.cpu = text(h.cpu);
    c.cores = finite(h.cores);
    const os = text(h.os);
    const arch = text(h.arch);
    c.os = os && arch ? `${os}/${GO_ARCH[arch] ?? arch}` : os;
    c.kernel = text(h.kernel);
    c.host = text(h.hostname);
    const b = rec.build;
    if (b && typeof b === 'object') {
      c.goVersion = text(b.goVersion);
      c.build = comparableBuildSettings(b);
    }
    runs.push(c);
  });
  return { runs, summary: summarise(runs) };
}

/** The conditions a stage is summarised by, in the order they are shown and compared. */
const SUMMARY: { key: ConditionKey; label: string; values: (r: RunConditions) => string[] }[] = [
  { key: 'load', label: 'load', values: (r) => (r.load && r.inFigures ? [r.load.text] : []) },
  { key: 'go', label: 'Go version', values: (r) => (r.goVersion ? [goRelease(r.goVersion)] : []) },
  { key: 'gomaxprocs', label: 'GOMAXPROCS', values: (r) => (r.gomaxprocs !== null ? [String(r.gomaxprocs)] : []) },
  { key: 'gogc', label: 'GOGC', values: (r) => (r.gogc ? [r.gogc] : []) },
  { key: 'gomemlimit', label: 'GOMEMLIMIT', values: (r) => (r.gomemlimit ? [r.gomemlimit] : []) },
  { key: 'build', label: 'build', values: (r) => r.build },
  { key: 'machine', label: 'CPU', values: (r) => (r.cpu ? [r.cpu] : []) },
  { key: 'machine', label: 'cores', values: (r) => (r.cores !== null ? [String(r.cores)] : []) },
  { key: 'machine', label: 'OS', values: (r) => (r.os ? [r.os] : []) },
  { key: 'machine', label: 'kernel', values: (r) => (r.kernel ? [r.kernel] : []) },
  { key: 'machine', label: 'host', values: (r) => (r.host ? [r.host] : []) },
];

function summarise(runs: readonly RunConditions[]): ConditionValues[] {
  const out: ConditionValues[] = [];
  for (const s of SUMMARY) {
    const values = [...new Set(runs.flatMap(s.values))].sort();
    if (values.length > 0) out.push({ key: s.key, label: s.label, values });
  }
  return out;
}

/**
 * Two stages' conditions side by side. A condition differs when both stages state it and their sets of
 * values differ; the load differs when the runs behind the two stages' load-test figures differ in tool
 * or any setting (then those figures are not comparable).
 */
export function pairConditions(
  base: { name: string; conditions: StageConditions },
  target: { name: string; conditions: StageConditions },
): PairConditions {
  const differences: ConditionDifference[] = [];
  for (const b of base.conditions.summary) {
    const t = target.conditions.summary.find((x) => x.key === b.key && x.label === b.label);
    if (!t || (t.values.length === b.values.length && t.values.every((v, i) => v === b.values[i]))) continue;
    const side = (name: string, values: string[]) => `${name}: ${values.join(' + ')}`;
    differences.push({
      key: b.key,
      label: b.label,
      base: b.values,
      target: t.values,
      text:
        b.key === 'load'
          ? `${side(base.name, b.values)} · ${side(target.name, t.values)}`
          : `${b.label}: ${base.name} ${b.values.join(', ')} · ${target.name} ${t.values.join(', ')}`,
    });
  }
  const load = differences.find((d) => d.key === 'load');
  return {
    base: base.conditions,
    target: target.conditions,
    loadComparable: load === undefined,
    loadReason: load ? load.text : null,
    differences,
    warning:
      differences.length === 0
        ? null
        : `Measured under different conditions: ${differences.map((d) => (d.key === 'load' ? `load (${d.text})` : d.text)).join('; ')}.`,
  };
}

/** Which keys a pair differs in. */
export function differingKeys(p: PairConditions): ConditionKey[] {
  return [...new Set(p.differences.map((d) => d.key))];
}
