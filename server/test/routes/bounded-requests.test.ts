/**
 * No request can balloon the server: a multipart upload's text fields are never held beyond their
 * bound (a field over it is a 413 naming it, too many fields a 413 naming the setting), a JSON body is
 * never read past its bound on any route, and capture records have a size limit — each while the
 * server's resident memory (its own process, as `stagediff serve` runs) grows by less than 50 MB.
 */
import { request } from 'node:http';
import { mkdtempSync, openAsBlob, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturesDir } from '../helpers/paths.ts';
import { createStory, type ServerProcess, startServerProcess } from '../helpers/server-process.ts';

const MiB = 1024 * 1024;

/**
 * Sends a body made of `chunks` (written as fast as the server reads them), samples the server's
 * resident memory meanwhile, and returns the answer with the largest growth seen.
 */
type Sent = { status: number; body: string; rssGrowth: number; rssBefore: number; rssPeak: number };

/**
 * send, once more when the server's answer was lost: a server that answers and closes with body bytes
 * still unread resets the connection, and a reset can discard the answer before the client reads it
 * (seen once in three runs of the whole suite on a loaded machine). Every try is judged the same way.
 */
async function send(
  srv: ServerProcess,
  path: string,
  headers: Record<string, string>,
  chunks: () => Generator<Buffer>,
): Promise<Sent> {
  try {
    return await sendOnce(srv, path, headers, chunks);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== 'EPIPE' && code !== 'ECONNRESET') throw e;
    return await sendOnce(srv, path, headers, chunks);
  }
}

async function sendOnce(
  srv: ServerProcess,
  path: string,
  headers: Record<string, string>,
  chunks: () => Generator<Buffer>,
): Promise<Sent> {
  const before = srv.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, srv.rss());
  }, 20);
  try {
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      let answered = false;
      const req = request(`${srv.base}${path}`, { method: 'POST', headers }, (res) => {
        answered = true;
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      });
      // The server may answer and close before the whole body is sent: that is the point. A write
      // that meets the closed socket (EPIPE, ECONNRESET) is expected then; the answer still arrives.
      req.on('error', (e) => {
        if (answered) return;
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'EPIPE' && code !== 'ECONNRESET') return reject(e);
        setTimeout(() => {
          if (!answered) reject(e);
        }, 5000);
      });
      const it = chunks();
      let sent = 0;
      const pump = () => {
        // One chunk per turn of the event loop, so an answer that arrives meanwhile is read before
        // the next write meets the closed socket.
        if (req.destroyed || answered) return;
        const n = it.next();
        if (n.done) {
          req.end();
          return;
        }
        sent++;
        // After the first chunk, a moment for a server that refuses on the headers alone to answer: its
        // answer then arrives before the bulk of the body meets the closed socket (whose reset would
        // discard the answer unread).
        const more = req.write(n.value);
        if (sent === 1) setTimeout(pump, 300);
        else if (more) setImmediate(pump);
        else req.once('drain', pump);
      };
      pump();
    });
    peak = Math.max(peak, srv.rss());
    return { status, body, rssGrowth: peak - before, rssBefore: before, rssPeak: peak };
  } finally {
    clearInterval(sampler);
  }
}

const boundary = 'stagediffBoundary7d1f';
const multipart = { 'content-type': `multipart/form-data; boundary=${boundary}` };

describe('bounded requests', () => {
  let srv: ServerProcess;
  let s: Awaited<ReturnType<typeof createStory>>;
  let uploadPath: string;
  beforeAll(async () => {
    srv = await startServerProcess({ DATA_DIR: mkdtempSync(join(tmpdir(), 'stagediff-bounded-')) });
    s = await createStory(srv.base, 'bounded', [['baseline', [join(fixturesDir, 'demo/baseline/run-1/wrk.txt')]]]);
    uploadPath = `/api/comparisons/${s.id}/stages/${s.stages[0]}/artifacts`;
  }, 60_000);
  afterAll(async () => srv?.stop());

  it('refuses a 200 MB text field with a 413 naming it, holding none of it', async () => {
    const r = await send(srv, uploadPath, { ...s.auth, ...multipart }, function* () {
      yield Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="comment"\r\n\r\n`);
      const mb = Buffer.alloc(MiB, 'a');
      for (let i = 0; i < 200; i++) yield mb;
      yield Buffer.from(`\r\n--${boundary}--\r\n`);
    });
    expect(r.status, r.body).toBe(413);
    const e = JSON.parse(r.body).error;
    expect(e.code).toBe('field-too-large');
    expect(e.param).toBe('comment');
    expect(e.message).toMatch(/"comment".*MAX_FORM_FIELD_BYTES/);
    console.log(
      `[bounded] 200 MB text field: RSS ${(r.rssBefore / MiB).toFixed(0)} MiB before, ${(r.rssPeak / MiB).toFixed(0)} MiB at most (+${(r.rssGrowth / MiB).toFixed(1)} MiB)`,
    );
    expect(r.rssGrowth).toBeLessThan(50 * MiB);
  }, 120_000);

  it('refuses 10,000 small fields with a 413 naming MAX_FORM_FIELDS', async () => {
    const r = await send(srv, uploadPath, { ...s.auth, ...multipart }, function* () {
      for (let i = 0; i < 10_000; i++)
        yield Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="f${i}"\r\n\r\n${'x'.repeat(100)}\r\n`,
        );
      yield Buffer.from(`--${boundary}--\r\n`);
    });
    expect(r.status, r.body).toBe(413);
    expect(JSON.parse(r.body).error.code).toBe('too-many-fields');
    expect(JSON.parse(r.body).error.message).toMatch(/MAX_FORM_FIELDS/);
    console.log(
      `[bounded] 10,000 small fields: RSS ${(r.rssBefore / MiB).toFixed(0)} MiB before, ${(r.rssPeak / MiB).toFixed(0)} MiB at most (+${(r.rssGrowth / MiB).toFixed(1)} MiB)`,
    );
    expect(r.rssGrowth).toBeLessThan(50 * MiB);
  }, 120_000);

  it('never reads a JSON body past its bound, on the upload route too', async () => {
    for (const [path, headers] of [
      [uploadPath, s.auth],
      ['/api/comparisons', {}],
    ] as const) {
      const r = await send(
        srv,
        path,
        { ...headers, 'content-type': 'application/json', 'content-length': String(200 * MiB) },
        function* () {
          yield Buffer.from('{"title":"');
          const mb = Buffer.alloc(MiB, 'a');
          for (let i = 0; i < 200; i++) yield mb;
          yield Buffer.from('"}');
        },
      );
      expect(r.status, `${path}: ${r.body}`).toBe(413);
      expect(JSON.parse(r.body).error.message).toMatch(/MAX_JSON_BYTES/);
      expect(r.rssGrowth).toBeLessThan(50 * MiB);
    }
    // The server is fine afterwards, and still takes a real upload.
    const form = new FormData();
    form.append('file', await openAsBlob(join(fixturesDir, 'demo/baseline/run-2/wrk.txt')), 'wrk.txt');
    const ok = await fetch(srv.base + uploadPath, { method: 'POST', headers: s.auth, body: form });
    expect(ok.status).toBe(200);
  }, 120_000);

  it('bounds a capture record, and all of a stage’s records together', async () => {
    const url = `${srv.base}/api/comparisons/${s.id}/stages/${s.stages[0]}/captures`;
    // A real record (the server checks its whole schema), its note padded to `bytes` of JSON in all.
    const real = JSON.parse(readFileSync(join(fixturesDir, 'demo/baseline/run-1/capture.json'), 'utf8'));
    const bare = JSON.stringify({ ...real, note: '' }).length;
    const record = (bytes: number) => JSON.stringify({ ...real, note: 'x'.repeat(bytes - bare) });
    const post = (body: string) =>
      fetch(url, { method: 'POST', headers: { ...s.auth, 'content-type': 'application/json' }, body });
    const tooBig = await post(record(300 * 1024));
    expect(tooBig.status).toBe(413);
    expect((await tooBig.json()).error.message).toMatch(/MAX_CAPTURE_BYTES/);
    // Records of 255 KB each: four fit the stage's 1 MiB, the fifth is refused naming the setting.
    const statuses: number[] = [];
    let last = '';
    for (let i = 0; i < 5; i++) {
      const r = await post(record(255 * 1024));
      statuses.push(r.status);
      last = await r.text();
    }
    expect(statuses).toEqual([201, 201, 201, 201, 413]);
    expect(JSON.parse(last).error.message).toMatch(/MAX_STAGE_CAPTURE_BYTES/);
  }, 60_000);
});
