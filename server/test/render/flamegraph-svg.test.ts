import { describe, expect, it } from 'vitest';
import { type SvgFrame, diffFill, renderFlameSvg, xmlText } from '../../src/render/flamegraph-svg.ts';

const leaf = (name: string, value: number): SvgFrame => ({ name, value, children: [] });

describe('xmlText', () => {
  it('escapes markup and replaces characters XML forbids', () => {
    expect(xmlText(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(xmlText('a\u0000b\u001bc\ud800d\uffff')).toBe('a\uFFFDb\uFFFDc\uFFFDd\uFFFD');
    // A valid surrogate pair and tab/newline stay.
    expect(xmlText('😀\t\n')).toBe('😀\t\n');
  });
});

describe('renderFlameSvg', () => {
  it('draws widths proportional to values, root on top, labels cut to fit', () => {
    const tree: SvgFrame = {
      name: 'root',
      value: 100,
      children: [leaf('main.handle', 75), leaf('runtime.gcBgMarkWorker_with_a_very_long_name', 10)],
    };
    const svg = renderFlameSvg(tree, { title: 't', subtitle: 's', unit: 'count', width: 420 });
    const rects = [...svg.matchAll(/<rect x="([\d.]+)" y="(\d+)" width="([\d.]+)"/g)].map((m) =>
      m.slice(1).map(Number),
    );
    expect(rects).toEqual([
      [10, 48, 400],
      [10, 66, 300],
      [310, 66, 40],
    ]);
    expect(svg).toContain('>main.handle</text>');
    expect(svg).toContain('>runt…</text>');
  });

  it('stops at maxFrames and says how many frames it left out; deep trees do not overflow the stack', () => {
    let deep: SvgFrame = leaf('bottom', 1);
    for (let i = 0; i < 5000; i++) deep = { name: `f${i % 7}`, value: 1, children: [deep] };
    const svg = renderFlameSvg(deep, { title: 't', subtitle: 's', unit: 'count', maxFrames: 100 });
    expect(svg.match(/<rect x=/g)).toHaveLength(100);
    expect(svg).toContain('4901 more frames not drawn (limits: 100 frames, 200 levels)');
    // The depth limit bounds the height: 201 levels of 18 px, plus header and footer.
    const tall = renderFlameSvg(deep, { title: 't', subtitle: 's', unit: 'count' });
    expect(tall.match(/<rect x=/g)).toHaveLength(201);
    expect(tall).toContain('height="3700"');
    expect(tall).toContain('4800 more frames not drawn');
  });

  it('colours a diff the way the dashboard does', () => {
    expect(diffFill({ base: 10, target: 0, delta: -10 }, 100, 0.001)).toBe('rgb(31,100,200)');
    expect(diffFill({ base: 0, target: 10, delta: 10 }, 100, 0.001)).toBe('rgb(214,39,40)');
    expect(diffFill({ base: 10, target: 10.05, delta: 0.05 }, 100, 0.001)).toBe('rgb(214,214,214)');
    // +25 % of the larger side (50): partly tinted red.
    expect(diffFill({ base: 40, target: 50, delta: 10 }, 100, 0.001)).toBe('rgb(214,116,117)');
  });
});
