// End-to-end: a function's source in two stages side by side, in real Chromium against the real
// server. Each stage carries its own version of the program (fixtures/line-view), uploaded as a
// tar.gz; the page aligns them, shows each line's figures as go tool pprof -list gives them, and
// renders source text as text, markup included.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { formatValue } from '../../server/src/api/format.ts';
import { encodePprof } from '../../server/test/helpers/pprof-encode.ts';
import { CHROMIUM, REPO } from './harness.ts';
import { addStageWithFiles, createComparison, e2eEnvironment, shot, watchPage } from './page-helpers.ts';

// The module proxy on: a file:// proxy of real module zips (fixtures/goproxy), for a standard-library function.
const env = e2eEnvironment(existsSync(CHROMIUM), {
  env: {
    SOURCE_GOPROXY: pathToFileURL(join(REPO, 'fixtures/goproxy/proxy')).href,
    SOURCE_GO_VERSION: 'go1.26.8',
    // A loaded machine may take more than the default 3 s wait for a fetch: these tests are about the text.
    SOURCE_GOPROXY_WAIT_MS: '60000',
  },
});
const lineView = join(REPO, 'fixtures/line-view');
const HOSTILE = '// <script>window.__pwned=1</script><img src=x onerror="window.__pwned=2">';

async function api<T>(method: string, path: string, body?: unknown, token?: string, type?: string): Promise<T> {
  const r = await fetch(`${env.server.url}${path}`, {
    method,
    headers: {
      ...(type ? { 'content-type': type } : body instanceof FormData ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body:
      body instanceof FormData
        ? body
        : body instanceof Uint8Array
          ? new Blob([body as Uint8Array<ArrayBuffer>])
          : body === undefined
            ? undefined
            : JSON.stringify(body),
  });
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}

/** A tar.gz of a version's go.mod and main.go; `edit` may change main.go's text line for line. */
function sourceArchive(v: string, edit: (text: string) => string = (t) => t): Uint8Array {
  const dir = mkdtempSync(join(tmpdir(), 'stagediff-e2e-source-'));
  writeFileSync(join(dir, 'go.mod'), readFileSync(join(lineView, v, 'go.mod')));
  writeFileSync(join(dir, 'main.go'), edit(readFileSync(join(lineView, v, 'main.go'), 'utf8')));
  execFileSync('tar', ['-czf', join(dir, 'src.tar.gz'), '-C', dir, 'go.mod', 'main.go']);
  return new Uint8Array(readFileSync(join(dir, 'src.tar.gz')));
}

/** go tool pprof -list's figures for a line (ns; "." is 0). */
function listed(v: string, fn: string, line: number): { flat: number; cum: number } {
  for (const l of readFileSync(join(lineView, v, `list-${fn}.txt`), 'utf8').split('\n')) {
    const m = /^\s*(\S+)\s+(\S+)\s+(\d+):/.exec(l);
    if (m && Number(m[3]) === line) {
      const n = (s: string) => (s === '.' ? 0 : Number(s.replace(/ns$/, '')));
      return { flat: n(m[1]!), cum: n(m[2]!) };
    }
  }
  throw new Error(`line ${line} not listed`);
}

describe.skipIf(!existsSync(CHROMIUM))('a function in two versions, side by side', () => {
  it("aligns both versions of main.appendJSONString with each line's figures, highlighted, text as text", async () => {
    const c = await api<{ id: string; editToken: string }>('POST', '/api/comparisons', { title: 'E2E: source' });
    const ids: string[] = [];
    for (const v of ['v1', 'v2']) {
      const s = await api<{ id: string }>('POST', `/api/comparisons/${c.id}/stages`, { name: v }, c.editToken);
      const form = new FormData();
      form.append('file', new Blob([readFileSync(join(lineView, v, 'cpu.pb.gz'))]), 'cpu.pb.gz');
      await api('POST', `/api/comparisons/${c.id}/stages/${s.id}/artifacts`, form, c.editToken);
      // v2's sources carry hostile text on a line of its own (same line count, so figures stay put).
      const archive = sourceArchive(v, (t) =>
        v === 'v2' ? t.replace('\t_ = utf8.RuneError', `\t_ = utf8.RuneError ${HOSTILE}`) : t,
      );
      await api(
        'PUT',
        `/api/comparisons/${c.id}/stages/${s.id}/sources?filename=${v}.tar.gz`,
        archive,
        c.editToken,
        'application/octet-stream',
      );
      ids.push(s.id);
    }
    const problems: string[] = [];
    for (const width of [1440, 390]) {
      const ctx = await env.browser.newContext({ viewport: { width, height: 1000 } });
      const page = await ctx.newPage();
      watchPage(page, problems);
      // A function picked in another view (here the diff, through the address) opens its lines in one click.
      await page.goto(
        `${env.server.url}/c/${c.id}?tab=diff&base=${ids[0]}&target=${ids[1]}&sampleType=cpu&mode=absolute&fn=${encodeURIComponent('main.appendJSONString')}`,
      );
      await page.getByRole('button', { name: 'its source lines' }).click();
      const rows = page.locator('.source-table tbody tr');
      await expect.poll(() => rows.count(), { timeout: 60_000 }).toBeGreaterThan(10);
      // The signature moved from line 18 to 23: one row holds both.
      const sig = page.locator('.source-table tr[data-base-line="18"][data-target-line="23"]');
      expect(await sig.count()).toBe(1);
      expect((await sig.locator('td.src-text').first().textContent())?.startsWith('func appendJSONString')).toBe(true);
      // A removed line keeps its old cost: v1's line 27, as -list gives it; an added line shows its new
      // one: v2's line 35. Side by side, in the line's own row; stacked (a phone), on the line under it.
      const removedCum = formatValue(listed('v1', 'appendJSONString', 27).cum, 'nanoseconds');
      const addedCum = formatValue(listed('v2', 'appendJSONString', 35).cum, 'nanoseconds');
      expect(await page.locator('.source-table').getAttribute('data-layout')).toBe(
        width === 1440 ? 'side-by-side' : 'stacked',
      );
      if (width === 1440) {
        const removed = page.locator('.source-table tr.src-removed[data-base-line="27"] td');
        expect(await removed.nth(2).textContent()).toBe(removedCum);
        const added = page.locator('.source-table tr.src-added[data-target-line="35"] td');
        // (after the base side's one gap cell: number, flat, cum)
        expect(await added.nth(3).textContent()).toBe(addedCum);
      } else {
        const removed = page.locator('.source-table tr.src-removed[data-base-line="27"] + tr.src-figures');
        expect(await removed.textContent()).toContain(`v1: cum ${removedCum}`);
        const added = page.locator('.source-table tr.src-added[data-target-line="35"] + tr.src-figures');
        expect(await added.textContent()).toContain(`v2: cum ${addedCum}`);
      }
      // Highlighted by tokens; hostile text is text: shown verbatim, never run, no element made of it.
      expect(await page.locator('.source-table .tok-keyword').count()).toBeGreaterThan(5);
      const hostile = page.locator('.source-table tr[data-target-line="38"] td.src-text').last();
      expect(await hostile.textContent()).toContain(HOSTILE);
      expect(await page.locator('.source-table script, .source-table img').count()).toBe(0);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      await shot(page, `source-side-by-side-${width}`);
      await ctx.close();
    }
    expect(problems).toEqual([]);
  }, 240_000);

  it("shows a standard-library function's lines from the module proxy, saying so for each stage", async () => {
    const c = await api<{ id: string; editToken: string }>('POST', '/api/comparisons', { title: 'E2E: proxy' });
    const ids: string[] = [];
    for (const [name, file] of [
      ['as-built', 'cpu.pb.gz'],
      ['trimpath', 'cpu-trimpath.pb.gz'],
    ]) {
      const s = await api<{ id: string }>('POST', `/api/comparisons/${c.id}/stages`, { name }, c.editToken);
      const form = new FormData();
      form.append('file', new Blob([readFileSync(join(REPO, 'fixtures/goproxy', file!))]), file!);
      await api('POST', `/api/comparisons/${c.id}/stages/${s.id}/artifacts`, form, c.editToken);
      ids.push(s.id);
    }
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    await page.goto(
      `${env.server.url}/c/${c.id}?tab=diff&base=${ids[0]}&target=${ids[1]}&sampleType=cpu&mode=absolute&fn=${encodeURIComponent('fmt.(*pp).doPrintf')}`,
    );
    await page.getByRole('button', { name: 'its source lines' }).click();
    const rows = page.locator('.source-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 60_000 }).toBeGreaterThan(10);
    const signature = page.locator('.source-table td.src-text', {
      hasText: 'func (p *pp) doPrintf(format string, a []any)',
    });
    expect(await signature.count()).toBe(2);
    const origins = page.locator('.source-origins li[data-text-from="proxy"]');
    expect(await origins.count()).toBe(2);
    for (const text of await origins.allTextContents()) {
      expect(text).toContain('src/fmt/print.go from the standard library of go1.26.8');
      expect(text).toContain('SOURCE_GO_VERSION');
      expect(text).toContain('golang.org/toolchain@v0.0.1-go1.26.8.linux-amd64 on the module proxy');
    }
    await shot(page, 'source-from-module-proxy');
    await ctx.close();
    expect(problems).toEqual([]);
  }, 240_000);

  it('opens the link to a million-line view: a bounded table with its gap row, and the page still answers a click', async () => {
    // The hostile view: a profile of a few hundred bytes naming lines 1, 2 and 1,000,000 of main.hot,
    // and a source archive of a few KB whose main.go has a million lines, line 2 of them 900 KB long.
    const profile = encodePprof({
      sampleTypes: [
        ['samples', 'count'],
        ['cpu', 'nanoseconds'],
      ],
      locations: [1, 2, 1_000_000].map((line) => ({ lines: [{ fn: 'main.hot', file: '/build/app/main.go', line }] })),
      samples: [0, 1, 2].map((i) => ({ stack: [i], values: [1, 10_000_000] })),
    });
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-e2e-million-'));
    writeFileSync(join(dir, 'go.mod'), 'module example.com/app\n\ngo 1.26\n');
    writeFileSync(join(dir, 'main.go'), `package main\nvar long = "${'x'.repeat(900_000)}"\n${'\n'.repeat(999_998)}`);
    execFileSync('tar', ['-czf', join(dir, 'src.tar.gz'), '-C', dir, 'go.mod', 'main.go']);
    const archive = new Uint8Array(readFileSync(join(dir, 'src.tar.gz')));
    const c = await api<{ id: string; editToken: string }>('POST', '/api/comparisons', {
      title: 'E2E: a million lines',
    });
    const ids: string[] = [];
    for (const name of ['v1', 'v2']) {
      const s = await api<{ id: string }>('POST', `/api/comparisons/${c.id}/stages`, { name }, c.editToken);
      const form = new FormData();
      form.append('file', new Blob([profile as Uint8Array<ArrayBuffer>]), 'cpu.pb');
      await api('POST', `/api/comparisons/${c.id}/stages/${s.id}/artifacts`, form, c.editToken);
      await api(
        'PUT',
        `/api/comparisons/${c.id}/stages/${s.id}/sources?filename=src.tar.gz`,
        archive,
        c.editToken,
        'application/octet-stream',
      );
      ids.push(s.id);
    }
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    watchPage(page, problems);
    // The link alone opens the view (the Lines tab, the function named in the address).
    await page.goto(
      `${env.server.url}/c/${c.id}?tab=lines&base=${ids[0]}&target=${ids[1]}&sampleType=cpu&mode=absolute&fn=main.hot`,
    );
    const rows = page.locator('.source-table tbody tr');
    await expect.poll(() => rows.count(), { timeout: 60_000 }).toBeGreaterThan(5);
    // Lines 1–5 and 999,997–1,000,000, and one row for the 999,991 lines between: not a million rows.
    expect(await rows.count()).toBe(10);
    const gap = page.locator('.source-table tr.src-elided');
    expect(await gap.count()).toBe(1);
    expect(await gap.textContent()).toBe('… 999,991 lines …');
    expect(await page.locator('.source-table tr[data-base-line="1000000"]').count()).toBe(1);
    // The 900 KB line arrives cut (400 characters and a marker), not whole.
    const long = page.locator('.source-table tr[data-base-line="2"] td.src-text').first();
    expect(((await long.textContent()) ?? '').length).toBeLessThan(1000);
    expect(await long.locator('.src-clipped').count()).toBe(1);
    await shot(page, 'source-million-lines');
    // The page answers: another tab opens on a click.
    await page.getByRole('tab', { name: 'Diff' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('tab'), { timeout: 30_000 }).toBe('diff');
    await ctx.close();
    expect(problems).toEqual([]);
  }, 240_000);

  it("takes a source archive from the stage editor, and shows a refused one's reason naming the entry", async () => {
    const problems: string[] = [];
    const ctx = await env.browser.newContext({ viewport: { width: 1440, height: 1000 } });
    const page = await ctx.newPage();
    // The refused archive is answered with a 400 the page reports: that console line is expected.
    watchPage(page, problems, true);
    await createComparison(page, env.server.url, 'E2E: source upload');
    const card = await addStageWithFiles(page, 'v1', 'fmt and +=', [join(lineView, 'v1', 'cpu.pb.gz')]);
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-e2e-upload-'));
    const good = join(dir, 'v1-src.tar.gz');
    writeFileSync(good, sourceArchive('v1'));
    await card.getByLabel('Add a source archive to stage v1').setInputFiles(good);
    await expect
      .poll(async () => (await card.locator('.stage-sources').textContent()) ?? '', { timeout: 30_000 })
      .toBe('Sources: 2 files of example.com/linedemo from v1-src.tar.gz');
    // GNU tar keeps a climbing path with --absolute-names: refused, and the stage keeps what it had.
    writeFileSync(join(dir, 'evil.go'), 'package evil\n');
    const inner = join(dir, 'inner');
    execFileSync('mkdir', ['-p', inner]);
    const evil = join(dir, 'evil.tar.gz');
    execFileSync('tar', ['-czf', evil, '--absolute-names', '-C', inner, '../evil.go']);
    await card.getByLabel('Add a source archive to stage v1').setInputFiles(evil);
    await expect
      .poll(
        () =>
          page
            .getByText('source archive evil.tar.gz, entry "../evil.go": has a ".." path segment', { exact: false })
            .count(),
        {
          timeout: 30_000,
        },
      )
      .toBeGreaterThan(0);
    expect(await card.locator('.stage-sources').textContent()).toBe(
      'Sources: 2 files of example.com/linedemo from v1-src.tar.gz',
    );
    await shot(page, 'source-upload-refused');
    expect(problems.filter((p) => !/400/.test(p))).toEqual([]);
    await ctx.close();
  }, 180_000);
});
