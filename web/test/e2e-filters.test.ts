// End-to-end: pprof's filters in the comparison page, in real Chromium against the real server. The
// server decides what a Go expression is (JavaScript's syntax is not Go's): its 400 shows at the
// field, the other panels keep working, and Go-only syntax such as (?i) filters as go tool pprof does.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { formatSignedValue, formatValue } from '../../server/src/api/format.ts';
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
      const focus = page.locator('label.field', { hasText: /^Focus/ });
      await expect
        .poll(() => focus.getByRole('alert').textContent(), { timeout: 30_000 })
        .toBe(
          'focus is not a valid Go regular expression: error parsing regexp: invalid or unsupported Perl syntax: `(?=`',
        );
      // The refused expression is not sent: both flamegraphs show the whole profiles.
      await expect.poll(() => page.locator('.flame-panel .flame-graph canvas').count(), { timeout: 30_000 }).toBe(2);
      await expect.poll(() => page.locator('.flame-panel .panel-head').first().textContent()).toContain(whole);
      await shot(page, `filters-refused-${width}`);

      // (?i) is Go syntax JavaScript's RegExp rejects: it filters as the plain pattern (go tool pprof -focus) does.
      await focus.locator('input').fill(String.raw`(?i)ENCODE\.GO`);
      await focus.locator('input').press('Enter');
      await expect.poll(() => focus.getByRole('alert').count()).toBe(0);
      await expect.poll(() => page.locator('.flame-panel .panel-head').first().textContent()).toContain(focused);
      expect(new URL(page.url()).searchParams.get('focus')).toBe(String.raw`(?i)ENCODE\.GO`);

      // Show is there too, and its own objection lands at its own field.
      const show = page.locator('label.field', { hasText: /^Show/ });
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

describe.skipIf(!existsSync(CHROMIUM))('rows by line, tag filters and the pprof download in the page', () => {
  it('applies granularity and tagfocus from the address, and links each stage to its pprof file', async () => {
    const c = await api<{ id: string; editToken: string }>('POST', '/api/comparisons', { title: 'E2E: labels' });
    const s = await api<{ id: string }>('POST', `/api/comparisons/${c.id}/stages`, { name: 'labelled' }, c.editToken);
    const form = new FormData();
    form.append('file', new Blob([readFileSync(join(REPO, 'fixtures/profiles/labels/cpu.pb.gz'))]), 'cpu.pb.gz');
    await api('POST', `/api/comparisons/${c.id}/stages/${s.id}/artifacts`, form, c.editToken);
    const query = `&granularity=lines&tagfocus=${encodeURIComponent('endpoint=/api/orders')}`;
    const whole = await panelTotal(c.id, s.id);
    const orders = await panelTotal(c.id, s.id, query);
    expect(orders).not.toBe(whole);

    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await page.goto(`${env.server.url}/c/${c.id}?sampleType=cpu${query}`);
    await expect
      .poll(() => page.locator('.flame-panel .panel-head').first().textContent(), { timeout: 30_000 })
      .toContain(orders);
    expect(await page.getByLabel('Rows by').inputValue()).toBe('lines');
    expect(
      await page
        .locator('label.field', { hasText: /^Tag focus/ })
        .locator('input')
        .inputValue(),
    ).toBe('endpoint=/api/orders');
    // Frames are named by function and line.
    const graph = page.locator('.flame-panel .flame-graph').first();
    await graph.locator('canvas').waitFor({ timeout: 30_000 });
    // The frames drawn, as the graph exports them: named by function and line.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page
        .locator('.flame-panel')
        .first()
        .getByRole('button', { name: /as SVG$/ })
        .click(),
    ]);
    expect(readFileSync((await download.path())!, 'utf8')).toMatch(/<title>main\.orders \S*main\.go:\d+<\/title>/);
    const link = page.locator('.flame-panel a.pprof-download').first();
    const href = await link.getAttribute('href');
    expect(href).toContain(`/stages/${s.id}/profile.pb.gz`);
    const r = await fetch(new URL(href!, env.server.url));
    expect(r.status).toBe(200);
    expect(new Uint8Array(await r.arrayBuffer())[0]).toBe(0x1f);
    await shot(page, 'rows-by-line-tagfocus');
    expect(problems).toEqual([]);
    await ctx.close();
  }, 180_000);
});

describe.skipIf(!existsSync(CHROMIUM))('the lines of a function in two stages', () => {
  it('lists each line of main.appendJSONString with its figures, as go tool pprof -diff_base -lines', async () => {
    const c = await api<{ id: string; editToken: string }>('POST', '/api/comparisons', { title: 'E2E: lines' });
    const ids: string[] = [];
    for (const v of ['before', 'after']) {
      const s = await api<{ id: string }>('POST', `/api/comparisons/${c.id}/stages`, { name: v }, c.editToken);
      const form = new FormData();
      const file = join(REPO, `fixtures/reference/pprof/go_httpserver_${v}_cpu.pb.gz`);
      form.append('file', new Blob([readFileSync(file)]), 'cpu.pb.gz');
      await api('POST', `/api/comparisons/${c.id}/stages/${s.id}/artifacts`, form, c.editToken);
      ids.push(s.id);
    }
    // go tool pprof's own rows for the function's lines (the carried -diff_base -lines answer).
    const answer = gunzipSync(
      readFileSync(
        join(REPO, 'fixtures/reference/pprof/expected/granularity/diff/go_httpserver_cpu.cpu.lines.diff_base.txt.gz'),
      ),
    )
      .toString('utf8')
      .split('\n')
      .map((l) => /^\s*(-?\d+)(?:ns)? .*%\s+main\.appendJSONString (\S+):(\d+)( \((partial-)?inline\))?$/.exec(l))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [`${m[2]}:${m[3]}`, formatSignedValue(Number(m[1]), 'nanoseconds')])
      .sort();
    expect(answer.length).toBeGreaterThan(3);

    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await page.goto(
      `${env.server.url}/c/${c.id}?tab=lines&sampleType=cpu&mode=absolute&fn=${encodeURIComponent('main.appendJSONString')}`,
    );
    const rows = page.locator('.lines-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 30_000 }).toBeGreaterThan(0);
    const shown = await rows.evaluateAll((trs) =>
      trs.map((tr) => [tr.querySelector('th')!.textContent!.trim(), tr.querySelectorAll('td')[4]!.textContent!.trim()]),
    );
    expect(shown.sort()).toEqual(answer);
    await shot(page, 'lines-appendJSONString');
    expect(problems).toEqual([]);
    await ctx.close();
  }, 180_000);
});
