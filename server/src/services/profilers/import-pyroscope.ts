import { gzipSync } from 'node:zlib';
import { encodePprof } from '../../ingest/pprof/encode.ts';
import { type PprofLimits, parsePprof } from '../../ingest/pprof/index.ts';
import type { Profile } from '../../model/profile.ts';
import { type Fetcher, ProfilerError } from './guarded-fetch.ts';
import type { ImportOutcome, ImportedRun, ProfilerImportRequest } from './import-parca.ts';
import { pyroscopeMerge, pyroscopeSeries } from './pyroscope.ts';
import { subWindows } from './window.ts';

/**
 * A stage from Pyroscope: the CPU of each of N equal sub-windows, as Pyroscope merges the profiles
 * whose time lies in it (SelectMergeProfile), with the sum of its series' points there
 * (SelectSeries). Pyroscope's API gives no profile's own span, so a run covers its requested
 * sub-window: its file lasts that long and no covered window is claimed.
 */

const CPU_TYPE = 'process_cpu:cpu:nanoseconds:cpu:nanoseconds';
const iso = (ms: number) => new Date(ms).toISOString();

function cpuTotal(p: Profile): number {
  const i = p.sampleTypes.findIndex((t) => t.type === 'cpu');
  let sum = 0;
  for (const v of p.values[i < 0 ? p.values.length - 1 : i] ?? []) sum += v;
  return sum;
}

export async function importFromPyroscope(
  fetch: Fetcher,
  req: ProfilerImportRequest,
  limits: Partial<PprofLimits> = {},
): Promise<ImportOutcome> {
  const { url, selector, fromMs, toMs, runs } = req;
  const windows = subWindows(fromMs, toMs, runs);
  const stepSeconds = Math.max(1, Math.round((toMs - fromMs) / 1000 / Math.max(1, runs * 60)));
  const points = await pyroscopeSeries(fetch, url, CPU_TYPE, selector, fromMs, toMs, stepSeconds);
  const out: ImportedRun[] = [];
  const files: { filename: string; bytes: Buffer }[] = [];
  for (let k = 0; k < runs; k++) {
    const w = windows[k]!;
    const p = parsePprof(await pyroscopeMerge(fetch, url, CPU_TYPE, selector, w.startMs, w.endMs), limits);
    if (p.sampleStack.length === 0)
      throw new ProfilerError(
        422,
        'no-profiles',
        `runs: Pyroscope has no ${CPU_TYPE} profile for ${selector} between ${iso(w.startMs)} and ${iso(w.endMs)} (run ${k + 1} of ${runs}): check the selector and the window, or ask for fewer runs`,
        'runs',
      );
    const filename = `run-${k + 1}-cpu.pb.gz`;
    const { timeNanosExact: _exact, ...rest } = p;
    const profile: Profile = {
      ...rest,
      timeNanos: w.startMs * 1e6,
      timeNanosExact: (BigInt(w.startMs) * 1_000_000n).toString(),
      durationNanos: (w.endMs - w.startMs) * 1e6,
      comments: [
        `stagediff import from Pyroscope ${url.host}: ${CPU_TYPE}${selector}, run ${k + 1} of ${runs}; requested ${iso(w.startMs)} to ${iso(w.endMs)} (Pyroscope's merge of the profiles whose time lies in it)`,
      ],
    };
    files.push({ filename, bytes: gzipSync(encodePprof(profile)) });
    const inRun = points.filter((x) => x.timestampMs >= w.startMs && x.timestampMs < w.endMs);
    out.push({
      run: k,
      requested: w,
      covered: null,
      profiles: [
        {
          kind: 'cpu',
          mode: 'delta',
          query: `${CPU_TYPE}${selector}`,
          scrapes: inRun.length,
          fromMs: w.startMs,
          toMs: w.endMs,
          total: cpuTotal(profile),
          seriesTotal: inRun.reduce((a, x) => a + x.value, 0),
          filename,
        },
      ],
    });
  }
  return { runs: out, files, skippedTypes: [] };
}
