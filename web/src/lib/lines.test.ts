import { describe, expect, it } from 'vitest';
import { compileGoRegexp } from '../../../server/src/analysis/go-regexp.ts';
import type { DiffRow } from './api.ts';
import { functionLines, functionOf, goQuote } from './lines.ts';

const row = (name: string, deltaFlat: number): DiffRow => ({
  name,
  base: { flat: 0, cum: 0 },
  target: { flat: deltaFlat, cum: deltaFlat },
  deltaFlat,
  deltaCum: deltaFlat,
  status: 'new',
});

describe('one function’s lines out of a diff at line granularity', () => {
  it('quotes a Go function name so Go’s regexp engine matches it exactly', () => {
    const names = ['main.(*service).serveOrders', 'encoding/json.appendString[go.shape.string]', 'a|b+c$'];
    for (const n of names) {
      const re = compileGoRegexp(`^${goQuote(n)}$`);
      expect(re.test(n)).toBe(true);
      expect(re.test(`${n}x`)).toBe(false);
    }
  });

  it('names a line node’s function', () => {
    expect(functionOf('main.appendJSONString example.com/httpserver/after.go:45', 'lines')).toBe(
      'main.appendJSONString',
    );
    expect(functionOf('main.appendJSONString', 'functions')).toBe('main.appendJSONString');
  });

  it('keeps the function’s own lines, by file and line number, from go tool pprof’s -lines rows', () => {
    // Rows named as go tool pprof -lines names them.
    const rows = [
      row('main.appendJSONString example.com/httpserver/after.go:52', 10),
      row('main.appendJSONString example.com/httpserver/after.go:45', 110),
      row('main.appendJSONStringX example.com/httpserver/after.go:9', 1),
      row('main.(*afterServer).items example.com/httpserver/after.go:45', 5),
    ];
    expect(functionLines(rows, 'main.appendJSONString').map((l) => [l.file, l.line, l.row.deltaFlat])).toEqual([
      ['example.com/httpserver/after.go', 45, 110],
      ['example.com/httpserver/after.go', 52, 10],
    ]);
  });
});
