// End to end in Chromium: how a stage was captured (`stagediff capture`'s record, attached to the stage)
// shows on the comparison page — commands, window, versions, busy-machine warning — as text, and the home
// page offers the one-line capture command to copy. Screenshots at 1440 and 390 px go to test-artifacts/.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { CaptureRecord } from '../src/lib/api.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { e2eEnvironment, shot, watchPage } from './page-helpers.ts';

const recordPath = join(REPO, 'fixtures/demo/baseline/run-1/capture.json');
const enabled = existsSync(CHROMIUM) && existsSync(recordPath);
const env = e2eEnvironment(enabled);

async function api<T>(method: string, url: string, body: unknown, token?: string): Promise<T> {
  const r = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

describe.skipIf(!enabled)('capture records in the dashboard', () => {
  it('shows how each stage was captured, warns about a busy machine, and renders hostile text as text', async () => {
    const real = JSON.parse(readFileSync(recordPath, 'utf8')) as CaptureRecord;
    const base = env.server.url;
    const c = await api<{ id: string; editToken: string }>('POST', `${base}/api/comparisons`, { title: 'captured' });
    const stage = async (name: string, record: CaptureRecord) => {
      const s = await api<{ id: string }>('POST', `${base}/api/comparisons/${c.id}/stages`, { name }, c.editToken);
      await api('POST', `${base}/api/comparisons/${c.id}/stages/${s.id}/captures`, record, c.editToken);
    };
    await stage('baseline', real);
    // A second record as a hostile or careless client could send it: markup in every text, a busy run.
    const hostile: CaptureRecord = {
      ...real,
      command: 'stagediff capture <img src=x onerror=alert(1)>',
      load: { kind: 'command', command: 'wrk <script>alert(2)</script>', tool: 'wrk', version: '<b>v</b>' },
      runs: real.runs.map((r) => ({ ...r, machine: { ...r.machine, busy: true, cpuIdlePercent: 12.5 } })),
    };
    await stage('busy <i>stage</i>', hostile);

    for (const width of [1440, 390]) {
      const problems: string[] = [];
      const ctx = await env.browser.newContext({ viewport: { width, height: 900 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      await page.addInitScript(() => {
        (window as unknown as { __xss: number }).__xss = 0;
        window.alert = () => {
          (window as unknown as { __xss: number }).__xss++;
        };
      });
      await page.goto(`${base}/c/${c.id}`);
      const warning = page.getByRole('alert', { name: 'Capture warnings' });
      await warning.waitFor();
      expect(await warning.textContent()).toContain('busy <i>stage</i> (12.5% CPU idle before a run)');
      await page.getByText('How the stages were captured').click();
      const baseline = page.getByRole('region', { name: 'Capture of baseline' });
      const text = (await baseline.textContent()) ?? '';
      if (real.load.kind === 'command') expect(text).toContain(real.load.command);
      expect(text).toContain(real.command);
      expect(text).toMatch(/window 5\.\d s, \d\d:\d\d:\d\d → \d\d:\d\d:\d\d UTC/);
      expect(text).toContain(`${real.host.cores} cores`);
      const run = real.runs[0]!;
      expect(text).toContain(`${run.machine.cpuIdlePercent}% idle before`);
      const busy = page.getByRole('region', { name: 'Capture of busy <i>stage</i>' });
      expect(await busy.textContent()).toContain('wrk <script>alert(2)</script>');
      expect(await busy.locator('.badge.warn').count()).toBe(real.runs.length);
      await baseline.scrollIntoViewIfNeeded();
      await shot(page, `capture-details-${width}`);
      const injected = await page.evaluate(() => ({
        imgs: document.querySelectorAll('img').length,
        xss: (window as unknown as { __xss: number }).__xss,
      }));
      expect(injected).toEqual({ imgs: 0, xss: 0 });
      // Nothing wider than the viewport on a phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await ctx.close();
      expect(problems).toEqual([]);
    }
  });

  it('the home page offers the capture command for this server, and copies it', async () => {
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
    const page = await ctx.newPage();
    const problems: string[] = [];
    watchPage(page, problems);
    await page.goto(`${env.server.url}/`);
    const code = page.locator('.capture-command pre code');
    const command = (await code.textContent()) ?? '';
    expect(command).toMatch(/^npx stagediff capture --pprof http:\/\/127\.0\.0\.1:6060 --stage baseline /);
    expect(command).toContain(`--server ${env.server.url} -- wrk `);
    await page.locator('.capture-command').getByRole('button', { name: 'Copy' }).click();
    await page.locator('.capture-command').getByRole('button', { name: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(command);
    await shot(page, 'capture-home-1440');
    await page.setViewportSize({ width: 390, height: 900 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await shot(page, 'capture-home-390');
    await ctx.close();
    expect(problems).toEqual([]);
  });
});
