/**
 * The API over a real socket, as a browser or curl reaches it: a real HTTP server on 127.0.0.1,
 * multipart uploads with fetch/FormData, the share link read without a token, and the CLI's
 * `upload` command against it.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { openAsBlob, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { testApp } from '../helpers/app.ts';
import { repoRoot, samplePath } from '../helpers/paths.ts';

let app: StagediffApp;
let base: string;

beforeAll(async () => {
  app = await testApp();
  base = await app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => app.close());

describe('over a real socket', () => {
  it('create, upload several files at once, read the story without the token', async () => {
    const c = await (
      await fetch(`${base}/api/comparisons`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'socket' }),
      })
    ).json();
    const auth = { authorization: `Bearer ${c.editToken}` };
    const st = await (
      await fetch(`${base}/api/comparisons/${c.id}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name: 'baseline' }),
      })
    ).json();
    const form = new FormData();
    form.append('file', await openAsBlob(samplePath('pprof/go_httpserver_before_cpu.pb.gz')), 'cpu.pb.gz');
    form.append('file', await openAsBlob(samplePath('loadtests/wrk/baseline-latency.txt')), 'wrk.txt');
    const up = await fetch(`${base}/api/comparisons/${c.id}/stages/${st.id}/artifacts`, {
      method: 'POST',
      headers: auth,
      body: form,
    });
    expect(up.status).toBe(200);
    expect((await up.json()).results.map((r: { ok: boolean }) => r.ok)).toEqual([true, true]);
    const view = await (await fetch(`${base}/api/comparisons/${c.id}`)).json();
    const table = await (await fetch(`${base}/api/comparisons/${c.id}/stage-table`)).json();
    expect(table.rows[0].figures.rps.median).toBe(8589.52);
    const raw = await fetch(`${base}/api/artifacts/${view.stages[0].artifacts[0].id}/raw`);
    expect(
      Buffer.compare(
        Buffer.from(await raw.arrayBuffer()),
        readFileSync(samplePath('pprof/go_httpserver_before_cpu.pb.gz')),
      ),
    ).toBe(0);
    const denied = await fetch(`${base}/api/comparisons/${c.id}`, { method: 'DELETE' });
    expect(denied.status).toBe(401);
    expect((await denied.json()).error.message).toMatch(/edit token/);
  });

  it('a raw octet-stream upload, as curl --data-binary sends it', async () => {
    const c = await (
      await fetch(`${base}/api/comparisons`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ title: 'curl' }),
      })
    ).json();
    const auth = { authorization: `Bearer ${c.editToken}` };
    const st = await (
      await fetch(`${base}/api/comparisons/${c.id}/stages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ name: 's' }),
      })
    ).json();
    const r = await fetch(`${base}/api/comparisons/${c.id}/stages/${st.id}/artifacts?filename=heap.pb.gz`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: readFileSync(samplePath('pprof/go_httpserver_before_heap.pb.gz')),
    });
    expect(r.status).toBe(200);
    expect((await r.json()).results[0].artifact.summary.kind).toBe('heap');
  });

  it('stagediff upload (the CI command) creates a comparison and prints its share URL', async () => {
    const bin = `${repoRoot}server/bin/stagediff.mjs`;
    // The server runs in this process, so the CLI must run asynchronously beside it.
    const runCli = async (cmd: string, args: string[]) => {
      try {
        const { stdout, stderr } = await promisify(execFile)(cmd, args, { encoding: 'utf8', timeout: 60_000 });
        return { status: 0, stdout, stderr };
      } catch (e) {
        const x = e as { code?: number; stdout: string; stderr: string };
        return { status: x.code ?? 1, stdout: x.stdout, stderr: x.stderr };
      }
    };
    const r = await runCli(process.execPath, [
      bin,
      'upload',
      '--server',
      base,
      '--title',
      'CI run',
      '--stage',
      'baseline',
      '--json',
      samplePath('pprof/go_httpserver_before_cpu.pb.gz'),
      samplePath('loadtests/hey/baseline-summary.txt'),
    ]);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.url).toBe(`${base}/c/${out.id}`);
    expect(out.results.map((x: { artifact: { format: string } }) => x.artifact.format)).toEqual(['pprof', 'hey']);
    // Extend the same comparison with a second stage, as the next CI job would.
    const r2 = await runCli(process.execPath, [
      bin,
      'upload',
      '--server',
      base,
      '--comparison',
      out.id,
      '--token',
      out.editToken,
      '--stage',
      'fast-json',
      samplePath('pprof/go_httpserver_after_cpu.pb.gz'),
    ]);
    expect(r2.status, r2.stderr).toBe(0);
    expect(r2.stdout.trim()).toBe(out.url);
    // A bad file: non-zero exit, one line naming it.
    const r3 = await runCli(process.execPath, [
      bin,
      'upload',
      '--server',
      base,
      '--comparison',
      out.id,
      '--token',
      out.editToken,
      '--stage',
      'fast-json',
      samplePath('pprof/hostile/truncated_gzip.pb.gz'),
    ]);
    expect(r3.status).not.toBe(0);
    expect(r3.stderr).toMatch(/stagediff: truncated_gzip\.pb\.gz: corrupt gzip/);
  });
});
