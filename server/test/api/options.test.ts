import { describe, expect, it } from 'vitest';
import { FIGURES } from '../../src/api/labels.ts';
import {
  DIFF_MODE_PARAMS,
  FIGURE_METRICS,
  FILTERS,
  GRANULARITIES,
  METRICS,
  PROFILE_KINDS,
} from '../../src/api/options.ts';
import { DiffModeParam, FilterQuery, Granularity, ProfileKind } from '../../src/api/views.ts';
import { parseRule } from '../../src/client/check-rules.ts';
import { FILTER_FLAGS, compileFilterFlags } from '../../src/cli/filters.ts';
import { UsageError, parseFlags } from '../../src/cli/flags.ts';
import { compileFilters } from '../../src/services/view-queries.ts';

/* The option vocabulary (api/options.ts) is the one list behind the schemas, the CLI and check. */
const consts = (schema: unknown) => (schema as { anyOf: { const: string }[] }).anyOf.map((s) => s.const);

describe('the option vocabulary', () => {
  it('is what the schemas accept, in its order', () => {
    expect(consts(ProfileKind)).toEqual(PROFILE_KINDS);
    expect(consts(Granularity)).toEqual(GRANULARITIES);
    expect(consts(DiffModeParam)).toEqual(DIFF_MODE_PARAMS);
    expect((DiffModeParam as { default?: string }).default).toBe('auto');
    expect(Object.keys(FilterQuery.properties)).toEqual(FILTERS);
    expect(Object.keys(FILTER_FLAGS)).toEqual(FILTERS);
  });

  it("names the stage table's figures as labels.ts words them, and check takes every metric and no other", () => {
    expect(Object.values(FIGURES).map((f) => f.metric)).toEqual(FIGURE_METRICS);
    for (const m of METRICS) expect(parseRule(`${m}:+5%`).metric).toBe(m);
    expect(() => parseRule('gc-pause:+5%')).toThrow(
      `unknown metric "gc-pause" (known: ${METRICS.join(', ')}, bench:UNIT)`,
    );
  });

  it('compiles filters once for the views and the flags: the same refusal, naming the parameter or the flag', () => {
    const bad = { focus: 'main', hide: '(?=x)', tagfocus: 'bytes=1kb:' };
    let served: Error | undefined;
    try {
      compileFilters(bad);
    } catch (e) {
      served = e as Error;
    }
    expect(served).toMatchObject({ code: 'invalid-filter', detail: { param: 'hide' } });
    const flags = parseFlags(['--focus', 'main', '--hide', '(?=x)', '--tagfocus', 'bytes=1kb:'], FILTER_FLAGS);
    let typed: Error | undefined;
    try {
      compileFilterFlags(flags);
    } catch (e) {
      typed = e as Error;
    }
    expect(typed).toBeInstanceOf(UsageError);
    expect(typed?.message).toBe(`--${served?.message}`);
    expect(served?.message).toMatch(/^hide is not a valid Go regular expression: error parsing regexp/);
    // Good expressions compile to the same filters on both sides.
    const ok = compileFilterFlags(
      parseFlags(['--focus', 'a', '--focus', 'b', '--tagignore', 'bytes=1kb:'], FILTER_FLAGS),
    );
    expect(Object.keys(ok)).toEqual(Object.keys(compileFilters({ focus: ['a', 'b'], tagignore: 'bytes=1kb:' })));
  });
});
