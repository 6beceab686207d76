// End to end in Chromium: a capture record the page cannot read (`runs: [{}]`, stored before the server
// checked records, or by a later version) once blanked the comparison page for every visitor. Written
// straight into the server's SQLite store here, it is left out; the stage table, the other stage's
// capture details and the views still render, and nothing throws.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.ts';
import { e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const recordPath = join(REPO, 'fixtures/demo/baseline/run-1/capture.json');
const enabled = existsSync(CHROMIUM) && existsSync(recordPath);
const env = e2eEnvironment(enabled);

async function api<T>(method: string, url: string, body: unknown, token?: string): Promise<T> {
  const isForm = body instanceof FormData;
  const r = await fetch(url, {
    method,
    headers: {
      ...(isForm ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: isForm ? body : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

describe.skipIf(!enabled)('a stored capture record the page cannot read', () => {
  it('is left out; the rest of the comparison page renders', async () => {
    const base = env.server.url;
    const real = JSON.parse(readFileSync(recordPath, 'utf8'));
    const c = await api<{ id: string; editToken: string }>('POST', `${base}/api/comparisons`, { title: 'bad record' });
    const stages: string[] = [];
    for (const name of ['baseline', 'broken']) {
      const s = await api<{ id: string }>('POST', `${base}/api/comparisons/${c.id}/stages`, { name }, c.editToken);
      stages.push(s.id);
      const form = new FormData();
      const wrk = join(REPO, 'fixtures/demo', name === 'baseline' ? 'baseline' : 'pooled', 'run-1/wrk.txt');
      form.append('file', new Blob([readFileSync(wrk)]), 'wrk.txt');
      await api('POST', `${base}/api/comparisons/${c.id}/stages/${s.id}/artifacts`, form, c.editToken);
    }
    await api('POST', `${base}/api/comparisons/${c.id}/stages/${stages[0]}/captures`, real, c.editToken);
    // The API refuses what follows; the store is written directly, as an old server would have kept it.
    const bad = [
      { schema: 'stagediff-capture/1', runs: [{}] },
      { ...real, runs: [{ ...real.runs[0], machine: null }] },
      { ...real, load: null },
      'not even an object',
    ];
    expect(
      (
        await fetch(`${base}/api/comparisons/${c.id}/stages/${stages[1]}/captures`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${c.editToken}` },
          body: JSON.stringify(bad[0]),
        })
      ).status,
    ).toBe(400);
    const db = new Database(join(env.server.dataDir, 'stagediff.db'));
    try {
      db.pragma('busy_timeout = 5000');
      db.prepare('UPDATE stages SET captures = ? WHERE id = ?').run(JSON.stringify(bad), stages[1]);
    } finally {
      db.close();
    }

    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await page.goto(`${base}/c/${c.id}`);
    // The stage table, both stages, the views and the good record's details are all there.
    await page.getByRole('heading', { name: 'bad record' }).waitFor();
    const table = page.locator('section[aria-labelledby="stages-h"]');
    await table.getByRole('table').first().waitFor();
    const text = (await table.textContent()) ?? '';
    expect(text).toContain('baseline');
    expect(text).toContain('broken');
    await page.getByText('How the stages were captured').click();
    const good = page.getByRole('region', { name: 'Capture of baseline' });
    expect(await good.textContent()).toContain(real.command);
    expect(await page.getByRole('region', { name: 'Capture of broken' }).count()).toBe(0);
    await page.getByRole('tablist', { name: 'Views' }).waitFor();
    expect(await page.getByRole('alert', { name: /failed$/ }).count()).toBe(0);
    await shot(page, 'bad-record-1440');
    await ctx.close();
    expect(problems).toEqual([]);
  });
});
