/**
 * `stagediff capture` beside a profiler that is already taking the service's CPU profile — what a
 * continuous profiler scraping `/debug/pprof/profile` does: Go runs one CPU profile at a time and
 * net/http/pprof answers 500 "cpu profiling already in use". The capture says so, with what to do,
 * and exits non-zero. The service is a real Go program built here (net/http/pprof and one handler).
 */
import { type ChildProcess, execFile, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findGo, repoRoot } from '../helpers/paths.ts';

const go = findGo();
if (!go) console.warn('\n*** go is not installed: capture beside a busy CPU profiler is SKIPPED ***\n');
const CLI = join(repoRoot, 'server/bin/stagediff.mjs');

const SERVICE = `package main

import (
	"net/http"
	_ "net/http/pprof"
	"os"
	"strconv"
)

func main() {
	http.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		s := 0
		for i := 0; i < 200000; i++ {
			s += i % 7
		}
		w.Write([]byte(strconv.Itoa(s)))
	})
	http.ListenAndServe(os.Args[1], nil)
}
`;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

describe.skipIf(!go)('capture while another profiler holds the CPU profiler', () => {
  let work: string;
  let service: ChildProcess;
  let base: string;
  const scraper = new AbortController();

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'stagediff-busy-profiler-'));
    writeFileSync(join(work, 'go.mod'), 'module stagediff.test/busy\n\ngo 1.22\n');
    writeFileSync(join(work, 'main.go'), SERVICE);
    const b = spawnSync(go!, ['build', '-o', 'svc', '.'], { cwd: work, encoding: 'utf8' });
    if (b.status !== 0) throw new Error(`go build failed: ${b.stderr}`);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    service = spawn(join(work, 'svc'), [`127.0.0.1:${port}`], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      const ok = await fetch(`${base}/work`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The "continuous profiler": a 60 s CPU profile, started before the capture.
    fetch(`${base}/debug/pprof/profile?seconds=60`, { signal: scraper.signal }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 500));
  }, 180_000);

  afterAll(() => {
    scraper.abort();
    service?.kill();
  });

  it('names the other profiler and what to do, exits non-zero', async () => {
    const r = await new Promise<{ code: number; stderr: string }>((res) => {
      execFile(
        process.execPath,
        [
          CLI,
          'capture',
          '--pprof',
          base,
          '--stage',
          'busy',
          '--profiles',
          'cpu',
          '--warmup',
          '1',
          '--seconds',
          '1',
          '--source',
          'none',
          '--out',
          join(work, 'out'),
          '--url',
          `${base}/work`,
          '--connections',
          '2',
          '--duration',
          '4',
        ],
        { cwd: work },
        (err, _stdout, stderr) => res({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stderr }),
      );
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("the service's CPU profiler is already in use");
    expect(r.stderr).toContain('pause that profiler');
    // what to run instead: the import of the same target from the profiler
    expect(r.stderr).toContain(`stagediff import parca --url PARCA_URL --query '{instance="${new URL(base).host}"}'`);
    expect(r.stderr).not.toContain('HTTP 500');
  }, 120_000);
});
