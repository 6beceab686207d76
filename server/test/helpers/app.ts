import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { buildApp, type StagediffApp } from '../../src/app.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import type { Store } from '../../src/store/index.ts';

/** A test app on a fresh SQLite data dir (or a given store), no demo seeding, no logs. */
export async function testApp(env: Record<string, string> = {}, store?: Store): Promise<StagediffApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'stagediff-api-'));
  const config: Config = loadConfig({ DATA_DIR: dataDir, STAGEDIFF_SEED_DEMO: '0', WEB_DIST: '/nonexistent', ...env });
  return buildApp(config, { logger: !!env.LOG_LEVEL, ...(store ? { store } : {}) });
}

/** A multipart body with one `file` part per path, for app.inject. */
export function multipart(paths: string[], names?: string[]): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----stagediff${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  paths.forEach((p, i) => {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${names?.[i] ?? basename(p)}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      ),
    );
    parts.push(readFileSync(p));
    parts.push(Buffer.from('\r\n'));
  });
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export async function createComparison(
  app: StagediffApp,
  title = 'test',
): Promise<{ id: string; token: string; auth: Record<string, string> }> {
  const r = await app.inject({ method: 'POST', url: '/api/comparisons', payload: { title } });
  if (r.statusCode !== 201) throw new Error(`create failed: ${r.body}`);
  const { id, editToken } = r.json() as { id: string; editToken: string };
  return { id, token: editToken, auth: { authorization: `Bearer ${editToken}` } };
}

export async function addStage(
  app: StagediffApp,
  id: string,
  auth: Record<string, string>,
  name: string,
  note = '',
): Promise<string> {
  const r = await app.inject({
    method: 'POST',
    url: `/api/comparisons/${id}/stages`,
    headers: auth,
    payload: { name, note },
  });
  if (r.statusCode !== 201) throw new Error(`stage failed: ${r.body}`);
  return (r.json() as { id: string }).id;
}

export async function upload(
  app: StagediffApp,
  id: string,
  stageId: string,
  auth: Record<string, string>,
  paths: string[],
  names?: string[],
) {
  const m = multipart(paths, names);
  return app.inject({
    method: 'POST',
    url: `/api/comparisons/${id}/stages/${stageId}/artifacts`,
    headers: { ...auth, ...m.headers },
    payload: m.payload,
  });
}

declare global {
  // Tests read API responses as loose JSON; the API's shapes are asserted value by value.
  interface Response {
    // biome-ignore lint/suspicious/noExplicitAny: tests read many response shapes by path; a wrong path fails the assertion
    json(): Promise<any>;
  }
}
