// End-to-end: what a user pastes and drops on a stage, in real Chromium against the real server. A
// terminal paste of real tool output (with its shell prompts) typed into the stage's paste box uploads
// as paste-1.txt, paste-2.txt… and reads as that tool's run; a source archive dropped on the files zone
// with a profile (src.tar.gz, src.zip) becomes the stage's sources instead of an unrecognised file.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.ts';
import { addStageWithFiles, createComparison, e2eEnvironment, watchPage } from './page-helpers.ts';

const env = e2eEnvironment(existsSync(CHROMIUM));
const LOADTESTS = join(REPO, 'fixtures/loadtests');

interface StageJson {
  name: string;
  artifacts: { filename: string; format: string }[];
  sources: { files: number; modulePath: string } | null;
}

async function stagesOf(id: string): Promise<StageJson[]> {
  return ((await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as { stages: StageJson[] }).stages;
}

/** A real drop event on the stage's files zone carrying these files under these names. */
async function drop(page: Page, card: Locator, files: { name: string; bytes: Buffer }[]) {
  const payload = files.map((f) => ({ name: f.name, b64: f.bytes.toString('base64') }));
  const dataTransfer = await page.evaluateHandle((items) => {
    const dt = new DataTransfer();
    for (const it of items) dt.items.add(new File([Uint8Array.from(atob(it.b64), (c) => c.charCodeAt(0))], it.name));
    return dt;
  }, payload);
  await card.locator('.dropzone').dispatchEvent('dragover', { dataTransfer });
  await card.locator('.dropzone').dispatchEvent('drop', { dataTransfer });
}

describe.skipIf(!existsSync(CHROMIUM))('pasting and dropping on a stage', () => {
  it('uploads pasted terminal output as paste-N.txt, and takes a dropped source archive as the sources', async () => {
    const problems: string[] = [];
    const page = await (await env.browser.newContext()).newPage();
    watchPage(page, problems);
    await createComparison(page, env.server.url, 'E2E: pasted');
    const id = new URL(page.url()).searchParams.get('edit')!;
    const card = await addStageWithFiles(page, 'pasted', 'outputs from a terminal', []);

    // A hey run as a terminal shows it: the prompt and command above, the next prompt below.
    const hey = readFileSync(join(LOADTESTS, 'hey/ok-paced.txt'), 'utf8');
    const wrk = readFileSync(join(LOADTESTS, 'wrk/ok-latency.txt'), 'utf8');
    await card.getByRole('button', { name: 'paste an output' }).click();
    const box = card.getByRole('form', { name: 'Paste an output into stage pasted' });
    await box
      .getByLabel(/Pasted output/)
      .fill(`user@host:~$ hey -n 2000 -q 1000 http://127.0.0.1:18181/api/item\n${hey}user@host:~$ `);
    await box.getByRole('button', { name: 'Upload pasted text' }).click();
    await expect
      .poll(() => card.locator('.upload-done[data-filename="paste-1.txt"]').count(), { timeout: 60_000 })
      .toBe(1);
    await box.getByLabel(/Pasted output/).fill(wrk);
    await box.getByRole('button', { name: 'Upload pasted text' }).click();
    await expect
      .poll(() => card.locator('.upload-done[data-filename="paste-2.txt"]').count(), { timeout: 60_000 })
      .toBe(1);
    const pasted = (await stagesOf(id))[0]!;
    expect(pasted.artifacts.map((a) => [a.filename, a.format])).toEqual([
      ['paste-1.txt', 'hey'],
      ['paste-2.txt', 'wrk'],
    ]);
    // The run's figures are the ones hey printed (924.8146 requests/sec).
    const table = (await (await fetch(`${env.server.url}/api/comparisons/${id}/stage-table`)).json()) as {
      rows: { figures: { rps?: { median: number } } }[];
    };
    expect(table.rows[0]!.figures.rps?.median).toBeGreaterThan(0);

    // A profile and the sources dropped together: the archive is the stage's sources, not a file.
    const tarStage = await addStageWithFiles(page, 'tarball', 'sources as .tar.gz', []);
    await drop(page, tarStage, [
      { name: 'cpu.pb.gz', bytes: readFileSync(join(REPO, 'fixtures/demo/baseline/run-1/cpu.pb.gz')) },
      { name: 'src.tar.gz', bytes: readFileSync(join(REPO, 'fixtures/demo/baseline/run-1/sources.tar.gz')) },
    ]);
    await tarStage.locator('.upload-done[data-filename="src.tar.gz"]').waitFor({ timeout: 60_000 });
    expect(await tarStage.locator('.upload-done[data-filename="src.tar.gz"]').textContent()).toMatch(
      /the stage's sources: \d+ files of /,
    );

    // A zip of a module's sources, made here from fixtures/line-view/v1.
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-e2e-zip-'));
    execFileSync('python3', [
      '-c',
      'import sys, zipfile\nz = zipfile.ZipFile(sys.argv[1], "w")\nfor f in sys.argv[3:]: z.write(sys.argv[2] + "/" + f, f)\nz.close()',
      join(dir, 'src.zip'),
      join(REPO, 'fixtures/line-view/v1'),
      'go.mod',
      'main.go',
    ]);
    const zipStage = await addStageWithFiles(page, 'zipped', 'sources as .zip', []);
    await drop(page, zipStage, [
      { name: 'cpu.pb.gz', bytes: readFileSync(join(REPO, 'fixtures/line-view/v1/cpu.pb.gz')) },
      { name: 'src.zip', bytes: readFileSync(join(dir, 'src.zip')) },
    ]);
    await zipStage.locator('.upload-done[data-filename="src.zip"]').waitFor({ timeout: 60_000 });

    await expect
      .poll(async () =>
        (await stagesOf(id)).map((s) => [s.name, s.artifacts.map((a) => a.filename), s.sources?.files ?? 0]),
      )
      .toEqual([
        ['pasted', ['paste-1.txt', 'paste-2.txt'], 0],
        ['tarball', ['cpu.pb.gz'], expect.any(Number)],
        ['zipped', ['cpu.pb.gz'], 2],
      ]);
    expect((await stagesOf(id))[1]!.sources!.files).toBeGreaterThan(0);
    expect(await page.getByText(/unrecognized format/).count()).toBe(0);
    expect(problems).toEqual([]);
  });
});
