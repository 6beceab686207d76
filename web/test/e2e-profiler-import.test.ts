// End-to-end: "add from a profiler" on a stage, in real Chromium against the real server, which
// fetches from a stand-in Parca on 127.0.0.1 replaying Parca v0.28.0's recorded answers
// (fixtures/parca). The form shows each run's covered window and the covered seconds, and the stage
// holds the six runs' files; a URL to a host the server's PROFILER_HOSTS does not name is refused
// with the server's message.
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parcaWindow, startParcaReplay } from '../../server/test/helpers/parca-replay.ts';
import { CHROMIUM } from './harness.ts';
import { addStageWithFiles, createComparison, e2eEnvironment, watchPage } from './page-helpers.ts';

const enabled = existsSync(CHROMIUM);
// Filled in before the server starts (hooks run in the order they are declared).
const serverEnv: Record<string, string> = {};
let replay: { server: Server; port: number; requests: string[] } | undefined;
beforeAll(async () => {
  if (!enabled) return;
  replay = await startParcaReplay();
  serverEnv.PROFILER_HOSTS = `127.0.0.1:${replay.port}`;
});
afterAll(async () => {
  if (replay) await new Promise((r) => replay!.server.close(r));
});
const env = e2eEnvironment(enabled, { env: serverEnv });

describe.skipIf(!enabled)('add from a profiler', () => {
  it('imports a Parca window as runs and shows the covered windows', async () => {
    const problems: string[] = [];
    const page = await (await env.browser.newContext()).newPage();
    watchPage(page, problems);
    await createComparison(page, env.server.url, 'E2E: from Parca');
    const id = new URL(page.url()).searchParams.get('edit')!;
    const card = await addStageWithFiles(page, 'pooled', 'scraped by Parca', []);
    await card.getByRole('button', { name: 'add from a profiler' }).click();
    const form = card.getByRole('form', { name: 'Add from a profiler to stage pooled' });

    // A host the server does not allow: refused with the server's message, nothing fetched.
    const before = replay!.requests.length;
    await form.getByLabel('Profiler URL', { exact: true }).fill('http://10.1.2.3:7070');
    await form.getByLabel('Selector', { exact: true }).fill(parcaWindow.selector);
    await form.getByLabel('From', { exact: true }).fill(parcaWindow.from);
    await form.getByLabel('To', { exact: true }).fill(parcaWindow.to);
    await form.getByLabel('Runs', { exact: true }).fill(String(parcaWindow.runs));
    await form.getByRole('button', { name: 'Import' }).click();
    await expect.poll(() => form.getByRole('alert').textContent(), { timeout: 30_000 }).toContain('PROFILER_HOSTS');
    expect(replay!.requests.length).toBe(before);

    await form.getByLabel('Profiler URL', { exact: true }).fill(`http://127.0.0.1:${replay!.port}`);
    await form.getByRole('button', { name: 'Import' }).click();
    const status = form.getByRole('status');
    await expect
      .poll(() => status.textContent(), { timeout: 60_000 })
      .toContain('36 files in 6 runs, 60.003 covered seconds');
    const runs = await form.getByRole('list', { name: 'Imported runs' }).getByRole('listitem').allTextContents();
    expect(runs).toHaveLength(6);
    expect(runs[0]).toBe(
      'run 1: requested 2026-11-29T07:09:58.900Z to 2026-11-29T07:10:09.933Z; covered 2026-11-29T07:09:58.968Z to 2026-11-29T07:10:08.968Z (10.001 s)',
    );
    const stage = (
      (await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as {
        stages: { artifacts: { filename: string }[] }[];
      }
    ).stages[0]!;
    expect(stage.artifacts.map((a) => a.filename)).toContain('run-6-cpu.pb.gz');
    expect(stage.artifacts).toHaveLength(36);
    expect(problems).toEqual([]);
  }, 180_000);

  it("with a requests counter, shows each run's requests and gives the stage per-request figures", async () => {
    const problems: string[] = [];
    const page = await (await env.browser.newContext({ viewport: { width: 390, height: 900 } })).newPage();
    watchPage(page, problems);
    await createComparison(page, env.server.url, 'E2E: from Parca and Prometheus');
    const id = new URL(page.url()).searchParams.get('edit')!;
    const card = await addStageWithFiles(page, 'pooled', 'scraped by Parca, counted by Prometheus', []);
    await card.getByRole('button', { name: 'add from a profiler' }).click();
    const form = card.getByRole('form', { name: 'Add from a profiler to stage pooled' });
    const base = `http://127.0.0.1:${replay!.port}`;
    await form.getByLabel('Profiler URL', { exact: true }).fill(base);
    await form.getByLabel('Selector', { exact: true }).fill(parcaWindow.selector);
    await form.getByLabel('From', { exact: true }).fill(parcaWindow.from);
    await form.getByLabel('To', { exact: true }).fill(parcaWindow.to);
    await form.getByLabel('Runs', { exact: true }).fill(String(parcaWindow.runs));
    await form.getByLabel('Prometheus URL', { exact: true }).fill(base);
    await form.getByLabel('Requests counter', { exact: true }).fill(parcaWindow.requestsQuery);
    // the form fits a phone's width
    const box = await form.boundingBox();
    expect(box!.width).toBeLessThanOrEqual(390);
    await form.getByRole('button', { name: 'Import' }).click();
    const status = form.getByRole('status');
    await expect
      .poll(() => status.textContent(), { timeout: 60_000 })
      .toContain('42 files in 6 runs, 60.003 covered seconds');
    const runs = await form.getByRole('list', { name: 'Imported runs' }).getByRole('listitem').allTextContents();
    expect(runs[0]).toMatch(/; 101948 requests from 2026-11-29T07:09:58\.968Z to 2026-11-29T07:10:08\.969Z$/);
    const stage = (
      (await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as {
        stages: { id: string; artifacts: { filename: string }[] }[];
      }
    ).stages[0]!;
    expect(stage.artifacts.map((a) => a.filename)).toContain('run-6-requests.json');
    const flame = (await (
      await fetch(`${env.server.url}/api/comparisons/${id}/flamegraph?stage=${stage.id}&sampleType=cpu`)
    ).json()) as { unit: string; total: number };
    expect(flame.unit).toBe('nanoseconds/request');
    expect(flame.total / 1000).toBeCloseTo(99.4, 1);
    expect(problems).toEqual([]);
  }, 180_000);
});
