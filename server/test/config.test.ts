import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { builtinTraceLimits } from '../src/ingest/trace/index.ts';

describe('trace limits in the configuration', () => {
  it('default to the built-in bounds', () => {
    expect(loadConfig({}).traceLimits).toEqual(builtinTraceLimits);
  });

  it('take TRACE_MAX_BYTES, TRACE_MAX_EVENTS and TRACE_MAX_GENERATION_BYTES', () => {
    const l = loadConfig({
      TRACE_MAX_BYTES: '1048576',
      TRACE_MAX_EVENTS: '5000',
      TRACE_MAX_GENERATION_BYTES: '70000',
    }).traceLimits;
    expect([l.maxBytes, l.maxEvents, l.maxGenerationBytes]).toEqual([1048576, 5000, 70000]);
  });

  it.each([
    ['TRACE_MAX_EVENTS', 'many'],
    ['TRACE_MAX_BYTES', '-1'],
    ['TRACE_MAX_GENERATION_BYTES', '100'],
  ])('refuse %s=%s at start-up, naming the setting', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name} must be an integer`));
  });
});
