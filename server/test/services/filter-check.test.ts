/**
 * Filter expressions are checked off the event loop: new ones are compiled on the filter thread, and a
 * verdict once given is remembered. The answers are those of the analysis's own compiler.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { ServiceError } from '../../src/services/errors.ts';
import { FilterChecker } from '../../src/services/filter-check.ts';
import { compileFilters } from '../../src/services/view-queries.ts';
import { testApp } from '../helpers/app.ts';

const CASES = [
  { focus: 'net/http' },
  { focus: ['json', 'encode'], hide: 'runtime\\.' },
  { ignore: '(a|b|c|d|e|f|g|h)'.repeat(20).slice(0, 500) },
  { show: 'x{1,1000}' },
  { focus: '(?<=a)b' },
  { hide: 'a'.repeat(600) },
  { ignore: '[a-z]{0,40}'.repeat(40).slice(0, 512) },
];

function outcome(f: () => unknown): string {
  try {
    f();
    return 'ok';
  } catch (e) {
    if (e instanceof ServiceError) return `${e.code} ${e.detail.param}: ${e.message}`;
    throw e;
  }
}

describe('the filter checker', () => {
  it('gives the analysis compiler’s verdicts, compiled on its own thread, and remembers them', async () => {
    const checker = new FilterChecker();
    try {
      for (const q of CASES) {
        const want = outcome(() => compileFilters(q));
        let got: string;
        try {
          await checker.check(q);
          got = 'ok';
        } catch (e) {
          got = `${(e as ServiceError).code} ${(e as ServiceError).detail.param}: ${(e as ServiceError).message}`;
        }
        expect(got, JSON.stringify(q)).toBe(want);
      }
      expect(checker.counts).toEqual({ remembered: 0, onThread: CASES.length, here: 0 });
      for (const q of CASES) await checker.check(q).catch(() => undefined);
      expect(checker.counts.remembered).toBe(CASES.length);
      expect(checker.counts.onThread).toBe(CASES.length);
    } finally {
      await checker.close();
    }
  });
});

describe('GET /api/filters/check', () => {
  let app: StagediffApp;
  beforeAll(async () => {
    app = await testApp();
  });
  afterAll(async () => app.close());

  it('compiles nothing on the event loop, however many distinct expressions arrive', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        app.inject({ url: `/api/filters/check?focus=${encodeURIComponent(`pkg${i}\\.(Encode|Decode)`)}` }),
      ),
    );
    for (const r of answers) expect(r.statusCode).toBe(200);
    const bad = await app.inject({ url: '/api/filters/check?hide=(%3F%3Da)' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error.param).toBe('hide');
    expect(app.ctx.filters.counts.here).toBe(0);
    expect(app.ctx.filters.counts.onThread).toBe(41);
    expect((await app.inject({ url: '/api/filters/check?focus=pkg3%5C.(Encode|Decode)' })).statusCode).toBe(200);
    expect(app.ctx.filters.counts.remembered).toBe(1);
  });
});
