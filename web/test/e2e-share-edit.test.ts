// End-to-end: "Share edit access" shows and copies the edit token, an edit link and the CI commands,
// in real Chromium against the real server. The copied upload command runs for real with the copied
// token; the edit link opens the comparison for editing in another browser, where it joins "Your
// comparisons"; a link with a wrong token edits nothing.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { CHROMIUM, REPO } from './harness.ts';
import { createComparison, e2eEnvironment, watchPage } from './page-helpers.ts';

const env = e2eEnvironment(existsSync(CHROMIUM));
const TITLE = 'E2E: shared with CI';

async function clipboard(page: Page): Promise<string> {
  return page.evaluate(() => navigator.clipboard.readText());
}

describe.skipIf(!existsSync(CHROMIUM))('sharing edit access', () => {
  it('shows and copies the token, its CI commands work, and its edit link opens the comparison elsewhere', async () => {
    const problems: string[] = [];
    const owner = await env.browser.newContext();
    await owner.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.server.url });
    const page = await owner.newPage();
    watchPage(page, problems);
    await createComparison(page, env.server.url, TITLE);
    const id = new URL(page.url()).searchParams.get('edit')!;
    const token = await page.evaluate((cid) => JSON.parse(localStorage.getItem('stagediff.tokens')!)[cid], id);
    expect(token).toMatch(/\S{16,}/);

    await page.goto(`${env.server.url}/c/${id}`);
    await page.getByRole('button', { name: 'Share edit access' }).click();
    const panel = page.getByRole('region', { name: 'Share edit access' });
    expect(await panel.getByLabel('Edit token', { exact: true }).inputValue()).toBe(token);

    await panel.getByRole('button', { name: 'Copy edit token' }).click();
    await expect.poll(() => clipboard(page)).toBe(token);

    await panel.getByRole('button', { name: 'Copy CI commands' }).click();
    await expect.poll(() => clipboard(page)).toContain('npx stagediff upload');
    const snippet = await clipboard(page);
    const at = `--server ${env.server.url} --comparison ${id} --token "$STAGEDIFF_TOKEN"`;
    expect(snippet).toContain(`npx stagediff upload ${at} --stage NAME`);
    expect(snippet).toContain(`npx stagediff capture ${at} --stage NAME`);
    expect(snippet).not.toContain(token);

    // The upload line as CI would run it, the token as its secret: a stage of real files joins the comparison.
    const upload = snippet.split('\n').find((l) => l.startsWith('npx stagediff upload'))!;
    const command = upload
      .replace('npx stagediff', `node ${join(REPO, 'server/bin/stagediff.mjs')}`)
      .replace('--stage NAME', '--stage from-ci');
    const run = spawnSync('bash', ['-c', command], {
      cwd: join(REPO, 'fixtures/demo/baseline/run-1'), // holds cpu.pb.gz and wrk.txt, the files the line names
      env: { ...process.env, STAGEDIFF_TOKEN: token },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.status).toBe(0);
    const stages = async () =>
      ((await (await fetch(`${env.server.url}/api/comparisons/${id}`)).json()) as { stages: { name: string }[] })
        .stages;
    expect((await stages()).map((s) => s.name)).toEqual(['from-ci']);

    await panel.getByRole('button', { name: 'Copy edit link' }).click();
    await expect.poll(() => clipboard(page)).toContain('#edit-token=');
    const link = await clipboard(page);
    expect(link).toBe(`${env.server.url}/c/${id}#edit-token=${encodeURIComponent(token)}`);

    // Another browser: no token, nothing in "Your comparisons"; the edit link opens it for editing.
    const teammate = await (await env.browser.newContext()).newPage();
    watchPage(teammate, problems);
    await teammate.goto(`${env.server.url}/`);
    await teammate.getByRole('heading', { name: 'Your comparisons' }).waitFor();
    expect(await teammate.getByRole('link', { name: TITLE }).count()).toBe(0);
    await teammate.goto(link);
    await teammate.getByRole('button', { name: 'Edit stages' }).waitFor();
    expect(new URL(teammate.url()).hash).toBe(''); // the token left the address
    await teammate.getByRole('button', { name: 'Edit stages' }).click();
    await teammate.getByRole('region', { name: 'Stage from-ci' }).waitFor();
    await teammate.goto(`${env.server.url}/`);
    await teammate.getByRole('link', { name: TITLE }).waitFor();
    await teammate.getByRole('link', { name: 'edit' }).first().click();
    await teammate.getByRole('heading', { name: TITLE }).waitFor();

    // A link with a token that does not open this comparison: told so, and nothing is editable.
    const stranger = await (await env.browser.newContext()).newPage();
    await stranger.goto(`${env.server.url}/c/${id}#edit-token=not-the-token`);
    await stranger.getByText('The edit link’s token does not open this comparison.').waitFor();
    expect(await stranger.getByRole('button', { name: 'Edit stages' }).count()).toBe(0);
    await stranger.goto(`${env.server.url}/`);
    await stranger.getByRole('heading', { name: 'Your comparisons' }).waitFor();
    expect(await stranger.getByRole('link', { name: TITLE }).count()).toBe(0);

    expect(problems).toEqual([]);
  });
});
