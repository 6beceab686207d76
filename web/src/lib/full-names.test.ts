import { describe, expect, it } from 'vitest';
import { fullNameTitle } from './full-names.ts';

describe('fullNameTitle', () => {
  const short = 'reflect.TypeAssert[go.shape.interface { MarshalJSON  }]';
  const full = 'reflect.TypeAssert[go.shape.interface { MarshalJSON() ([]uint8, error) }]';
  it('shows the name as written for a shortened row, the name itself otherwise', () => {
    expect(fullNameTitle(short, { [short]: [full] })).toBe(full);
    expect(fullNameTitle('main.main', { [short]: [full] })).toBe('main.main');
    expect(fullNameTitle(short, undefined)).toBe(short);
  });
  it('lists every full name pprof merged into one row, a line each', () => {
    expect(
      fullNameTitle('f[go.shape.func]', {
        'f[go.shape.func]': ['f[go.shape.func() int]', 'f[go.shape.func() string]'],
      }),
    ).toBe('f[go.shape.func() int]\nf[go.shape.func() string]');
  });

  it('takes a function named like an object property (constructor, __proto__) as a name, never the property', () => {
    const fromJson = JSON.parse('{"a[x]":["a[x int]"]}') as Record<string, string[]>;
    expect(fullNameTitle('constructor', fromJson)).toBe('constructor');
    expect(fullNameTitle('__proto__', fromJson)).toBe('__proto__');
    expect(fullNameTitle('toString', fromJson)).toBe('toString');
  });
});
