import { describe, expect, it } from 'vitest';
import { LOADTEST_FORMATS, OTHER_INPUTS, PROFILE_FORMATS } from './formats.ts';

describe('what it reads', () => {
  it('names the new importers and every tool of the load-test list', () => {
    const all = [...Object.values(PROFILE_FORMATS), ...Object.values(LOADTEST_FORMATS), ...OTHER_INPUTS].join('\n');
    for (const tool of ['wrk', 'hey', 'vegeta', 'k6', 'ab', 'autocannon', 'bombardier', 'Locust', 'JMeter', 'ghz'])
      expect(all).toContain(tool);
    for (const f of ['speedscope', 'perf script', 'console summary', 'UTF-16', 'legacy pprof'])
      expect(all).toContain(f);
    expect(Object.keys(PROFILE_FORMATS).sort()).toEqual([
      'cpuprofile',
      'folded',
      'otlp',
      'perf-script',
      'pprof',
      'speedscope',
    ]);
  });
});
