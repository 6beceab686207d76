/**
 * The requests a comparison page's first view makes, from its address alone: what the server names in
 * the page for the browser to preload. (web/src/lib/url-state.test.ts checks the page builds the same URLs.)
 */
import { describe, expect, it } from 'vitest';
import { diffUrl, firstViewRequests, flamegraphUrl, pairFiguresUrl } from '../../src/api/page-requests.ts';

const none = { focus: '', ignore: '', hide: '', show: '', tagfocus: '', tagignore: '', tagshow: '', taghide: '' };
const plain = { kind: '', sampleType: '', granularity: 'functions', filters: none };
const head = ['/api/comparisons/demo', '/api/comparisons/demo/stage-table'];

describe('first view requests', () => {
  it('names nothing for a page that is not a comparison', () => {
    for (const path of ['/', '/c/', '/c/demo/stages', '/api/comparisons/demo', '/about']) {
      expect(firstViewRequests(path, ''), path).toEqual([]);
    }
  });

  it('names the comparison and its stage table, and no tree when the address names no pair', () => {
    expect(firstViewRequests('/c/demo', '')).toEqual(head);
    expect(firstViewRequests('/c/demo/', '?tab=diff&base=a')).toEqual(head);
    expect(firstViewRequests('/c/demo', '?tab=trends&base=a&target=b')).toEqual(head);
    // The id as the path carries it, encoded again for the API.
    expect(firstViewRequests('/c/a%20b', '')[0]).toBe('/api/comparisons/a%20b');
  });

  it('names each stage flamegraph once, and the subtree zoomed into', () => {
    expect(firstViewRequests('/c/demo', '?base=a&target=b')).toEqual([
      ...head,
      flamegraphUrl('demo', 'a', plain),
      flamegraphUrl('demo', 'b', plain),
    ]);
    expect(firstViewRequests('/c/demo', '?base=a&target=a&zoom=main.main&zoom=x')).toEqual([
      ...head,
      flamegraphUrl('demo', 'a', plain),
      flamegraphUrl('demo', 'a', plain, ['main.main', 'x']),
    ]);
    expect(flamegraphUrl('demo', 'a', plain)).toBe(
      '/api/comparisons/demo/flamegraph?stage=a&minFraction=0.0005&maxNodes=20000',
    );
  });

  it('names the diff first, its zoomed subtree with one hot-path row, then the pair figures', () => {
    const choice = { ...plain, kind: 'allocs', sampleType: 'alloc_space', granularity: 'lines', mode: 'share' };
    const search = '?tab=diff&base=a&target=b&kind=allocs&sampleType=alloc_space&granularity=lines&mode=share&zoom=f';
    expect(firstViewRequests('/c/demo', search)).toEqual([
      ...head,
      diffUrl('demo', 'a', 'b', choice),
      diffUrl('demo', 'a', 'b', choice, ['f'], 1),
      pairFiguresUrl('demo', 'a', 'b'),
    ]);
    expect(diffUrl('demo', 'a', 'b', choice, ['f'], 1)).toBe(
      '/api/comparisons/demo/diff?base=a&target=b&kind=allocs&sampleType=alloc_space&granularity=lines&mode=share&minFraction=0.0005&maxNodes=20000&root=f&limit=1',
    );
    // A stage against itself has no figures to compare.
    expect(firstViewRequests('/c/demo', '?tab=diff&base=a&target=a')).toEqual([
      ...head,
      diffUrl('demo', 'a', 'a', { ...plain, mode: 'auto' }),
    ]);
  });

  it('passes the filters on, and names no tree for a value the page would not take', () => {
    const [, , first] = firstViewRequests('/c/demo', '?base=a&target=a&focus=net%2Fhttp&taghide=k');
    expect(first).toBe(flamegraphUrl('demo', 'a', { ...plain, filters: { ...none, focus: 'net/http', taghide: 'k' } }));
    for (const bad of ['kind=nope', 'granularity=bytes', 'mode=fast'])
      expect(firstViewRequests('/c/demo', `?base=a&target=b&${bad}`), bad).toEqual(head);
  });

  it('leaves a long zoom path to the page', () => {
    const deep = Array.from({ length: 200 }, (_, i) => `zoom=pkg.function${i}`).join('&');
    expect(firstViewRequests('/c/demo', `?base=a&target=a&${deep}`)).toEqual([
      ...head,
      flamegraphUrl('demo', 'a', plain),
    ]);
  });
});
