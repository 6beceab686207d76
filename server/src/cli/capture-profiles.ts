import { writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { ingest } from '../ingest/detect.ts';
import { MetricsRecorder, parseScrape } from '../ingest/metrics/index.ts';
import { type ProfileType, METRICS_INTERVAL_MS } from './capture-options.ts';

/** What `stagediff capture` takes from the service: pprof profiles, an execution trace and runtime metrics over the window. */

export function errorText(e: unknown): string {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  const c = err?.cause;
  if (c?.code === 'ECONNREFUSED') return 'connection refused';
  if (c?.code) return `${c.code}${c.message ? ` (${c.message})` : ''}`;
  return err?.message ?? String(e);
}

export class FetchError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

/** Aborted on SIGINT/SIGTERM, so a profile that still has seconds to run does not hold up the exit. */
export const interrupt = new AbortController();

/**
 * Go runs one CPU profile at a time: net/http/pprof answers 500 "cpu profiling already in use" while
 * another is running — in practice a continuous profiler (Parca, Pyroscope, an agent) scraping the
 * service. Said as what it is and what to do, not as an HTTP error.
 */
function cpuInUse(url: string): string {
  let instance = '';
  try {
    instance = new URL(url).host;
  } catch {
    // not a URL: the command below names no instance
  }
  return `${url}: the service's CPU profiler is already in use — another profiler (a continuous profiler such as Parca or Pyroscope, or an agent) is taking CPU profiles of it, and Go runs one at a time. Take the stage from that profiler instead: stagediff import parca --url PARCA_URL --query '{instance="${instance}"}' --from START --to END --runs 6 --server STAGEDIFF_URL --stage NAME (the server fetches from the hosts its PROFILER_HOSTS allows; START and END as 2026-11-29T04:03:27Z). Or pause that profiler's CPU scrapes while capturing, or capture without cpu (--profiles heap,allocs,mutex,block,goroutine)`;
}

/** GETs one pprof endpoint into `file`; a non-profile answer (HTML, text, an error page) is an error. */
export async function fetchProfile(url: string, file: string, timeoutMs: number): Promise<void> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), interrupt.signal]) });
  } catch (e) {
    if (interrupt.signal.aborted) throw new FetchError(`${url}: interrupted`, null);
    throw new FetchError(`cannot reach ${url}: ${errorText(e)}`, null);
  }
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200) {
    const text = body.toString('utf8').trim().split('\n')[0]?.slice(0, 200) ?? '';
    if (res.status === 500 && /cpu profiling already in use/i.test(text)) throw new FetchError(cpuInUse(url), 500);
    const hint = res.status === 404 ? ' (is net/http/pprof registered on this address?)' : '';
    throw new FetchError(`${url}: HTTP ${res.status}${text ? `: ${text}` : ''}${hint}`, res.status);
  }
  if (body.length < 2 || body[0] !== 0x1f || body[1] !== 0x8b)
    throw new FetchError(`${url}: the answer is not a gzipped pprof profile (${body.length} bytes)`, 200);
  writeFileSync(file, body);
}

export function profileUrl(base: string, type: ProfileType, seconds: number | null): string {
  const name = type === 'cpu' ? 'profile' : type;
  return `${base}/debug/pprof/${name}${seconds !== null ? `?seconds=${seconds}` : ''}`;
}

export async function readCpu(path: string): Promise<{ cpuSeconds: number; durationSeconds: number } | null> {
  try {
    const p = await ingest({ name: basename(path), path });
    if (p.kind !== 'profile') return null;
    const idx = p.profile.sampleTypes.findIndex((t) => t.type === 'cpu');
    if (idx < 0) return null;
    const unit = p.profile.sampleTypes[idx]!.unit;
    let total = 0;
    for (const v of p.profile.values[idx]!) total += v;
    const scale = unit === 'nanoseconds' ? 1e-9 : unit === 'microseconds' ? 1e-6 : unit === 'milliseconds' ? 1e-3 : 1;
    return { cpuSeconds: total * scale, durationSeconds: p.profile.durationNanos / 1e9 };
  } catch {
    return null;
  }
}

/**
 * A run's CPU per request in microseconds: the CPU profile's total over the requests served while it
 * ran (the load's requests/s × the profile's duration). Shared by `capture`'s record and `bisect
 * --metric cpu-per-request`, so both say the same figure for the same files.
 */
export function cpuMicrosPerRequest(
  cpu: { cpuSeconds: number; durationSeconds: number } | null,
  rps: number | null | undefined,
): number | null {
  return cpu && rps && cpu.durationSeconds > 0 ? (cpu.cpuSeconds * 1e6) / (rps * cpu.durationSeconds) : null;
}

export async function sampleCount(path: string): Promise<number | null> {
  try {
    const p = await ingest({ name: basename(path), path });
    return p.kind === 'profile' ? p.profile.sampleStack.length : null;
  } catch {
    return null;
  }
}

/** GETs `url` as text within `timeoutMs` (or the interrupt); the error says why when it fails. */
async function getText(url: string, timeoutMs: number): Promise<{ body: string } | { error: string }> {
  try {
    const res = await fetch(url, { signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), interrupt.signal]) });
    const body = await res.text();
    if (res.status !== 200) return { error: `HTTP ${res.status}: ${body.trim().split('\n')[0]?.slice(0, 200) ?? ''}` };
    return { body };
  } catch (e) {
    return { error: interrupt.signal.aborted ? 'interrupted' : errorText(e) };
  }
}

/** Checks, before any load runs, that the metrics endpoint answers with metrics. */
export async function checkMetricsEndpoint(url: string): Promise<string | null> {
  const r = await getText(url, 5000);
  if ('error' in r) return `metrics endpoint ${url} is unreachable: ${r.error}`;
  try {
    const s = parseScrape(r.body);
    if (s.series.length === 0) return `metrics endpoint ${url} answered with no metric`;
  } catch (e) {
    return `metrics endpoint ${url} answered with something that is neither Prometheus text nor expvar JSON: ${(e as Error).message}`;
  }
  return null;
}

/**
 * Scrapes the metrics endpoint at the window's start and every second after it, up to its end, into
 * `file` (a MetricsFile). Returns how many scrapes failed and the first failure.
 */
export async function scrapeMetrics(
  url: string,
  w0: number,
  seconds: number,
  file: string,
): Promise<{ scrapes: number; failed: number; firstError: string | null; to: number }> {
  const rec = new MetricsRecorder(url, METRICS_INTERVAL_MS, w0);
  const offsets: number[] = [];
  for (let i = 0; i * METRICS_INTERVAL_MS <= seconds * 1000; i++) offsets.push(i * METRICS_INTERVAL_MS);
  if (offsets[offsets.length - 1]! < seconds * 1000) offsets.push(seconds * 1000);
  let failed = 0;
  let firstError: string | null = null;
  for (const off of offsets) {
    const wait = w0 + off - Date.now();
    if (wait > 0) await sleep(wait, undefined, { signal: interrupt.signal }).catch(() => undefined);
    if (interrupt.signal.aborted) break;
    const at = Date.now();
    const r = await getText(url, METRICS_INTERVAL_MS - 100);
    const before = rec.file().scrapes.length;
    rec.add(at - w0, Date.now() - at, 'body' in r ? r.body : null, 'error' in r ? r.error : null);
    const scrape = rec.file().scrapes[before]!;
    if (scrape.error !== null) {
      failed++;
      firstError ??= scrape.error;
    }
  }
  const f = rec.file();
  writeFileSync(file, `${JSON.stringify(f)}\n`);
  return { scrapes: f.scrapes.length, failed, firstError, to: Date.now() };
}

/** Takes `seconds` of execution trace, centred in the window that opened at `w0`, into `file`. */
export async function takeTrace(
  pprof: string,
  seconds: number,
  windowSeconds: number,
  w0: number,
  file: string,
): Promise<{ url: string; from: number; to: number; error: string | null }> {
  const url = `${pprof}/debug/pprof/trace?seconds=${seconds}`;
  const wait = w0 + ((windowSeconds - seconds) / 2) * 1000 - Date.now();
  if (wait > 0) await sleep(wait, undefined, { signal: interrupt.signal }).catch(() => undefined);
  const from = Date.now();
  if (interrupt.signal.aborted) return { url, from, to: from, error: `${url}: interrupted` };
  try {
    const res = await fetch(url, {
      signal: AbortSignal.any([AbortSignal.timeout((seconds + 30) * 1000), interrupt.signal]),
    });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) {
      const text = body.toString('utf8').trim().split('\n')[0]?.slice(0, 200) ?? '';
      return { url, from, to: Date.now(), error: `${url}: HTTP ${res.status}${text ? `: ${text}` : ''}` };
    }
    if (!body.subarray(0, 5).equals(Buffer.from('go 1.')))
      return {
        url,
        from,
        to: Date.now(),
        error: `${url}: the answer is not a Go execution trace (${body.length} bytes)`,
      };
    writeFileSync(file, body);
    return { url, from, to: Date.now(), error: null };
  } catch (e) {
    return { url, from, to: Date.now(), error: `${url}: ${interrupt.signal.aborted ? 'interrupted' : errorText(e)}` };
  }
}
