import { describe, expect, it } from 'vitest';
import { DEFAULT_VIEW, filtersToSend, parseViewState, resolveStages, serializeViewState } from './url-state.ts';

describe('url state', () => {
  it('round-trips every field', () => {
    const state = {
      ...DEFAULT_VIEW,
      tab: 'diff' as const,
      base: 'abc',
      target: 'def',
      kind: 'allocs' as const,
      sampleType: 'alloc_space',
      mode: 'share' as const,
      focus: 'net/http',
      ignore: 'runtime\\.',
      hide: 'gc',
      show: '(?i)json',
      search: 'json',
      fn: 'encoding/json.Marshal',
      noise: 0.005,
    };
    const qs = serializeViewState(state);
    expect(qs.startsWith('?tab=diff')).toBe(true);
    expect(parseViewState(qs)).toEqual(state);
  });
  it('omits defaults and rejects invalid values', () => {
    expect(serializeViewState(DEFAULT_VIEW)).toBe('');
    const s = parseViewState('?tab=bogus&mode=weird&kind=sideways&noise=abc&fn=%3Cimg%3E');
    expect(s.tab).toBe('flame');
    expect(s.mode).toBe('auto');
    expect(s.kind).toBe('');
    expect(s.noise).toBe(DEFAULT_VIEW.noise);
    expect(s.fn).toBe('<img>');
  });
  it('opens links made before profile kinds and the automatic mode as they were', () => {
    // An old link names its mode and sample type, no kind: the server picks the kind holding the type.
    const old = parseViewState('?tab=diff&sampleType=alloc_space&mode=absolute');
    expect(old).toEqual({ ...DEFAULT_VIEW, tab: 'diff', sampleType: 'alloc_space', mode: 'absolute' });
    expect(serializeViewState(old)).toBe('?tab=diff&sampleType=alloc_space&mode=absolute');
    expect(serializeViewState({ ...DEFAULT_VIEW, kind: 'heap' })).toBe('?kind=heap');
  });
  it('sends every filter but the one the server refused, while it is unchanged', () => {
    const v = { ...DEFAULT_VIEW, focus: '(?=x)', hide: '^runtime\\.', show: '(?i)json' };
    expect(filtersToSend(v, null)).toEqual({ focus: '(?=x)', ignore: '', hide: '^runtime\\.', show: '(?i)json' });
    expect(filtersToSend(v, { param: 'focus', value: '(?=x)' })).toEqual({
      focus: '',
      ignore: '',
      hide: '^runtime\\.',
      show: '(?i)json',
    });
    expect(filtersToSend({ ...v, focus: 'json' }, { param: 'focus', value: '(?=x)' }).focus).toBe('json');
  });
  it('resolves stages', () => {
    expect(resolveStages({ ...DEFAULT_VIEW }, ['s1', 's2', 's3'])).toEqual({ base: 's1', target: 's3' });
    expect(resolveStages({ ...DEFAULT_VIEW, base: 's2', target: 'gone' }, ['s1', 's2', 's3'])).toEqual({
      base: 's2',
      target: 's3',
    });
  });
});
