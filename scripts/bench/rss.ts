import { readFileSync } from 'node:fs';

/**
 * This process's peak resident set, two ways. VmHWM (from /proc) belongs to the process's own
 * address space, so it starts afresh at exec. getrusage's maxRSS, which process.resourceUsage()
 * reports, does not: Linux carries the parent's high-water mark over fork+exec, so a child spawned
 * by a big parent (a test runner, say) reports at least the parent's size. Use VmHWM where there is
 * a /proc; maxRSS is kept for reference.
 */
export function peakRssBytes(): { peakRss: number; maxRss: number } {
  const maxRss = process.resourceUsage().maxRSS * 1024;
  try {
    const m = /VmHWM:\s+(\d+)\s+kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    if (m) return { peakRss: Number(m[1]) * 1024, maxRss };
  } catch {
    // No /proc (macOS): fall back to getrusage.
  }
  return { peakRss: maxRss, maxRss };
}
