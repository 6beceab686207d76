/**
 * The flamegraph and diff flamegraph as standalone images: the demo's real profiles, a profile whose
 * function names are hostile markup, well-formedness and rendering checked in real Chromium, widths
 * checked against the JSON views, PNG from resvg.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { formatValue } from '../../src/api/format.ts';
import { seedDemo } from '../../src/services/seed.ts';
import { launchBrowser } from '../../../web/test/harness.ts';
import { addStage, createComparison, testApp, upload } from '../helpers/app.ts';

const HOSTILE_TITLE = `<img src=x onerror="alert('t')"> R&D ]]> "quoted"`;
const HOSTILE_FRAMES = [
  '<script>alert(1)</script>',
  '" onmouseover="alert(2)',
  ']]><!-- &amp &#x3C',
  'ctl\u0001char\u001b[31m',
  "<svg onload=alert('x')>",
];

/** The little of the DOM the page-side code uses (the server's TypeScript has no DOM library). */
interface El {
  nodeName: string;
  textContent: string | null;
  getAttribute(n: string): string | null;
  getAttributeNames(): string[];
  querySelector(q: string): El | null;
  querySelectorAll(q: string): Iterable<El>;
}
interface Page$ {
  DOMParser: new () => { parseFromString(s: string, type: string): El & { documentElement: El } };
  document: El & {
    getElementById(id: string): (El & { decode(): Promise<void>; naturalWidth: number; naturalHeight: number }) | null;
  };
}

let app: StagediffApp;
let browser: Browser;
let page: Page;
let base: string;
let hostile: { id: string; stage: string };
const stages: Record<string, string> = {};

/** The SVG parsed by Chromium: parse errors, texts, titles, rects (attributes as given). */
async function inspect(svg: string) {
  return page.evaluate((text) => {
    const { DOMParser } = globalThis as unknown as Page$;
    const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
    const error = doc.querySelector('parsererror')?.textContent ?? null;
    const frames = [...doc.querySelectorAll('g')].map((g) => ({
      title: g.querySelector('title')?.textContent ?? '',
      label: g.querySelector('text')?.textContent ?? null,
      width: Number(g.querySelector('rect')?.getAttribute('width')),
      fill: g.querySelector('rect')?.getAttribute('fill') ?? '',
    }));
    return {
      error,
      root: doc.documentElement.nodeName,
      title: doc.querySelector('svg > title')?.textContent ?? '',
      texts: [...doc.querySelectorAll('text')].map((t) => t.textContent ?? ''),
      elements: [...new Set([...doc.querySelectorAll('*')].map((e) => e.nodeName))].sort(),
      handlers: [...doc.querySelectorAll('*')].flatMap((e) => e.getAttributeNames().filter((n) => n.startsWith('on'))),
      frames,
    };
  }, svg);
}

/** Loads the image by URL in an <img> (no script runs in it) and returns its natural size. */
async function renderedSize(url: string) {
  await page.goto(`${base}/healthz`);
  await page.setContent(`<img id="i" src="${url}">`);
  return page.evaluate(async () => {
    const img = (globalThis as unknown as Page$).document.getElementById('i')!;
    await img.decode();
    return { w: img.naturalWidth, h: img.naturalHeight };
  });
}

beforeAll(async () => {
  app = await testApp();
  await seedDemo(app.ctx);
  const demo = (await app.inject({ url: '/api/comparisons/demo' })).json() as {
    stages: { id: string; name: string }[];
  };
  for (const s of demo.stages) stages[s.name] = s.id;

  const c = await createComparison(app, HOSTILE_TITLE);
  const dir = mkdtempSync(join(tmpdir(), 'stagediff-hostile-'));
  const file = join(dir, 'hostile.folded');
  writeFileSync(file, HOSTILE_FRAMES.map((f, i) => `main;handler;${f} ${(HOSTILE_FRAMES.length - i) * 10}`).join('\n'));
  const stage = await addStage(app, c.id, c.auth, '<b>stage</b>');
  const r = await upload(app, c.id, stage, c.auth, [file]);
  expect(r.statusCode, r.body).toBe(200);
  hostile = { id: c.id, stage };

  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  browser = await launchBrowser();
  page = await browser.newPage();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
});

describe('GET /api/comparisons/:id/flamegraph.svg', () => {
  it('draws the demo stage with the widths of the JSON view, well-formed and rendered by Chromium', async () => {
    const q = `stage=${stages.baseline}&sampleType=cpu`;
    const r = await app.inject({ url: `/api/comparisons/demo/flamegraph.svg?${q}` });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
    // Opened on its own, the image may run nothing and load nothing.
    expect(r.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'");
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    const svg = await inspect(r.body);
    expect(svg.error).toBeNull();
    expect(svg.root).toBe('svg');
    expect(svg.title).toBe('Demo: Go service optimization — baseline');

    // The widths are the JSON tree's values on the drawing's scale (1200 px − 2 × 10 px of margin).
    const json = (await app.inject({ url: `/api/comparisons/demo/flamegraph?${q}` })).json() as {
      total: number;
      tree: { value: number; children: { name: string; value: number }[] };
    };
    const root = svg.frames[0]!;
    expect(root.width).toBeCloseTo(1180, 1);
    expect(root.title).toContain('all');
    const wide = json.tree.children.filter((c) => (c.value / json.tree.value) * 1180 >= 0.75);
    for (const c of wide) {
      const f = svg.frames.find((x) => x.title.startsWith(`${c.name}\n`));
      expect(f, c.name).toBeDefined();
      expect(f!.width).toBeCloseTo((c.value / json.tree.value) * 1180, 1);
    }
    // A frame too narrow for its name shows a cut label ending in "…", the full name stays in the title.
    expect(svg.frames.some((f) => f.label?.endsWith('…') && f.title.startsWith(f.label.slice(0, -1)))).toBe(true);

    const size = await renderedSize(`${base}/api/comparisons/demo/flamegraph.svg?${q}`);
    expect(size.w).toBe(1200);
    expect(size.h).toBeGreaterThan(200);
    // A second request is served from the cache, byte for byte.
    expect((await app.inject({ url: `/api/comparisons/demo/flamegraph.svg?${q}` })).body).toBe(r.body);
  });

  it('carries hostile function names, stage names and titles as text, never as markup', async () => {
    const url = `/api/comparisons/${hostile.id}/flamegraph.svg?stage=${hostile.stage}`;
    const r = await app.inject({ url });
    expect(r.statusCode, r.body).toBe(200);
    const svg = await inspect(r.body);
    expect(svg.error).toBeNull();
    expect(svg.elements).toEqual(['g', 'rect', 'svg', 'text', 'title']);
    expect(svg.handlers).toEqual([]);
    expect(svg.title).toBe(`${HOSTILE_TITLE} — <b>stage</b>`);
    for (const name of HOSTILE_FRAMES) {
      // Characters XML cannot carry (here \u0001 and ESC) become U+FFFD; everything else arrives as written.
      const shown = name.replace('\u0001', '\uFFFD').replace('\u001b', '\uFFFD');
      expect(
        svg.frames.some((f) => f.title.startsWith(`${shown}\n`)),
        shown,
      ).toBe(true);
    }
    expect(svg.texts).toContain('<script>alert(1)</script>');

    // Opened as a document of its own (where an SVG could run script), nothing runs.
    const dialogs: string[] = [];
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await page.goto(`${base}${url}`);
    const texts = await page.evaluate(
      () => [...(globalThis as unknown as Page$).document.querySelectorAll('text')].length,
    );
    expect(texts).toBeGreaterThan(5);
    expect(dialogs).toEqual([]);
  });

  it("takes the views' filters: the image of a focused view holds only the focused stacks", async () => {
    const q = `stage=${stages.baseline}&sampleType=cpu&focus=${encodeURIComponent('^encoding/json\\.')}`;
    const r = await app.inject({ url: `/api/comparisons/demo/flamegraph.svg?${q}` });
    expect(r.statusCode, r.body).toBe(200);
    const svg = await inspect(r.body);
    expect(svg.texts[1]).toMatch(/ · focus=\^encoding\/json\\\.$/);
    // The root's width is the focused total, as the JSON view of the same parameters gives it (images are
    // drawn as recorded: the JSON view asked for the same unit).
    const json = (await app.inject({ url: `/api/comparisons/demo/flamegraph?${q}&mode=absolute` })).json() as {
      total: number;
    };
    expect(svg.frames[0]!.title).toContain(formatValue(json.total, 'nanoseconds'));
    expect(svg.frames.some((f) => f.title.startsWith('encoding/json.'))).toBe(true);
    expect(svg.frames.some((f) => f.title.startsWith('net.(*sysDialer)'))).toBe(false);
  });

  it('refuses bad parameters with a 4xx naming them', async () => {
    const big = await app.inject({ url: `/api/comparisons/demo/flamegraph.svg?stage=${stages.baseline}&width=100000` });
    expect(big.statusCode).toBe(400);
    expect(big.json().error.message).toMatch(/width/);
    const noStage = await app.inject({ url: '/api/comparisons/demo/flamegraph.svg?stage=nope' });
    expect(noStage.statusCode).toBe(404);
    const badRe = await app.inject({ url: `/api/comparisons/demo/flamegraph.svg?stage=${stages.baseline}&focus=(` });
    expect(badRe.statusCode).toBe(400);
  });
});

describe('GET /api/comparisons/:id/diff.svg', () => {
  it('colours what the target lost blue and what it gained red, with the JSON diff figures', async () => {
    const q = `base=${stages.baseline}&target=${stages['fast-json']}&sampleType=cpu&mode=share`;
    const r = await app.inject({ url: `/api/comparisons/demo/diff.svg?${q}` });
    expect(r.statusCode, r.body).toBe(200);
    const svg = await inspect(r.body);
    expect(svg.error).toBeNull();
    expect(svg.title).toBe('Demo: Go service optimization — baseline → fast-json');
    // fast-json replaced encoding/json: its frames are gone from the target (blue, saturated).
    const gone = svg.frames.filter((f) => f.title.startsWith('encoding/json.(*Encoder).Encode\n'));
    expect(gone.length).toBeGreaterThan(0);
    for (const f of gone) {
      expect(f.fill).toBe('rgb(31,100,200)');
      expect(f.title).toMatch(/→ target 0 %, Δ −/);
    }
    // The new encoder's frames exist only in the target: saturated red.
    const json = (await app.inject({ url: `/api/comparisons/demo/diff?${q}` })).json() as {
      top: { name: string; status: string; deltaCum: number }[];
    };
    const added = json.top.find((t) => t.status === 'new' && t.deltaCum > 0.01)!;
    expect(added).toBeDefined();
    const shown = svg.frames.filter((f) => f.title.startsWith(`${added.name}\n`));
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.every((f) => f.fill === 'rgb(214,39,40)')).toBe(true);
    const size = await renderedSize(`${base}/api/comparisons/demo/diff.svg?${q}&width=800`);
    expect(size.w).toBe(800);
  });
});

describe('PNG', () => {
  it('rasterises both images without a browser, at the asked width (on 100 px steps)', async () => {
    for (const path of [
      `flamegraph.png?stage=${stages.pooled}`,
      `diff.png?base=${stages.pooled}&target=${stages['async-log']}&width=640`,
    ]) {
      const r = await app.inject({ url: `/api/comparisons/demo/${path}` });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.headers['content-type']).toBe('image/png');
      const png = r.rawPayload;
      expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      // IHDR width: 640 falls on the 600 px step (one image per step, whatever width is asked).
      expect(png.readUInt32BE(16)).toBe(path.includes('width=640') ? 600 : 1200);
      const size = await renderedSize(`${base}/api/comparisons/demo/${path}`);
      expect(size.w).toBe(png.readUInt32BE(16));
    }
  });
});
