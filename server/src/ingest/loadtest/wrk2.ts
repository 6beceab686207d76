/**
 * wrk2 (giltene/wrk2, reports itself as "wrk 4.0.0") text report → LoadTestRun.
 *
 * Same layout as wrk (see wrk.ts) plus, with --latency or -U, HdrHistogram blocks:
 * "Latency Distribution (HdrHistogram - Recorded Latency)" (coordinated-omission corrected) and,
 * with -U, "… - Uncorrected Latency (…)". Rules:
 * - the summary latency is the Recorded (corrected) histogram, which is also what the Thread Stats
 *   Latency row shows: mean = its #[Mean] (3 decimals), max = the Latency row Max, p50/p75/p90/p99/
 *   p99.9 from its printed lines, p95 and min from the spectrum rows at exactly 0.95 and 0.0;
 * - latencyDistribution = the printed lines plus every other spectrum row (percentile 0..100);
 * - the Uncorrected block is kept in meta.uncorrected (secondary reading);
 * - the histogram holds only what was recorded after wrk2's thread calibration (meta.histogramCount),
 *   which can be about half the requests in a 20 s run; requests stays the "N requests" line.
 */
import type { LoadTestRun, PercentilePoint } from '../../model/loadtest.ts';
import type { ByteSource } from '../source.ts';
import type { LoadTestImporter } from './types.ts';
import { headText, nameHints, readText } from './common/text.ts';
import { WRK2_MARKERS, parseWrkText, wrkFamilyConfidence, wrkRunFromText } from './wrk.ts';

function mergeDistribution(printed: PercentilePoint[], spectrum: PercentilePoint[]): PercentilePoint[] {
  const out = printed.map((p) => ({ ...p }));
  const seen = new Set(printed.map((p) => p.percentile.toFixed(4)));
  for (const p of spectrum) {
    const key = p.percentile.toFixed(4);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ ...p });
  }
  return out.sort((a, b) => a.percentile - b.percentile);
}

export function wrk2RunFromText(text: string): LoadTestRun {
  const w = parseWrkText(text, 'wrk2');
  const run = wrkRunFromText({ ...w, distribution: null }, 'wrk2', 'wrk2');
  const s = run.summary;
  s.meta.version = 'wrk 4.0.0 (wrk2)';
  if (w.calibration.length > 0) s.meta.calibration = w.calibration;
  const notes = s.meta.notes!;
  const rec = w.recorded;
  if (rec) {
    const at = (list: PercentilePoint[], p: number) => list.find((d) => Math.abs(d.percentile - p) < 1e-9)?.ms ?? null;
    s.latencyMs.p50 = at(rec.printed, 50);
    s.latencyMs.p75 = at(rec.printed, 75);
    s.latencyMs.p90 = at(rec.printed, 90);
    s.latencyMs.p99 = at(rec.printed, 99);
    s.latencyMs.p999 = at(rec.printed, 99.9);
    s.latencyMs.p95 = at(rec.printed, 95) ?? at(rec.spectrum, 95);
    s.latencyMs.min = at(rec.spectrum, 0);
    if (rec.mean !== null) s.latencyMs.mean = rec.mean;
    if (s.latencyMs.max === null) s.latencyMs.max = rec.max;
    s.meta.histogramCount = rec.totalCount;
    run.latencyDistribution = mergeDistribution(rec.printed, rec.spectrum);
    notes.push(
      'Latency is the Recorded (coordinated-omission corrected) HdrHistogram: mean = #[Mean], max = Thread Stats Max, ' +
        'p95 and min from the spectrum rows at 0.95 and 0.',
    );
    if (rec.totalCount !== null && rec.totalCount < w.requests * 0.9) {
      notes.push(
        `The histogram holds ${rec.totalCount} of ${w.requests} requests: wrk2 records latency only after its thread calibration.`,
      );
    }
  } else if (w.distribution && w.distribution.length > 0) {
    // A wrk2 build printing the plain wrk layout: take the lines as wrk would.
    return { ...wrkRunFromText(w, 'wrk2', 'wrk2') };
  }
  const unc = w.uncorrected;
  if (unc) {
    s.meta.uncorrected = {
      meanMs: unc.mean,
      maxMs: unc.max,
      totalCount: unc.totalCount,
      distribution: unc.printed,
    };
    notes.push('The -U "Uncorrected Latency" histogram is kept in meta.uncorrected; it is not the headline figure.');
  }
  if (w.reqPerThreadAvg === null)
    notes.push('Req/Sec printed -nan (run too short for calibration); rps is Requests/sec.');
  return run;
}

export const wrk2Importer: LoadTestImporter = {
  formats: ['wrk2'],
  runStart: /^Running \S+ test @ /,
  detect(head: Buffer, fileName?: string): number {
    const text = headText(head);
    const c = wrkFamilyConfidence(text);
    if (c === 0) return 0;
    if (WRK2_MARKERS.test(text)) return Math.max(c, 0.9) + 0.04;
    // The plain layout is identical to wrk's; only a name hint makes it wrk2.
    if (nameHints(fileName, /wrk2/i)) return Math.min(1, c + 0.03);
    return c * 0.5;
  },
  async parse(src: ByteSource): Promise<LoadTestRun> {
    return wrk2RunFromText(await readText(src, 'wrk2 report'));
  },
};
