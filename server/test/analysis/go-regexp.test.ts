/**
 * The Go regexp engine's own limits: what it refuses beyond Go's syntax, and that refusing costs
 * nothing — a pattern whose repetitions would expand to a huge program is refused from its text,
 * before compiling it (which costs ~10 µs per instruction, on the server's main thread): the
 * compiler is never called for it.
 */
import { RE2JS } from 're2js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAX_PROGRAM_SIZE, compileGoRegexp, estimateProgramSize } from '../../src/analysis/go-regexp.ts';

const corpus = [
  String.raw`encode\.go`,
  String.raw`(?i)(json|http)\.[a-z]+$`,
  '([^/]*)*^z$',
  '(?:(?:.*){0,100}){0,10}x',
  'x{1000}'.repeat(4),
  String.raw`\pL{0,999}`.repeat(2),
  '(((a{10}){10}){10})'.repeat(3),
  '[^x]{1000}'.repeat(4),
  '(?P<n>a{100}){10}',
  String.raw`\Qa.b{1000}\E{100}`,
  `(?i)${'k'.repeat(400)}`,
  String.raw`(\w+\.?)*`.repeat(50),
  '((((((((((a*)*)*)*)*)*)*)*)*)*)*',
  '.{0,999}'.repeat(2),
  '(a|b|c|d){0,50}',
];

describe('Go regexp limits', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('estimates the program size from the text within a small factor of what compiles', () => {
    for (const p of corpus) {
      const actual = RE2JS.compile(p).programSize();
      const estimate = estimateProgramSize(p);
      expect([p, estimate / actual > 0.5 && estimate / actual < 3]).toEqual([p, true]);
    }
  });

  it('refuses, from the text alone and without compiling, 512 characters that would compile to 125k instructions', () => {
    const compile = vi.spyOn(RE2JS, 'compile');
    for (const p of [
      '.{0,999}'.repeat(64),
      String.raw`\pL{0,999}`.repeat(51),
      '(?:a|b){0,999}'.repeat(36),
      'x{1000}'.repeat(73),
      '((a{10}){10}){10}'.repeat(30),
    ]) {
      const src = p.slice(0, 512);
      expect(() => compileGoRegexp(src)).toThrow(
        new RegExp(
          String.raw`^is too complex: its repetitions expand to about \d+ instructions \(limit ${MAX_PROGRAM_SIZE}\)$`,
        ),
      );
    }
    // Compiling any of these takes 0.15-1.5 s; the estimate reads the text once.
    expect(compile).not.toHaveBeenCalled();
  });

  it('still checks the compiled size, and Go syntax errors keep Go’s message', () => {
    const compile = vi.spyOn(RE2JS, 'compile');
    expect(() => compileGoRegexp('(?:a|b)*'.repeat(64))).not.toThrow();
    // The spy sees the compiles a pattern within the estimate gets (the check above is not vacuous).
    expect(compile).toHaveBeenCalledTimes(1);
    expect(() => compileGoRegexp('a{1001}')).toThrow('error parsing regexp: invalid repeat count: `{1001}`');
    expect(() => compileGoRegexp('x'.repeat(600), { maxLength: 512 })).toThrow('is longer than 512 characters');
  });

  it('never fails on arbitrary text, however malformed', () => {
    for (const p of ['(', ')', '[', '\\', '\\Q', '\\p{', '(?P<', '(?', '{', 'a{', 'a{1,', '[[:', '[]', ')))|||{{{']) {
      expect(Number.isFinite(estimateProgramSize(p))).toBe(true);
    }
  });
});
