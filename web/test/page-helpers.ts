// Page steps shared by the end-to-end tests: collect page errors, screenshots, create a comparison and
// add stages with files through the home page's editor (file picker or a real drop event).
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { ARTIFACTS, buildWeb, launchBrowser, startServer, type RunningServer } from './harness.ts';

export function watchPage(page: Page, sink: string[], acceptConfirms = false) {
  page.on('dialog', (d) => {
    if (acceptConfirms && d.type() === 'confirm') return void d.accept();
    sink.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  page.on('pageerror', (e) => sink.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) sink.push(`console.error: ${m.text()}`);
  });
}

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export async function createComparison(page: Page, baseUrl: string, title: string) {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel('Title').fill(title);
  await page.getByRole('button', { name: 'Create comparison' }).click();
  await page.getByRole('heading', { name: title }).waitFor();
}

export async function addStageWithFiles(
  page: Page,
  name: string,
  note: string,
  files: string[],
  via: 'picker' | 'drop' = 'picker',
) {
  await page.getByLabel('New stage name').fill(name);
  await page.getByLabel('New stage key action').fill(note);
  await page.getByRole('button', { name: 'Add stage' }).click();
  const card = page.getByRole('region', { name: `Stage ${name}` });
  await card.waitFor();
  if (files.length === 0) return card;
  if (via === 'picker') {
    await card.getByLabel(`Add files to stage ${name}`).setInputFiles(files);
  } else {
    // A real drop event carrying File objects, as a drag from the desktop delivers them.
    const payload = files.map((f) => ({ name: basename(f), b64: readFileSync(f).toString('base64') }));
    const dataTransfer = await page.evaluateHandle((items) => {
      const dt = new DataTransfer();
      for (const it of items) dt.items.add(new File([Uint8Array.from(atob(it.b64), (c) => c.charCodeAt(0))], it.name));
      return dt;
    }, payload);
    await card.locator('.dropzone').dispatchEvent('dragover', { dataTransfer });
    await card.locator('.dropzone').dispatchEvent('drop', { dataTransfer });
  }
  await expect.poll(async () => card.locator('.upload-uploading').count(), { timeout: 60_000 }).toBe(0);
  return card;
}

/** The real server (fresh data dir, fresh web build) and Chromium, shared by a test file's tests. */
export interface E2EEnvironment {
  server: RunningServer;
  browser: Browser;
}

/** Registers beforeAll/afterAll that start and stop the server and browser when `enabled`. */
export function e2eEnvironment(enabled: boolean): E2EEnvironment {
  const env = {} as E2EEnvironment;
  beforeAll(async () => {
    if (!enabled) return;
    mkdirSync(ARTIFACTS, { recursive: true });
    env.server = await startServer(buildWeb());
    env.browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });
  return env;
}
