import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CaptureFile, CaptureRecord, CaptureRun } from '../model/capture.ts';
import { SOURCES_ARCHIVE, collectSources, findModuleRoot, profileFrames, sourcesArchive } from './capture-sources.ts';
import { SOURCE_LIMITS } from '../config.ts';
import type { Options } from './capture-options.ts';

/** The record `stagediff capture` keeps: its progress lines, each file's entry, the runs' summary lines and the sources kept. */

/** Terminal progress on stderr: permanent lines for each step, and a live countdown on a TTY. */
export class Progress {
  private status = '';
  private timer: NodeJS.Timeout | null = null;
  private readonly tty = Boolean(process.stderr.isTTY);

  line(text: string): void {
    this.clear();
    process.stderr.write(`${text}\n`);
    this.draw();
  }
  /** A live status line, e.g. "run 1/3: profiles (4 s left)"; `until` is when the step ends (ms epoch). */
  countdown(label: string, until: number): void {
    if (!this.tty) return;
    this.stopCountdown();
    const tick = () => {
      const left = Math.max(0, Math.ceil((until - Date.now()) / 1000));
      this.clear();
      this.status = `${label} (${left} s left)`;
      this.draw();
    };
    tick();
    this.timer = setInterval(tick, 250);
  }
  stopCountdown(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.clear();
    this.status = '';
  }
  private clear(): void {
    if (this.tty && this.status) process.stderr.write('\r\x1b[K');
  }
  private draw(): void {
    if (this.tty && this.status) process.stderr.write(this.status);
  }
}

function sha256File(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

export function fileEntry(
  dir: string,
  rel: string,
  role: CaptureFile['role'],
  extra: Partial<CaptureFile> = {},
): CaptureFile {
  const p = join(dir, rel);
  return { path: rel, role, size: statSync(p).size, sha256: sha256File(p), ...extra };
}

export function iso(ms = Date.now()): string {
  return new Date(ms).toISOString();
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function summaryLine(run: CaptureRun, total: number): string {
  const head = `run ${run.run}/${total}:`;
  const s = run.summary;
  const parts: string[] = [];
  if (s?.rps != null) parts.push(`${fmt(s.rps, 1)} req/s`);
  if (s?.p99Ms != null) parts.push(`p99 ${fmt(s.p99Ms, 2)} ms`);
  if (s?.errors != null) parts.push(`${fmt(s.errors)} errors`);
  if (s?.cpuSeconds != null && s.profileSeconds)
    parts.push(
      `CPU ${fmt(s.cpuSeconds, 2)} s in ${fmt(s.profileSeconds, 1)} s (${fmt((100 * s.cpuSeconds) / s.profileSeconds)} %)`,
    );
  if (s?.cpuMicrosPerRequest != null) parts.push(`${fmt(s.cpuMicrosPerRequest, 1)} µs CPU/request`);
  parts.push(`${run.machine.cpuIdlePercent}% idle before${run.machine.busy ? ' (BUSY)' : ''}`);
  if (run.error) parts.push(`FAILED: ${run.error}`);
  else if (run.warnings.length) parts.push(`${run.warnings.length} warning${run.warnings.length > 1 ? 's' : ''}`);
  return `${head} ${parts.join(', ')}`;
}

export function stagediffVersion(): string {
  // src/cli/capture.ts (a checkout) and dist/<chunk>.mjs (the compiled build) sit at different depths.
  for (const rel of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'stagediff' && pkg.version) return pkg.version;
    } catch {
      // not there at this depth
    }
  }
  return 'unknown';
}

/**
 * Writes the module's source files the profiles name to DIR/sources.tar.gz; returns its path, or null
 * when there is no module (only an explicit --source makes that a warning) or nothing matched.
 */
export function keepSources(o: Options, record: CaptureRecord, dir: string, progress: Progress): string | null {
  if (!o.source) return null;
  const root = findModuleRoot(o.source.dir);
  if (!root) return null;
  const profiles = record.runs.flatMap((r) =>
    r.files.filter((f) => f.role === 'profile').map((f) => join(dir, f.path)),
  );
  const collected = collectSources(root, profileFrames(profiles), SOURCE_LIMITS);
  for (const s of collected.skipped) progress.line(`note: source ${s}: not kept`);
  if (collected.files.size <= 1) {
    progress.line(`note: the profiles name no source file of the module in ${root}; no sources kept`);
    return null;
  }
  const path = join(dir, SOURCES_ARCHIVE);
  writeFileSync(path, sourcesArchive(collected));
  progress.line(
    `sources: ${collected.files.size} files of ${collected.modulePath || root}${collected.revision ? ` at ${collected.revision.slice(0, 12)}${collected.dirty ? ' (dirty)' : ''}` : ''} in ${SOURCES_ARCHIVE}`,
  );
  return path;
}
