// Bench (a script, not a test): stagediff's flamegraph and diff flamegraph against `go tool pprof -http`
// serving the same profiles, in the same headless Chromium: time from navigation to the first drawn
// flamegraph (painted), and from a click on a frame to the zoomed picture painted; interleaved runs,
// each in a fresh browser context; plus the DOM elements of each page and graph.
// Profiles: the demo comparison's CPU profiles (the stages' merged profiles, as stagediff serves them
// for pprof) and the Go compiler's merged CPU profile (fixtures/reference/pprof/large).
// Run: npx tsx web/test/bench-flame-vs-pprof.ts   (scripts/bench/sections/browser.mjs runs it)
// Prints one JSON line prefixed "RESULT " with every figure.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { type DrawnNode, FLAME_ROW, framePoint } from './flame-geometry.ts';
import { SAMPLES, buildWeb, launchBrowser, startServer } from './harness.ts';

const RUNS = Math.max(1, Number(process.env.BENCH_RUNS ?? 5));
const GO = ['/usr/local/go/bin/go', '/usr/bin/go'].find((g) => existsSync(g)) ?? 'go';
const COMPILER = `${SAMPLES}/pprof/large/go_compile_merged_cpu.pb.gz`;
const TYPES = `${SAMPLES}/pprof/large/go_types_tests_cpu.pb.gz`;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => res(port));
    });
  });
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** `go tool pprof -http` on a free port, serving `files` (with -diff_base when two). */
async function startPprof(files: string[]): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const args = ['tool', 'pprof', '-no_browser', `-http=127.0.0.1:${port}`];
  if (files.length === 2) args.push(`-diff_base=${files[0]}`, files[1] as string);
  else args.push(files[0] as string);
  const child = spawn(GO, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, PPROF_TMPDIR: tmpdir() },
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}/ui/flamegraph`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`pprof exited: ${err}`);
    try {
      const r = await fetch(url, { method: 'HEAD' });
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() > deadline) throw new Error(`pprof not up within 120 s: ${err}`);
    await new Promise((r) => setTimeout(r, 300));
  }
  return { url, child };
}

interface Side {
  url: string;
  /** stagediff: the drawn marker to wait for; pprof: null (drawn by its inline script before `load`). */
  drawn: string | null;
  /** stagediff: the request whose tree the graph draws. */
  treeRequest?: RegExp;
}

interface Run {
  firstDrawMs: number;
  clickMs: number;
  domPage: number;
  domGraph: number;
}

/** One page load and one click, timed on the page's own clock. */
async function measure(browser: Browser, side: Side): Promise<Run> {
  const step = (what: string) => process.env.BENCH_TRACE && console.error(`${side.url}: ${what}`);
  const context = await browser.newContext({ viewport: { width: 1440, height: 1000 } });
  await context.addInitScript((selector: string | null) => {
    // Painted: a frame callback, then a task (which runs after that frame's paint). (No named local
    // functions in here: tsx would wrap them in a helper the page does not have.)
    const w = window as unknown as { __drawn?: number };
    if (selector === null) {
      addEventListener(
        'load',
        () => requestAnimationFrame(() => setTimeout(() => (w.__drawn ??= performance.now()), 0)),
        { once: true },
      );
      return;
    }
    let seen = false;
    new MutationObserver(() => {
      if (!seen && document.querySelector(selector)) {
        seen = true;
        requestAnimationFrame(() => setTimeout(() => (w.__drawn ??= performance.now()), 0));
      }
    }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-flame-drawn'] });
  }, side.drawn);
  const page = await context.newPage();
  let tree: Promise<DrawnNode> | null = null;
  if (side.treeRequest) {
    const re = side.treeRequest;
    tree = page
      .waitForResponse((r) => re.test(r.url()) && !r.url().includes('root='), { timeout: 300_000 })
      .then(async (r) => ((await r.json()) as { tree: DrawnNode }).tree);
  }
  step('goto');
  await page.goto(side.url, { timeout: 300_000 });
  step('loaded');
  await page.waitForFunction(() => (window as unknown as { __drawn?: number }).__drawn !== undefined, null, {
    timeout: 300_000,
  });
  step('drawn');
  const firstDrawMs = await page.evaluate(() => (window as unknown as { __drawn: number }).__drawn);
  const dom = await page.evaluate(
    (sel) => {
      const g = document.querySelector(sel);
      return { page: document.querySelectorAll('*').length, graph: g ? g.querySelectorAll('*').length + 1 : 0 };
    },
    side.drawn ? side.drawn : '#stack-chart',
  );
  // The click: the widest frame two rows below the root.
  const point = side.drawn
    ? await stagediffFrame(page, side.drawn, await (tree as Promise<DrawnNode>))
    : await pprofFrame(page);
  await page.evaluate(() => {
    addEventListener(
      'click',
      () => {
        const t0 = performance.now();
        requestAnimationFrame(() =>
          setTimeout(() => {
            (window as unknown as { __clicked?: number }).__clicked = performance.now() - t0;
          }, 0),
        );
      },
      { capture: true, once: true },
    );
  });
  step(`click ${point.x},${point.y}`);
  await page.mouse.click(point.x, point.y);
  await page.waitForFunction(() => (window as unknown as { __clicked?: number }).__clicked !== undefined, null, {
    timeout: 120_000,
  });
  const clickMs = await page.evaluate(() => (window as unknown as { __clicked: number }).__clicked);
  // The click zoomed: stagediff draws the frame clicked full width; pprof pivots on it.
  if (side.drawn) {
    const root = await page.locator(side.drawn).first().getAttribute('data-root');
    if (root !== point.name) throw new Error(`stagediff did not zoom to ${point.name} (drawn: ${root})`);
  } else if (!new URL(page.url()).searchParams.get('p')) throw new Error('pprof did not pivot on the frame clicked');
  await context.close();
  return { firstDrawMs, clickMs, domPage: dom.page, domGraph: dom.graph };
}

async function stagediffFrame(page: Page, drawn: string, tree: DrawnNode) {
  let best: string[] = [];
  let bestValue = -1;
  for (const a of tree.children)
    for (const b of a.children)
      if (Math.abs(b.value) > bestValue) {
        bestValue = Math.abs(b.value);
        best = [a.name, b.name];
      }
  const p = await framePoint(page.locator(drawn).first(), tree, best);
  return { x: p.x, y: p.y, name: best[1] as string };
}

async function pprofFrame(page: Page) {
  const p = await page.evaluate(() => {
    const boxes = Array.from(document.querySelectorAll<HTMLElement>('#stack-chart .boxbg'));
    const tops = [...new Set(boxes.map((b) => b.getBoundingClientRect().top))].sort((a, b) => a - b);
    const row = boxes.filter((b) => b.getBoundingClientRect().top === tops[2]);
    row.sort((a, b) => b.getBoundingClientRect().width - a.getBoundingClientRect().width);
    const r = row[0]?.getBoundingClientRect();
    return r ? { x: r.left + r.width / 2, y: r.top + r.height / 2, top: r.top } : null;
  });
  if (!p) throw new Error('no pprof frame to click');
  await page.mouse.move(0, 0);
  const inView = await page.evaluate((top) => top > 0 && top < innerHeight, p.top);
  if (!inView) throw new Error('the pprof frame is out of view');
  return { x: p.x, y: p.y, name: '' };
}

async function main() {
  if (spawnSync(GO, ['version']).status !== 0) {
    console.log('SKIP go is not installed: no go tool pprof to compare with');
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'stagediff-bench-pprof-'));
  const server = await startServer(buildWeb(), { seedDemo: true });
  const browser = await launchBrowser();
  const pprofs: ChildProcess[] = [];
  try {
    // The demo: its default pair, and each stage's merged CPU profile as stagediff serves it.
    const demo = await json<{ stages: { id: string; name: string }[] }>(
      await fetch(`${server.url}/api/comparisons/demo`),
    );
    const pooled = demo.stages.find((s) => s.name === 'pooled');
    const asyncLog = demo.stages.find((s) => s.name === 'async-log');
    if (!pooled || !asyncLog) throw new Error('the demo has no pooled / async-log stages');
    const demoFile = async (id: string) => {
      const r = await fetch(`${server.url}/api/comparisons/demo/stages/${id}/profile.pb.gz?kind=cpu`);
      if (!r.ok) throw new Error(`profile of ${id}: ${r.status}`);
      const f = join(work, `${id}.pb.gz`);
      writeFileSync(f, Buffer.from(await r.arrayBuffer()));
      return f;
    };
    const demoBase = await demoFile(pooled.id);
    const demoTarget = await demoFile(asyncLog.id);

    // The compiler profile, in a comparison of its own (the types tests' profile as the diff's base).
    const created = await json<{ id: string; editToken: string }>(
      await fetch(`${server.url}/api/comparisons`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'bench: the Go compiler profile' }),
      }),
    );
    const auth = { authorization: `Bearer ${created.editToken}` };
    const ids: string[] = [];
    for (const file of [TYPES, COMPILER]) {
      const stage = await json<{ id: string }>(
        await fetch(`${server.url}/api/comparisons/${created.id}/stages`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ name: basename(file, '.pb.gz') }),
        }),
      );
      const form = new FormData();
      form.append('file', new Blob([readFileSync(file)]), basename(file));
      const up = await json<{ results: { ok: boolean }[] }>(
        await fetch(`${server.url}/api/comparisons/${created.id}/stages/${stage.id}/artifacts`, {
          method: 'POST',
          headers: auth,
          body: form,
        }),
      );
      if (!up.results.every((r) => r.ok)) throw new Error(`upload failed: ${JSON.stringify(up)}`);
      ids.push(stage.id);
    }
    const [typesId, compilerId] = ids as [string, string];

    const flame = '.flame-panel [data-flame-drawn="1"]';
    const diff = '.diff-panel [data-flame-drawn="1"]';
    const cases: { name: string; stagediff: Side; pprofFiles: string[] }[] = [
      {
        name: 'demo flamegraph',
        stagediff: {
          url: `${server.url}/c/demo?base=${pooled.id}&target=${pooled.id}&kind=cpu`,
          drawn: flame,
          treeRequest: /\/flamegraph\?/,
        },
        pprofFiles: [demoBase],
      },
      {
        name: 'demo diff',
        stagediff: {
          url: `${server.url}/c/demo?tab=diff&base=${pooled.id}&target=${asyncLog.id}&kind=cpu`,
          drawn: diff,
          treeRequest: /\/diff\?/,
        },
        pprofFiles: [demoBase, demoTarget],
      },
      {
        name: 'compiler flamegraph',
        stagediff: {
          url: `${server.url}/c/${created.id}?base=${compilerId}&target=${compilerId}`,
          drawn: flame,
          treeRequest: /\/flamegraph\?/,
        },
        pprofFiles: [COMPILER],
      },
      {
        name: 'compiler diff',
        stagediff: {
          url: `${server.url}/c/${created.id}?tab=diff&base=${typesId}&target=${compilerId}`,
          drawn: diff,
          treeRequest: /\/diff\?/,
        },
        pprofFiles: [TYPES, COMPILER],
      },
    ];
    const results = [];
    for (const c of cases) {
      const pp = await startPprof(c.pprofFiles);
      pprofs.push(pp.child);
      const pprofSide: Side = { url: pp.url, drawn: null };
      // One warm-up each (stagediff computes and caches its views; the browser JITs both pages).
      await measure(browser, c.stagediff);
      await measure(browser, pprofSide);
      const ours: Run[] = [];
      const theirs: Run[] = [];
      for (let i = 0; i < RUNS; i++) {
        // Interleaved, and the order alternates.
        if (i % 2 === 0) {
          ours.push(await measure(browser, c.stagediff));
          theirs.push(await measure(browser, pprofSide));
        } else {
          theirs.push(await measure(browser, pprofSide));
          ours.push(await measure(browser, c.stagediff));
        }
      }
      pp.child.kill('SIGTERM');
      const m = (rs: Run[], k: keyof Run) => median(rs.map((r) => r[k]));
      const row = {
        case: c.name,
        runs: RUNS,
        stagediff: {
          firstDrawMs: m(ours, 'firstDrawMs'),
          clickMs: m(ours, 'clickMs'),
          domPage: m(ours, 'domPage'),
          domGraph: m(ours, 'domGraph'),
          firstDrawAll: ours.map((r) => Math.round(r.firstDrawMs)),
          clickAll: ours.map((r) => Math.round(r.clickMs)),
        },
        pprof: {
          firstDrawMs: m(theirs, 'firstDrawMs'),
          clickMs: m(theirs, 'clickMs'),
          domPage: m(theirs, 'domPage'),
          domGraph: m(theirs, 'domGraph'),
          firstDrawAll: theirs.map((r) => Math.round(r.firstDrawMs)),
          clickAll: theirs.map((r) => Math.round(r.clickMs)),
        },
        firstDrawRatio: m(ours, 'firstDrawMs') / m(theirs, 'firstDrawMs'),
        clickRatio: m(ours, 'clickMs') / m(theirs, 'clickMs'),
      };
      console.log(
        `${c.name}: first draw ${row.stagediff.firstDrawMs.toFixed(0)} ms vs pprof ${row.pprof.firstDrawMs.toFixed(0)} ms (${row.firstDrawRatio.toFixed(2)}×); click ${row.stagediff.clickMs.toFixed(0)} ms vs ${row.pprof.clickMs.toFixed(0)} ms (${row.clickRatio.toFixed(2)}×); DOM elements: graph ${row.stagediff.domGraph} vs ${row.pprof.domGraph}, page ${row.stagediff.domPage} vs ${row.pprof.domPage}`,
      );
      results.push(row);
    }
    console.log(`RESULT ${JSON.stringify({ rows: results, frameRow: FLAME_ROW })}`);
  } finally {
    for (const p of pprofs) if (p.exitCode === null) p.kill('SIGTERM');
    await browser.close();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
