/**
 * Names and notes are anyone's text shown in pages, reports and terminals: a title or a stage name with
 * a control character (ESC, BEL, CR, LF, tab, C1) or a bidirectional override is refused with a 400 that
 * names the field; notes and descriptions may hold line feeds and tabs, nothing else of the kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { createComparison, testApp } from '../helpers/app.ts';

let app: StagediffApp;
beforeAll(async () => {
  app = await testApp();
});
afterAll(async () => {
  await app.close();
});

const HOSTILE = [
  '\u001b]0;pwned\u0007',
  'ok\r✔ all checks passed',
  'two\nlines',
  'tab\there',
  'bell\u0007',
  'c1 csi \u009b31m',
  'del\u007f',
  'rtl \u202egnp.exe',
  'isolate \u2066x\u2069',
];

describe('names and notes', () => {
  it('refuses a title, a stage name or a note with a control character or a bidi override, naming the field', async () => {
    for (const bad of HOSTILE) {
      const r = await app.inject({ method: 'POST', url: '/api/comparisons', payload: { title: bad } });
      expect(r.statusCode, JSON.stringify(bad)).toBe(400);
      expect(r.json().error.message).toMatch(/^body\/title must not contain control characters/);
      expect(r.json().error.param).toBe('title');
    }
    const c = await createComparison(app, 'fine');
    for (const bad of HOSTILE) {
      const stage = await app.inject({
        method: 'POST',
        url: `/api/comparisons/${c.id}/stages`,
        headers: c.auth,
        payload: { name: bad },
      });
      expect(stage.statusCode, JSON.stringify(bad)).toBe(400);
      expect(stage.json().error.message).toContain('body/name must not contain control characters');
      const patch = await app.inject({
        method: 'PATCH',
        url: `/api/comparisons/${c.id}`,
        headers: c.auth,
        payload: { title: bad },
      });
      expect(patch.statusCode).toBe(400);
      expect(patch.json().error.param).toBe('title');
    }
    // Notes keep their lines and tabs; ESC, CR and overrides are refused there too.
    const ok = await app.inject({
      method: 'POST',
      url: `/api/comparisons/${c.id}/stages`,
      headers: c.auth,
      payload: { name: 'pooled buffers — 2× faster (sync.Pool)', note: 'line one\n\tline two' },
    });
    expect(ok.statusCode, ok.body).toBe(201);
    const stageId = ok.json().id as string;
    for (const bad of ['\u001b[2J', 'a\rb', 'x\u202ey']) {
      const r = await app.inject({
        method: 'PATCH',
        url: `/api/comparisons/${c.id}/stages/${stageId}`,
        headers: c.auth,
        payload: { note: bad },
      });
      expect(r.statusCode).toBe(400);
      expect(r.json().error.message).toContain('body/note must not contain control characters');
      const d = await app.inject({
        method: 'PATCH',
        url: `/api/comparisons/${c.id}`,
        headers: c.auth,
        payload: { description: bad },
      });
      expect(d.statusCode).toBe(400);
      expect(d.json().error.param).toBe('description');
    }
    const got = (await app.inject({ url: `/api/comparisons/${c.id}` })).json();
    expect(got.stages.map((s: { note: string }) => s.note)).toEqual(['line one\n\tline two']);
  });
});
