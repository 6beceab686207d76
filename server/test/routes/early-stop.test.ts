/**
 * A reader that stops early releases what it read at once: a gzip'd Go 1.21 trace (the trace reader
 * refuses its format after its first bytes) answers 422 naming the format, as quickly as the same bytes
 * plain, instead of holding an analysis worker until its deadline. Over a real socket, the server in its
 * own process as `stagediff serve` runs it.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../helpers/paths.ts';
import { createStory, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const GO121 = join(fixturesDir, 'traces', 'xsync-semaphore-go1.21.trace');

async function post(srv: ServerProcess, url: string, auth: Record<string, string>, name: string, bytes: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([bytes]), name);
  const t0 = performance.now();
  const r = await fetch(`${srv.base}${url}`, { method: 'POST', headers: auth, body: form });
  return { status: r.status, body: await r.text(), ms: performance.now() - t0 };
}

describe('a reader that stops early', () => {
  let srv: ServerProcess;
  beforeAll(async () => {
    // The deadline well above the bound asserted: a hang shows as a 503 after it, not as a slow 422.
    srv = await startServerProcess({
      DATA_DIR: mkdtempSync(join(tmpdir(), 'stagediff-early-')),
      ANALYSIS_TIMEOUT_MS: '30000',
    });
  });
  afterAll(async () => {
    await srv?.stop();
  });

  it("refuses a gzip'd Go 1.21 trace with a 422 naming the format, at once", async () => {
    const story = await createStory(srv.base, 'early stop', [['old', []]]);
    const url = `/api/comparisons/${story.id}/stages/${story.stages[0]}/artifacts`;
    const plain = readFileSync(GO121);
    // The plain bytes first: the worker is started by then (a cold start is not what is measured).
    const raw = await post(srv, url, story.auth, 'old.trace', plain);
    const gz = await post(srv, url, story.auth, 'old.trace.gz', gzipSync(plain));
    // Again: the worker that refused it is free at once, not held by a reader left waiting.
    const again = await post(srv, url, story.auth, 'again.trace.gz', gzipSync(plain, { level: 1 }));
    console.log(
      `[early stop] Go 1.21 trace refused: plain ${raw.ms.toFixed(0)} ms, gzip'd ${gz.ms.toFixed(0)} ms, again ${again.ms.toFixed(0)} ms`,
    );
    for (const r of [raw, gz, again]) {
      expect(r.status, r.body).toBe(422);
      expect(r.body).toMatch(/Go 1\.21/);
    }
    // A guard against the hang (the worker's whole 30 s deadline), not a measurement.
    expect(gz.ms).toBeLessThan(10_000);
    expect(again.ms).toBeLessThan(10_000);
  });
});
