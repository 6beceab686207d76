// Bench (a script, not a test): the bytes a first visit to /c/demo transfers, in headless Chromium
// with an empty cache, until the page is drawn (stage table, both flamegraphs) and the network is
// idle. Counted by the DevTools protocol (encodedDataLength: bytes on the wire, headers included),
// once with the browser's own Accept-Encoding and once with `identity`, which is what every response
// cost before compression was served. Prints one JSON line at its end.
// Run: npx tsx web/test/bench-first-visit.ts
import type { Page } from 'playwright-core';
import { buildWeb, launchBrowser, startServer } from './harness.ts';

interface Visit {
  acceptEncoding: string;
  bytes: number;
  requests: number;
  byType: Record<string, number>;
  encodings: Record<string, number>;
}

async function visit(page: Page, url: string, acceptEncoding: string | null): Promise<Visit> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  if (acceptEncoding) await cdp.send('Network.setExtraHTTPHeaders', { headers: { 'Accept-Encoding': acceptEncoding } });
  const types = new Map<string, string>();
  const encodings: Record<string, number> = {};
  const byType: Record<string, number> = {};
  let bytes = 0;
  let requests = 0;
  cdp.on('Network.responseReceived', (e) => {
    types.set(e.requestId, e.type);
    const headers = Object.fromEntries(Object.entries(e.response.headers).map(([k, v]) => [k.toLowerCase(), v]));
    const enc = String(headers['content-encoding'] ?? 'none');
    encodings[enc] = (encodings[enc] ?? 0) + 1;
  });
  cdp.on('Network.loadingFinished', (e) => {
    bytes += e.encodedDataLength;
    requests++;
    const t = types.get(e.requestId) ?? 'Other';
    byType[t] = (byType[t] ?? 0) + e.encodedDataLength;
  });
  await page.goto(url);
  await page.getByRole('table', { name: 'Stage table' }).waitFor({ timeout: 60_000 });
  await page.locator('[data-flame-drawn="1"]').nth(1).waitFor({ timeout: 60_000 });
  await page.waitForLoadState('networkidle');
  await cdp.detach();
  return { acceptEncoding: acceptEncoding ?? '(browser default)', bytes, requests, byType, encodings };
}

async function main() {
  const server = await startServer(buildWeb(), { seedDemo: true });
  const browser = await launchBrowser();
  try {
    // Warm the server's result cache, so both visits are served the same way.
    const warm = await browser.newPage();
    await visit(warm, `${server.url}/c/demo`, null);
    await warm.close();
    const results: Visit[] = [];
    for (const enc of ['identity', null]) {
      const ctx = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
      results.push(await visit(await ctx.newPage(), `${server.url}/c/demo`, enc));
      await ctx.close();
    }
    const [before, after] = results as [Visit, Visit];
    for (const r of results)
      console.log(
        `${r.acceptEncoding}: ${(r.bytes / 1024).toFixed(0)} KiB in ${r.requests} requests (${Object.entries(r.byType)
          .map(([t, b]) => `${t} ${(b / 1024).toFixed(0)} KiB`)
          .join(', ')}; content-encoding ${JSON.stringify(r.encodings)})`,
      );
    console.log(JSON.stringify({ before, after, targetBytes: 350 * 1024 }));
  } finally {
    await browser.close();
    await server.stop();
  }
}

await main();
