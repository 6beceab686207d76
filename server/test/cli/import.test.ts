/**
 * `stagediff import parca` as a user runs it: a child process asking a real server (on a socket)
 * to import the recorded Parca window (a stand-in Parca on 127.0.0.1 replaying fixtures/parca);
 * it prints each run's requested and covered window and the share URL.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StagediffApp } from '../../src/app.ts';
import { testApp } from '../helpers/app.ts';
import { runCli } from '../helpers/cli.ts';
import { parcaWindow, startParcaReplay } from '../helpers/parca-replay.ts';

let replay: { server: Server; port: number; requests: string[] };
let app: StagediffApp;
let base: string;

beforeAll(async () => {
  replay = await startParcaReplay();
  app = await testApp({ ANALYSIS_WORKERS: '0', PROFILER_HOSTS: `127.0.0.1:${replay.port}` });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await app.close();
  await new Promise((r) => replay.server.close(r));
});

describe('stagediff import parca', () => {
  it('imports the window as runs and prints the covered windows', async () => {
    const r = await runCli([
      'import',
      'parca',
      '--url',
      `http://127.0.0.1:${replay.port}`,
      '--query',
      parcaWindow.selector,
      '--from',
      parcaWindow.from,
      '--to',
      parcaWindow.to,
      '--runs',
      String(parcaWindow.runs),
      '--server',
      base,
      '--stage',
      'pooled',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      'run 1: requested 2026-11-29T07:09:58.900Z to 2026-11-29T07:10:09.933Z; covered 2026-11-29T07:09:58.968Z to 2026-11-29T07:10:08.968Z (10.001 s)',
    );
    expect(r.stderr).toContain('36 files in 6 runs, 60.003 covered seconds');
    expect(r.stdout).toMatch(/\/c\/[\w-]+/);
  });

  it("with --requests-url and --requests-query, prints each run's requests", async () => {
    const prom = `http://127.0.0.1:${replay.port}`;
    const r = await runCli([
      'import',
      'parca',
      '--url',
      prom,
      '--query',
      parcaWindow.selector,
      '--from',
      parcaWindow.from,
      '--to',
      parcaWindow.to,
      '--requests-url',
      prom,
      '--requests-query',
      parcaWindow.requestsQuery,
      '--server',
      base,
      '--stage',
      'pooled',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /run 1: requested \S+ to \S+; covered 2026-11-29T07:09:58\.968Z to 2026-11-29T07:10:08\.968Z \(10\.001 s\); 101948 requests from 2026-11-29T07:09:58\.968Z to 2026-11-29T07:10:08\.969Z/,
    );
    expect(r.stderr).toContain('42 files in 6 runs, 60.003 covered seconds');
    // one without the other is a usage error, before anything is asked
    const half = await runCli([
      'import',
      'parca',
      '--url',
      prom,
      '--from',
      parcaWindow.from,
      '--to',
      parcaWindow.to,
      '--requests-query',
      parcaWindow.requestsQuery,
      '--server',
      base,
      '--stage',
      'x',
    ]);
    expect(half.status).toBe(2);
    expect(half.stderr).toContain('--requests-url and --requests-query go together');
  });

  it('names a refused host as the server says it', async () => {
    const r = await runCli([
      'import',
      'parca',
      '--url',
      'http://10.0.0.1:7070',
      '--from',
      parcaWindow.from,
      '--to',
      parcaWindow.to,
      '--server',
      base,
      '--stage',
      'x',
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('PROFILER_HOSTS');
  });

  it('is a usage error without the profiler or a flag it needs', async () => {
    expect((await runCli(['import', '--url', 'x'])).status).toBe(2);
    const r = await runCli(['import', 'parca', '--url', 'http://h:1', '--server', base, '--stage', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('import needs --from');
  });
});
