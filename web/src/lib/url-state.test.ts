import { describe, expect, it } from 'vitest';
import { diffUrl, firstViewRequests, flamegraphUrl } from '../../../server/src/api/page-requests.ts';
import {
  DEFAULT_VIEW,
  applyViewPatch,
  filtersToSend,
  parseViewState,
  resolveStages,
  serializeViewState,
  treeChoice,
} from './url-state.ts';

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
      zoom: ['main.main', 'net/http.(*conn).serve', 'a;b&c=d'],
      noise: 0.005,
    };
    const qs = serializeViewState(state);
    expect(qs.startsWith('?tab=diff')).toBe(true);
    expect(parseViewState(qs)).toEqual(state);
  });
  it('a zoom path goes with the function it was clicked in', () => {
    const zoomed = applyViewPatch(DEFAULT_VIEW, { fn: 'b', zoom: ['a', 'b'] });
    expect(zoomed.zoom).toEqual(['a', 'b']);
    expect(serializeViewState(zoomed)).toBe('?fn=b&zoom=a&zoom=b');
    // Another function (a hot-path row) or a reset drops the path; other changes keep it.
    expect(applyViewPatch(zoomed, { fn: 'c' }).zoom).toEqual([]);
    expect(applyViewPatch(zoomed, { fn: '' })).toEqual(DEFAULT_VIEW);
    expect(applyViewPatch(zoomed, { search: 'x' }).zoom).toEqual(['a', 'b']);
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
    const noTags = { tagfocus: '', tagignore: '', tagshow: '', taghide: '' };
    expect(filtersToSend(v, null)).toEqual({
      focus: '(?=x)',
      ignore: '',
      hide: '^runtime\\.',
      show: '(?i)json',
      ...noTags,
    });
    expect(filtersToSend(v, { param: 'focus', value: '(?=x)' })).toEqual({
      focus: '',
      ignore: '',
      hide: '^runtime\\.',
      show: '(?i)json',
      ...noTags,
    });
    expect(filtersToSend({ ...v, focus: 'json' }, { param: 'focus', value: '(?=x)' }).focus).toBe('json');
  });
  it('keeps the granularity and the tag filters in the address', () => {
    const v = { ...DEFAULT_VIEW, granularity: 'lines' as const, tagfocus: 'endpoint=/api/orders', taghide: 'tenant' };
    const q = serializeViewState(v);
    expect(q).toBe('?granularity=lines&tagfocus=endpoint%3D%2Fapi%2Forders&taghide=tenant');
    expect(parseViewState(q)).toEqual(v);
    expect(parseViewState('?granularity=bytes').granularity).toBe('functions');
    expect(filtersToSend(v, { param: 'tagfocus', value: 'endpoint=/api/orders' }).tagfocus).toBe('');
  });
  it('resolves stages: those named, else the last two that have what the view needs', () => {
    const ids = ['s1', 's2', 's3', 's4'];
    expect(resolveStages({ base: '', target: '' }, ids)).toEqual({ base: 's3', target: 's4', gone: [] });
    // The last stage has no profile of the kind: the pair is the last two that do.
    expect(resolveStages({ base: '', target: '' }, ids, new Set(['s1', 's2', 's3']))).toEqual({
      base: 's2',
      target: 's3',
      gone: [],
    });
    expect(resolveStages({ base: '', target: '' }, ids, new Set(['s1', 's4']))).toEqual({
      base: 's1',
      target: 's4',
      gone: [],
    });
    // One stage has it: both sides show it. None has it: the last two stages.
    expect(resolveStages({ base: '', target: '' }, ids, new Set(['s2']))).toEqual({
      base: 's2',
      target: 's2',
      gone: [],
    });
    expect(resolveStages({ base: '', target: '' }, ids, new Set())).toEqual({ base: 's3', target: 's4', gone: [] });
    // Named stages stay, even without what the view needs (the view says what they lack).
    expect(resolveStages({ base: 's1', target: 's4' }, ids, new Set(['s2', 's3']))).toEqual({
      base: 's1',
      target: 's4',
      gone: [],
    });
    // A named stage that is gone: the default for that side, and said.
    expect(resolveStages({ base: 's2', target: 'gone' }, ids)).toEqual({ base: 's2', target: 's4', gone: ['target'] });
    expect(resolveStages({ base: 'x', target: 'y' }, ids, new Set(['s1', 's2']))).toEqual({
      base: 's1',
      target: 's2',
      gone: ['base', 'target'],
    });
    expect(resolveStages({ base: '', target: '' }, [])).toEqual({ base: '', target: '', gone: [] });
  });
  it('asks for the trees the server names in the page for its address (so the preloads are used)', () => {
    for (const search of [
      '?base=s1&target=s2',
      '?base=s1&target=s1&kind=allocs&sampleType=alloc_space&granularity=files',
      '?base=s1&target=s2&focus=net%2Fhttp&hide=runtime&tagfocus=endpoint%3D%2Fa&zoom=main.main&zoom=a%3Bb%26c',
      '?tab=diff&base=s1&target=s2&mode=per-request&granularity=lines&show=json&zoom=main.main',
      '?tab=diff&base=s2&target=s1&kind=heap',
    ]) {
      const view = parseViewState(search);
      const choice = treeChoice(view, filtersToSend(view, null));
      const zoomed = view.zoom.length > 0;
      const trees =
        view.tab === 'diff'
          ? [
              diffUrl('c1', view.base, view.target, { ...choice, mode: view.mode }),
              ...(zoomed ? [diffUrl('c1', view.base, view.target, { ...choice, mode: view.mode }, view.zoom, 1)] : []),
            ]
          : [...new Set([view.base, view.target])].flatMap((s) => [
              flamegraphUrl('c1', s, choice),
              ...(zoomed ? [flamegraphUrl('c1', s, choice, view.zoom)] : []),
            ]);
      const named = firstViewRequests('/c/c1', search);
      for (const url of trees) expect(named, search).toContain(url);
    }
  });
});
