import { openAsBlob, statSync } from 'node:fs';
import { basename } from 'node:path';
import { FileError, UsageError, parseFlags, stringFlag } from './main.ts';

interface ApiErrorBody {
  error?: { code: string; message: string };
}

async function call<T>(url: string, init: RequestInit): Promise<T> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (e) {
    throw new UsageError(
      `cannot reach ${url}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`,
    );
  }
  const text = await res.text();
  const body = text ? (JSON.parse(text) as T & ApiErrorBody) : ({} as T & ApiErrorBody);
  if (!res.ok && !(res.status === 422 || res.status === 413))
    throw new UsageError(`${init.method ?? 'GET'} ${url}: HTTP ${res.status}: ${body.error?.message ?? text}`);
  return body;
}

/**
 * `stagediff upload`: for CI pipelines. Creates a comparison (or extends one with --comparison and
 * --token), finds or creates the stage by name, uploads the files, and prints the share URL.
 */
export async function uploadCommand(args: string[]): Promise<number> {
  const flags = parseFlags(args, {
    server: 'string',
    comparison: 'string',
    token: 'string',
    title: 'string',
    stage: 'string',
    note: 'string',
    json: 'boolean',
  });
  const server = stringFlag(flags, 'server')?.replace(/\/+$/, '');
  const stageName = stringFlag(flags, 'stage');
  let id = stringFlag(flags, 'comparison');
  let token = stringFlag(flags, 'token') ?? process.env.STAGEDIFF_TOKEN;
  if (!server) throw new UsageError('upload needs --server URL');
  if (!stageName) throw new UsageError('upload needs --stage NAME');
  if (flags.positionals.length === 0) throw new UsageError('upload needs at least one FILE');
  if (id && !token) throw new UsageError('--comparison needs --token (or STAGEDIFF_TOKEN) to add to it');
  for (const f of flags.positionals) {
    try {
      if (!statSync(f).isFile()) throw Object.assign(new Error('not a regular file'), {});
    } catch (e) {
      throw new FileError(
        f,
        (e as NodeJS.ErrnoException).code === 'ENOENT'
          ? Object.assign(new Error('no such file'), { code: 'ENOENT' })
          : e,
      );
    }
  }
  const writeToken = process.env.STAGEDIFF_WRITE_TOKEN;
  let created = false;
  let url: string;
  if (!id) {
    const c = await call<{ id: string; editToken: string; url: string }>(`${server}/api/comparisons`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(writeToken ? { authorization: `Bearer ${writeToken}` } : {}) },
      body: JSON.stringify({
        title: stringFlag(flags, 'title') ?? `${stageName} (${new Date().toISOString().slice(0, 16)}Z)`,
      }),
    });
    id = c.id;
    token = c.editToken;
    url = c.url;
    created = true;
  }
  const auth = { authorization: `Bearer ${token}` };
  const cmp = await call<{ url: string; stages: { id: string; name: string }[] }>(
    `${server}/api/comparisons/${encodeURIComponent(id)}`,
    { method: 'GET' },
  );
  url = cmp.url;
  let stage = cmp.stages.find((s) => s.name === stageName);
  if (!stage) {
    const note = stringFlag(flags, 'note');
    stage = await call<{ id: string; name: string }>(`${server}/api/comparisons/${encodeURIComponent(id)}/stages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ name: stageName, ...(note ? { note } : {}) }),
    });
  }
  const form = new FormData();
  for (const f of flags.positionals) form.append('file', await openAsBlob(f), basename(f));
  const up = await call<{
    results: {
      filename: string;
      ok: boolean;
      artifact?: { format: string; kind: string };
      error?: { message: string };
    }[];
  }>(`${server}/api/comparisons/${encodeURIComponent(id)}/stages/${encodeURIComponent(stage.id)}/artifacts`, {
    method: 'POST',
    headers: auth,
    body: form,
  });
  let failed = 0;
  for (const r of up.results) {
    if (r.ok) process.stderr.write(`  ${r.filename}: ${r.artifact!.kind} (${r.artifact!.format})\n`);
    else {
      failed++;
      process.stderr.write(`stagediff: ${r.error!.message}\n`);
    }
  }
  if (flags.values.json)
    process.stdout.write(
      `${JSON.stringify({ id, url, stageId: stage.id, ...(created ? { editToken: token } : {}), results: up.results }, null, 2)}\n`,
    );
  else {
    if (created)
      process.stderr.write(
        `edit token (keep it secret; pass it with --comparison ${id} --token ... to add stages): ${token}\n`,
      );
    process.stdout.write(`${url}\n`);
  }
  return failed > 0 ? 1 : 0;
}
