// End-to-end: detail on demand in real Chromium, on the seeded demo comparison. The whole tree comes
// trimmed; a click on a frame asks the server for that frame's subtree, re-trimmed at the subtree's own
// value, so the detail the whole tree left out is drawn; the page says how much is still too small to
// draw ("x % in n frames too small to draw — zoom in"), in the server's own figures. The zoom path is in
// the link, the diff zooms the same way, and a page view of the flamegraphs starts no diff.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatShare } from '../../server/src/api/format.ts';
import type { Diff, Flamegraph } from '../src/lib/api.ts';
import { countNodes } from '../src/lib/tree.ts';
import { CHROMIUM, REPO, type RunningServer, buildWeb, launchBrowser, startServer } from './harness.ts';
import { activeFrameName, framePoint, shot, watchPage, widestPath } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM) && existsSync(join(REPO, 'fixtures/demo/manifest.json'));

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  if (!enabled) return;
  server = await startServer(buildWeb(), { seedDemo: true });
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

async function get<T>(url: string): Promise<T> {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

type Node = { name: string; children: Node[] };
function nodeAt<T extends Node>(tree: T, path: string[]): T | null {
  let n: T | undefined = tree;
  for (const name of path) {
    n = n.children.find((c) => c.name === name) as T | undefined;
    if (!n) return null;
  }
  return n;
}

/** The page's sentence for a tree's trim, from the server's figures. */
const trimWords = (r: { tree: { value: number }; trim: { prunedNodes: number; prunedValue: number } }) =>
  `${formatShare(Math.abs(r.trim.prunedValue) / Math.abs(r.tree.value))} (`;

describe.skipIf(!enabled)('zoom brings back the detail the whole tree left out', () => {
  it('a click asks for the subtree, the link keeps it, the diff zooms alike, no diff on the flamegraphs', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const problems: string[] = [];
    watchPage(page, problems);
    const api: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/')) api.push(r.url());
    });
    await page.goto(`${server.url}/c/demo`);
    await expect.poll(async () => page.locator('[data-flame-drawn="1"]').count(), { timeout: 60_000 }).toBe(2);
    const left = page.locator('.flame-panel').first();

    // The whole tree, as the page asked for it: its trim is said in the server's figures.
    const wholeUrl = api.find((u) => u.includes('/flamegraph?'))!;
    expect(wholeUrl).toBeTruthy();
    const whole = await get<Flamegraph>(wholeUrl);
    expect(whole.trim.prunedNodes).toBeGreaterThan(0);
    const note = left.locator('.trim-note');
    await expect.poll(() => note.textContent()).toContain(trimWords(whole));
    expect(await note.textContent()).toContain(
      `in ${whole.trim.prunedNodes.toLocaleString('en-US')} frames too small to draw — zoom in`,
    );

    // Hover a frame where the tree's values put it: the tooltip names it with its figures.
    const graph = left.locator('.flame-graph');
    const target = widestPath(whole.tree, (n) => n === 'main.(*service).serveOrders')!;
    expect(target).not.toBe(null);
    const at = await framePoint(graph, whole.tree, target);
    expect(at.width).toBeGreaterThan(20);
    await page.mouse.move(at.x, at.y);
    const tip = left.locator('.flame-tip');
    await expect.poll(() => tip.textContent()).toMatch(/^main\.\(\*service\)\.serveOrders\n.* of total/);
    // Click it: the page asks the server for that subtree (its whole call path).
    await page.mouse.click(at.x, at.y);
    await expect.poll(() => api.filter((u) => u.includes('/flamegraph?') && u.includes('root=')).length).toBe(2);
    const subUrl = api.find((u) => u.includes('/flamegraph?') && u.includes('root='))!;
    const path = new URL(subUrl).searchParams.getAll('root');
    expect(path).toEqual(target);
    const sub = await get<Flamegraph>(subUrl);
    // The server brought detail back: the subtree holds more frames than the whole tree kept under it.
    const kept = nodeAt(whole.tree, path);
    expect(kept).not.toBe(null);
    expect(countNodes(sub.tree)).toBeGreaterThan(countNodes(kept!));
    await expect.poll(() => new URL(page.url()).searchParams.getAll('zoom')).toEqual(path);
    const trail = left.getByRole('navigation', { name: 'Zoomed to' });
    await expect.poll(() => trail.textContent()).toContain('main.(*service).serveOrders');
    if (sub.trim.prunedNodes > 0) await expect.poll(() => note.textContent()).toContain(trimWords(sub));
    await shot(page, 'zoom-01-subtree');
    // The subtree is drawn: its top frame full width, named as the active frame of the graph.
    await expect.poll(() => activeFrameName(graph)).toMatch(/^main\.\(\*service\)\.serveOrders; /);

    // The link opens the same subtree.
    const page2 = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    watchPage(page2, problems);
    const api2: string[] = [];
    page2.on('request', (r) => {
      if (r.url().includes('/api/')) api2.push(r.url());
    });
    await page2.goto(page.url());
    await page2.getByRole('navigation', { name: 'Zoomed to' }).first().waitFor({ timeout: 60_000 });
    expect(
      api2.some(
        (u) => u.includes('/flamegraph?') && new URL(u).searchParams.getAll('root').join('\n') === path.join('\n'),
      ),
    ).toBe(true);
    // A page view of the flamegraphs asks for no diff (the diff is work for the Diff tab).
    expect(api2.filter((u) => /\/diff\?/.test(u))).toEqual([]);
    // The page names the comparison and the trees its address draws first for the browser to preload
    // (both stages' whole trees and the subtree), and the page's own requests take them: no tree is asked
    // for twice. (Not checked for the comparison: the tests build React for development, whose StrictMode
    // runs each effect twice, and the second run asks again.)
    const preloads = await page2
      .locator('link[rel="preload"][as="fetch"]')
      .evaluateAll((ls) => ls.map((l) => (l as HTMLLinkElement).href));
    const trees = preloads.filter((u) => u.includes('/flamegraph?'));
    expect(trees).toHaveLength(4);
    for (const u of trees) expect(api2.filter((x) => x === u).length, u).toBe(1);
    await page2.close();

    // The diff zooms to the same path: its subtree asked for with one hot-path row (the table is the whole diff's).
    expect(api.filter((u) => /\/diff\?/.test(u))).toEqual([]);
    await page.getByRole('tab', { name: 'Diff' }).click();
    await expect
      .poll(() => api.filter((u) => /\/diff\?/.test(u) && u.includes('root=')).length, { timeout: 60_000 })
      .toBeGreaterThan(0);
    const diffSubUrl = api.find((u) => /\/diff\?/.test(u) && u.includes('root='))!;
    expect(new URL(diffSubUrl).searchParams.getAll('root')).toEqual(path);
    expect(new URL(diffSubUrl).searchParams.get('limit')).toBe('1');
    const diffSub = await get<Diff>(diffSubUrl);
    expect(diffSub.tree.name).toBe('main.(*service).serveOrders');
    const diffPanel = page.locator('.diff-panel');
    await diffPanel.getByRole('navigation', { name: 'Zoomed to' }).waitFor({ timeout: 60_000 });
    await diffPanel.locator('[data-flame-drawn="1"]').waitFor({ timeout: 60_000 });
    if (diffSub.trim.prunedNodes > 0)
      await expect.poll(() => diffPanel.locator('.trim-note').textContent()).toContain(trimWords(diffSub));

    // "all" in the trail goes back to the whole tree.
    await diffPanel.getByRole('navigation', { name: 'Zoomed to' }).getByRole('button', { name: 'all' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.getAll('zoom')).toEqual([]);
    await expect.poll(() => diffPanel.getByRole('navigation', { name: 'Zoomed to' }).count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  }, 240_000);

  it('the keyboard: Tab into a graph, arrows move between frames, Enter zooms, Escape zooms out', async () => {
    for (const [width, height] of [
      [1440, 900],
      [390, 844],
    ] as const) {
      const page = await browser.newPage({ viewport: { width, height }, deviceScaleFactor: width < 500 ? 2 : 1 });
      const problems: string[] = [];
      watchPage(page, problems);
      const api: string[] = [];
      page.on('request', (r) => {
        if (r.url().includes('/api/')) api.push(r.url());
      });
      await page.goto(`${server.url}/c/demo`);
      await expect.poll(async () => page.locator('[data-flame-drawn="1"]').count(), { timeout: 60_000 }).toBe(2);
      const left = page.locator('.flame-panel').first();
      const graph = left.locator('.flame-graph');
      const whole = await get<Flamegraph>(api.find((u) => u.includes('/flamegraph?'))!);
      const canvasWidth = (await graph.locator('canvas').boundingBox())!.width;
      // The frames below a frame that are drawn (at least 2 px wide), left to right.
      const drawn = (n: Flamegraph['tree']) =>
        n.children.filter((c) => (Math.abs(c.value) / Math.abs(whole.tree.value)) * canvasWidth >= 2);

      // Tab from the panel's last control lands in the graph, on its top frame.
      await left.locator('a.pprof-download').last().focus();
      await page.keyboard.press('Tab');
      expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('tree');
      expect(await activeFrameName(graph)).toMatch(/^root; /);
      // Down to the first callee, right to its neighbour: each named with its figures.
      const first = drawn(whole.tree)[0]!;
      const second = drawn(whole.tree)[1]!;
      await page.keyboard.press('ArrowDown');
      expect(await activeFrameName(graph)).toMatch(new RegExp(`^${quote(first.name)}; .* of total`));
      await page.keyboard.press('ArrowRight');
      expect(await activeFrameName(graph)).toMatch(new RegExp(`^${quote(second.name)}; `));
      await page.keyboard.press('ArrowUp');
      expect(await activeFrameName(graph)).toMatch(/^root; /);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowRight');
      await shot(page, `zoom-02-keyboard-${width}`);
      // Enter zooms to the active frame: the link and the server's subtree follow.
      await page.keyboard.press('Enter');
      await expect.poll(() => new URL(page.url()).searchParams.getAll('zoom')).toEqual([second.name]);
      await expect
        .poll(() =>
          api.some((u) => u.includes('/flamegraph?') && new URL(u).searchParams.getAll('root').join() === second.name),
        )
        .toBe(true);
      await expect.poll(() => activeFrameName(graph)).toMatch(new RegExp(`^${quote(second.name)}; `));
      // Escape goes back out.
      await page.keyboard.press('Escape');
      await expect.poll(() => new URL(page.url()).searchParams.getAll('zoom')).toEqual([]);
      await expect.poll(() => activeFrameName(graph)).toMatch(/^root; /);
      expect(problems).toEqual([]);
      await page.close();
    }
  }, 240_000);

  it('search asks the server: n matches and their share, and a match the drawn tree left out opens by zooming', async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const problems: string[] = [];
    watchPage(page, problems);
    const api: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/api/')) api.push(r.url());
    });
    await page.goto(`${server.url}/c/demo`);
    await expect.poll(async () => page.locator('[data-flame-drawn="1"]').count(), { timeout: 60_000 }).toBe(2);
    const wholeUrl = new URL(api.find((u) => u.includes('/flamegraph?'))!);
    const drawn = await get<Flamegraph>(wholeUrl.href);
    // A function the drawn tree holds nowhere, though the untrimmed tree does: the heaviest such.
    const untrimmedUrl = new URL(wholeUrl);
    untrimmedUrl.searchParams.set('minFraction', '0');
    untrimmedUrl.searchParams.set('maxNodes', '500000');
    const untrimmed = await get<Flamegraph>(untrimmedUrl.href);
    const drawnNames = new Set<string>();
    const collect = (n: Flamegraph['tree']) => {
      drawnNames.add(n.name);
      for (const c of n.children) collect(c);
    };
    collect(drawn.tree);
    // The search matches without regard to case: a name spelled like another but for case (time.now and
    // time.Now) would find the other one too, so take a name that is alone in its spelling.
    const spellings = new Map<string, Set<string>>();
    const spell = (n: Flamegraph['tree']) => {
      const k = n.name.toLowerCase();
      spellings.set(k, (spellings.get(k) ?? new Set()).add(n.name));
      for (const c of n.children) spell(c);
    };
    spell(untrimmed.tree);
    const path = widestPath(untrimmed.tree, (n) => !drawnNames.has(n) && spellings.get(n.toLowerCase())!.size === 1)!;
    expect(path).not.toBe(null);
    const fn = path[path.length - 1]!;
    const term = `^${quote(fn)}$`;

    await page.getByLabel('Search').fill(term);
    const left = page.locator('.flame-panel').first();
    const matches = left.locator('.search-matches');
    await matches.waitFor({ timeout: 30_000 });
    await expect
      .poll(() => api.some((u) => u.includes('/search?') && new URL(u).searchParams.get('q') === term))
      .toBe(true);
    const searchUrl = api.find((u) => u.includes('/search?') && new URL(u).searchParams.get('q') === term)!;
    const answer = await get<{ frames: number; matched: number[]; totals: number[]; hits: { path: string[] }[] }>(
      searchUrl,
    );
    expect(answer.frames).toBeGreaterThan(0);
    expect(answer.hits[0]!.path).toEqual(path);
    await expect
      .poll(() => matches.locator('span').first().textContent())
      .toBe(
        `${answer.frames} ${answer.frames === 1 ? 'match' : 'matches'}, ${formatShare(answer.matched[0]! / answer.totals[0]!)} of total`,
      );
    // Nothing of it is drawn; its button says so, and zooms to it: the server sends its subtree.
    expect(await left.locator('.flame-graph').getAttribute('data-highlighted')).toBe('0');
    const jump = matches.getByRole('button', { name: fn }).first();
    expect(await jump.getAttribute('data-trimmed')).toBe('1');
    await shot(page, 'search-01-matches');
    await jump.click();
    await expect.poll(() => new URL(page.url()).searchParams.getAll('zoom')).toEqual(path);
    await expect
      .poll(() =>
        api.some(
          (u) => u.includes('/flamegraph?') && new URL(u).searchParams.getAll('root').join('\n') === path.join('\n'),
        ),
      )
      .toBe(true);
    const graph = left.locator('.flame-graph');
    await expect.poll(() => graph.getAttribute('data-root'), { timeout: 30_000 }).toBe(fn);
    // Drawn now, and highlighted as a match.
    await expect.poll(() => graph.getAttribute('data-highlighted')).not.toBe('0');
    await shot(page, 'search-02-zoomed');
    expect(problems).toEqual([]);
    await page.close();
  }, 240_000);
});

const quote = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
