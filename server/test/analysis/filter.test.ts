/**
 * pprof's filter rules (profile.FilterSamplesByName in google/pprof) on small profiles written as
 * text: what each expression is matched against, how focus/ignore select samples, how hide/show
 * edit stacks. The live comparison with go tool pprof is in go-pprof-live.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { type FrameFilters, filterProfile, matchFrames } from '../../src/analysis/filter.ts';
import { type GoRegexp, compileGoRegexp } from '../../src/analysis/go-regexp.ts';
import { profileFromFrames, topText } from '../helpers/profile-text.ts';

const re = (s: string) => compileGoRegexp(s);
const apply = (text: string, f: Partial<Record<keyof FrameFilters, string>>) => {
  const filters: FrameFilters = {};
  for (const [k, v] of Object.entries(f)) filters[k as 'focus'] = re(v);
  return topText(filterProfile(profileFromFrames(text), filters));
};

const service = `
  main@main.go[/bin/app];handler@server.go[/bin/app];json.Marshal@encoding/json/encode.go[/bin/app] 30
  main@main.go[/bin/app];handler@server.go[/bin/app];log.Printf@log/log.go[/bin/app] 10
  main@main.go[/bin/app];handler@server.go[/bin/app];[/lib/libc.so.6] 5
  runtime.gcBgMarkWorker@runtime/mgc.go[/bin/app] 7
`;

describe('what an expression is matched against', () => {
  it('a function name, anywhere in it (unanchored, as Go matches)', () => {
    expect(apply(service, { focus: 'Marsh' })).toEqual(['handler 0 30', 'json.Marshal 30 30', 'main 0 30', 'total 30']);
  });

  it("a frame's source file name", () => {
    expect(apply(service, { focus: 'encode\\.go$' })).toContain('total 30');
    expect(apply(service, { focus: '^log/' })).toContain('total 10');
  });

  it("the file of the frame's mapping: every frame of that binary, with or without line information", () => {
    expect(apply(service, { focus: 'libc' })).toEqual(['[libc.so.6] 5 5', 'handler 0 5', 'main 0 5', 'total 5']);
    expect(apply(service, { focus: '^/bin/app$' })).toContain('total 52');
  });

  it("never a stand-in name: [libc.so.6] is pprof's label, not a name it matches", () => {
    expect(apply(service, { focus: '\\[libc' })).toEqual(['total 0']);
  });

  it('an empty function name or file is matched as the empty string; a missing one is not', () => {
    const p = `
      main@main.go[] 1
      main@main.go;@[/bin/x] 2
      main@;f@f.go 4
      [/bin/x] 8
    `;
    // `^$` matches the empty mapping file of the first sample, the nameless function of the
    // second, the empty file of the third; the lone location without lines has neither name nor file.
    expect(apply(p, { focus: '^$' })).toContain('total 7');
  });

  it('Go syntax: flags, Unicode classes and \\Q…\\E quoting work; JavaScript-only syntax is refused', () => {
    expect(apply(service, { focus: '(?i)JSON\\.MARSHAL' })).toContain('total 30');
    expect(apply(service, { focus: '^\\p{Ll}+\\.Printf$' })).toContain('total 10');
    expect(apply(service, { focus: '\\Qjson.Marshal\\E' })).toContain('total 30');
    expect(() => re('(?=json)')).toThrow('invalid or unsupported Perl syntax: `(?=`');
    expect(() => re('(?<!x)y')).toThrow('invalid named capture');
    expect(() => re('(a)\\1')).toThrow('invalid escape sequence: `\\1`');
    expect(() => re('a*+')).toThrow('invalid nested repetition operator: `*+`');
    expect(() => re('a{1001}')).toThrow('invalid repeat count');
  });
});

describe('focus and ignore select samples', () => {
  it('ignore wins over focus, whichever frame matches which', () => {
    expect(apply(service, { focus: 'handler', ignore: 'log\\.' })).toEqual([
      '[libc.so.6] 5 5',
      'handler 0 35',
      'json.Marshal 30 30',
      'main 0 35',
      'total 35',
    ]);
    expect(apply(service, { focus: 'json', ignore: 'json' })).toEqual(['total 0']);
  });

  it('they judge the stack as it was, before hide edits it', () => {
    expect(apply(service, { focus: 'Marshal', hide: 'Marshal' })).toEqual(['handler 30 30', 'main 0 30', 'total 30']);
  });

  it('once any filter applies, a sample without frames is dropped, as pprof drops it', () => {
    const p = profileFromFrames('main 3\n 4');
    expect(topText(p)).toContain('total 7');
    expect(topText(filterProfile(p, { hide: re('nothing-matches') }))).toEqual(['main 3 3', 'total 3']);
  });
});

describe('hide and show edit stacks', () => {
  it("hide removes matching frames: a function's flat moves to the nearest remaining caller", () => {
    expect(apply(service, { hide: '^(json|log)\\.' })).toEqual([
      '[libc.so.6] 5 5',
      'handler 40 45',
      'main 0 45',
      'runtime.gcBgMarkWorker 7 7',
      'total 52',
    ]);
  });

  it('hide by mapping removes every frame of that binary; a sample left with none is dropped', () => {
    expect(apply(service, { hide: 'libc' })).toEqual([
      'handler 5 45',
      'json.Marshal 30 30',
      'log.Printf 10 10',
      'main 0 45',
      'runtime.gcBgMarkWorker 7 7',
      'total 52',
    ]);
    expect(apply(service, { hide: '^/bin/app$' })).toEqual(['[libc.so.6] 5 5', 'total 5']);
  });

  it('show keeps matching frames only, and never a location without line information', () => {
    // runtime.gcBgMarkWorker's sample keeps no frame and goes; libc's 5 moves to main.
    expect(apply(service, { show: '^main$|json' })).toEqual(['json.Marshal 30 30', 'main 15 45', 'total 45']);
    // The libc mapping matches, but its location has no line: the frame goes, its 5 moves to handler.
    expect(apply(service, { show: '/bin/app|libc' })).toEqual([
      'handler 5 45',
      'json.Marshal 30 30',
      'log.Printf 10 10',
      'main 0 45',
      'runtime.gcBgMarkWorker 7 7',
      'total 52',
    ]);
  });

  it('hiding the middle of a recursion keeps cum counted once per sample', () => {
    expect(apply('A;B;A;B;C 1', { hide: '^B$' })).toEqual(['A 0 1', 'C 1 1', 'total 1']);
    expect(apply('A;B;A;B 1', { show: '^B$' })).toEqual(['B 1 1', 'total 1']);
  });

  it('hide and show together: show applies to what hide left', () => {
    expect(apply(service, { hide: 'handler', show: 'main|Marshal' })).toEqual([
      'json.Marshal 30 30',
      'main 15 45',
      'total 45',
    ]);
  });
});

describe('cost', () => {
  it('each expression runs once per distinct name, file and mapping, not per sample or frame', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `main@m.go[/bin/a];f${i % 10}@f.go[/bin/a];g@g.go[/bin/a] 1`);
    const p = profileFromFrames(lines.join('\n'));
    const seen: string[] = [];
    const inner = re('f3');
    const counting: GoRegexp = {
      source: 'f3',
      test: (s) => {
        seen.push(s);
        return inner.test(s);
      },
    };
    expect(topText(filterProfile(p, { focus: counting }))).toContain('total 200');
    // main, m.go, /bin/a, f0..f9, f.go, g, g.go
    expect(seen.length).toBe(16);
    expect(new Set(seen).size).toBe(seen.length);
    expect(matchFrames(p, inner).reduce((a, b) => a + b, 0)).toBe(1);
  });
});
