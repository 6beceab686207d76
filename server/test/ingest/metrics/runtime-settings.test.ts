/**
 * The Go runtime's settings a metrics window states (GOMAXPROCS, GOGC, GOMEMLIMIT, the Go version), read
 * from real captures (fixtures/metrics) and checked against the raw scrapes in the same file.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { metricsRuntimeSettings } from '../../../src/ingest/metrics/index.ts';
import type { MetricsFile } from '../../../src/model/metrics.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const dir = `${fixturesDir}metrics/`;

/** The last value a raw series has in the file, or undefined. */
function rawLast(f: MetricsFile, name: string): number | undefined {
  const s = f.series.find((x) => x.name === name && Object.keys(x.labels).length === 0) as
    | { values?: (number | null)[] }
    | undefined;
  return s?.values?.filter((v): v is number => typeof v === 'number').at(-1);
}

describe.each(['demo-prometheus', 'client-golang'])('%s', (name) => {
  it('GOMAXPROCS, GOGC and GOMEMLIMIT as the last scrape gives them', async () => {
    const raw = JSON.parse(readFileSync(`${dir}${name}/metrics.json`, 'utf8')) as MetricsFile;
    const p = await ingest({ name: 'upload', path: `${dir}${name}/metrics.json` });
    if (p.kind !== 'metrics') throw new Error(p.kind);
    const s = metricsRuntimeSettings(p.metrics.series);
    expect(s.gomaxprocs).toBe(rawLast(raw, 'go_sched_gomaxprocs_threads'));
    expect(s.gogc).toBe(String(rawLast(raw, 'go_gc_gogc_percent')));
    // No limit set: the runtime reports math.MaxInt64.
    expect(rawLast(raw, 'go_gc_gomemlimit_bytes')).toBe(2 ** 63);
    expect(s.gomemlimit).toBe('none');
    const info = raw.series.find((x) => x.name === 'go_info');
    expect(s.goVersion).toBe(info ? info.labels.version : null);
    // client_golang's default registry exports go_info; the demo service's own handler does not.
    expect(s.goVersion).toBe(name === 'client-golang' ? 'go1.26.8' : null);
  });
});

it('expvar states none of them', async () => {
  const p = await ingest({ name: 'upload', path: `${dir}demo-expvar/metrics.json` });
  if (p.kind !== 'metrics') throw new Error(p.kind);
  expect(metricsRuntimeSettings(p.metrics.series)).toEqual({
    goVersion: null,
    gomaxprocs: null,
    gogc: null,
    gomemlimit: null,
  });
});
