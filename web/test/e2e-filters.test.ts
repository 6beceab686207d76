// End-to-end: pprof's filters in the comparison page, in real Chromium against the real server. The
// server decides what a Go expression is (JavaScript's syntax is not Go's): its 400 shows at the
// field, the other panels keep working, and Go-only syntax such as (?i) filters as go tool pprof does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formatValue } from '../../server/src/api/format.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const env = e2eEnvironment(existsSync(CHROMIUM));
const cpu = (stage: string) => join(REPO, 'fixtures/demo', stage, 'run-1', 'cpu.pb.gz');

async function api<T>(method: string, path: string, body?: unknown, token?: string): Promise<T> {
  const r = await fetch(`${env.server.url}${path}`, {
    method,
    headers: {
      ...(body instanceof FormData ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body instanceof FormData ? body : body === undefined ? undefined : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

async function demoComparison(): Promise<{ id: string; baseline: string }> {
  const c = await api<{ id: string; editToken: string }>('POST', '/api/comparisons', { title: 'E2E: filters' });
  const ids: string[] = [];
  for (const stage of ['baseline', 'fast-json']) {
    const s = await api<{ id: string }>('POST', `/api/comparisons/${c.id}/stages`, { name: stage }, c.editToken);
    const form = new FormData();
    form.append('file', new Blob([readFileSync(cpu(stage))]), 'cpu.pb.gz');
    await api('POST', `/api/comparisons/${c.id}/stages/${s.id}/artifacts`, form, c.editToken);
    ids.push(s.id);
  }
  return { id: c.id, baseline: ids[0]! };
}

/** The baseline's CPU total as the panel head prints it, with the given query (filters) applied. */
async function panelTotal(id: string, stage: string, query = ''): Promise<string> {
  const top = await api<{ total: number; unit: string }>(
    'GET',
    `/api/comparisons/${id}/top?stage=${stage}&sampleType=cpu${query}`,
  );
  return `total ${formatValue(top.total, top.unit)}`;
}

describe.skipIf(!existsSync(CHROMIUM))('filters in the comparison page', () => {
  it("shows the server's message at the field it refused, and filters with Go's syntax", async () => {
    const { id, baseline } = await demoComparison();
    const whole = await panelTotal(id, baseline);
    const focused = await panelTotal(id, baseline, `&focus=${encodeURIComponent(String.raw`encode\.go`)}`);
    expect(focused).not.toBe(whole);
    for (const width of [1440, 390]) {
      const problems: string[] = [];
      const ctx = await env.browser.newContext({ viewport: { width, height: 1000 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      // Lookahead: valid JavaScript, refused by Go — and so by the server.
      await page.goto(`${env.server.url}/c/${id}?focus=${encodeURIComponent('(?=json)')}`);
      const focus = page.locator('label.field', { hasText: 'Focus' });
      await expect
        .poll(() => focus.getByRole('alert').textContent(), { timeout: 30_000 })
        .toBe(
          'focus is not a valid Go regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
        );
      // The refused expression is not sent: both flamegraphs show the whole profiles.
      await expect.poll(() => page.locator('.flame-panel .flame-graph svg').count(), { timeout: 30_000 }).toBe(2);
      await expect.poll(() => page.locator('.flame-panel .panel-head').first().textContent()).toContain(whole);
      await shot(page, `filters-refused-${width}`);

      // (?i) is Go syntax JavaScript's RegExp rejects: it filters as the plain pattern (go tool pprof -focus) does.
      await focus.locator('input').fill(String.raw`(?i)ENCODE\.GO`);
      await focus.locator('input').press('Enter');
      await expect.poll(() => focus.getByRole('alert').count()).toBe(0);
      await expect.poll(() => page.locator('.flame-panel .panel-head').first().textContent()).toContain(focused);
      expect(new URL(page.url()).searchParams.get('focus')).toBe(String.raw`(?i)ENCODE\.GO`);

      // Show is there too, and its own objection lands at its own field.
      const show = page.locator('label.field', { hasText: 'Show' });
      await show.locator('input').fill('json++');
      await show.locator('input').press('Enter');
      await expect
        .poll(() => show.getByRole('alert').textContent())
        .toBe(
          'show is not a valid Go regular expression: error parsing regexp: invalid nested repetition operator: `++`',
        );
      expect(await focus.getByRole('alert').count()).toBe(0);
      await expect.poll(() => page.locator('.flame-panel .panel-head').first().textContent()).toContain(focused);
      await shot(page, `filters-show-refused-${width}`);
      expect(problems).toEqual([]);
      await ctx.close();
    }
  }, 180_000);
});
