import { describe, expect, it } from 'vitest';
import { functionOf } from './lines.ts';

describe('a line node’s function', () => {
  it('names a line node’s function', () => {
    expect(functionOf('main.appendJSONString example.com/httpserver/after.go:45', 'lines')).toBe(
      'main.appendJSONString',
    );
    expect(functionOf('main.appendJSONString', 'functions')).toBe('main.appendJSONString');
  });
});
