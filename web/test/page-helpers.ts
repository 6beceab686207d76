// Page steps shared by the end-to-end tests: collect page errors, screenshots, create a comparison and
// add stages with files through the home page's editor (file picker or a real drop event).
import { mkdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { type DrawnNode, FLAME_ROW } from './flame-geometry.ts';
import { ARTIFACTS, buildWeb, launchBrowser, type RunningServer, type ServerOptions, startServer } from './harness.ts';

export { type DrawnNode, FLAME_ROW, framePoint, widestPath } from './flame-geometry.ts';

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
export function e2eEnvironment(enabled: boolean, server: ServerOptions = {}): E2EEnvironment {
  const env = {} as E2EEnvironment;
  beforeAll(async () => {
    if (!enabled) return;
    mkdirSync(ARTIFACTS, { recursive: true });
    env.server = await startServer(buildWeb(), server);
    env.browser = await launchBrowser();
  }, 180_000);
  afterAll(async () => {
    await env.browser?.close();
    await env.server?.stop();
  });
  return env;
}

/** The accessible name of the graph's active frame (the tree's aria-activedescendant). */
export async function activeFrameName(graph: Locator): Promise<string> {
  const id = await graph.getByRole('tree').getAttribute('aria-activedescendant');
  if (!id) throw new Error('the flamegraph has no active frame');
  return (await graph.locator(`[id="${id}"]`).getAttribute('aria-label')) ?? '';
}

/** The colour the canvas shows at page point (x, y), as `rgb(r, g, b)`. */
export async function canvasColorAt(graph: Locator, x: number, y: number): Promise<string> {
  return graph.locator('canvas').evaluate(
    (c, p) => {
      const canvas = c as HTMLCanvasElement;
      const box = canvas.getBoundingClientRect();
      const k = canvas.width / box.width;
      const px = canvas
        .getContext('2d')!
        .getImageData(Math.floor((p.x - box.left) * k), Math.floor((p.y - box.top) * k), 1, 1).data;
      return `rgb(${px[0]}, ${px[1]}, ${px[2]})`;
    },
    // boundingBox() and getBoundingClientRect() both measure from the viewport.
    { x, y },
  );
}

/**
 * The colour drawn at the top edge of each frame down to `maxDepth` rows below the root and at least
 * `minPx` wide, placed from the tree's values alone (as framePoint does), read from the canvas's pixels.
 */
export async function frameFills(graph: Locator, tree: DrawnNode, maxDepth: number, minPx = 4): Promise<string[]> {
  const canvas = graph.locator('canvas');
  const box = await canvas.boundingBox();
  if (!box) throw new Error('the flamegraph has no canvas');
  const total = Math.abs(tree.value);
  const points: { x: number; y: number }[] = [];
  const walk = (n: DrawnNode, left: number, depth: number) => {
    let x = left;
    for (const c of n.children) {
      const w = (Math.abs(c.value) / total) * box.width;
      if (w >= minPx && depth + 1 <= maxDepth) {
        points.push({ x: x + w / 2, y: (depth + 1) * FLAME_ROW + 1.5 });
        walk(c, x, depth + 1);
      }
      x += w;
    }
  };
  walk(tree, 0, 0);
  return canvas.evaluate((c, pts) => {
    const el = c as HTMLCanvasElement;
    const k = el.width / el.getBoundingClientRect().width;
    const ctx = el.getContext('2d')!;
    return pts.map((p) => {
      const d = ctx.getImageData(Math.floor(p.x * k), Math.floor(p.y * k), 1, 1).data;
      return `rgb(${d[0]}, ${d[1]}, ${d[2]})`;
    });
  }, points);
}

/** POSTs to the test server's API (JSON text or a form), with the edit token when given; a non-2xx throws. */
export async function apiPost<T>(baseUrl: string, path: string, body: string | FormData, token?: string): Promise<T> {
  const r = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: {
      ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body,
  });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}
