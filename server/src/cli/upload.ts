import { termText } from '../api/untrusted-text.ts';
import { openAsBlob, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import type { Reply } from '../api/endpoints.ts';
import type { FileResult } from '../api/resources.ts';
import { endpointUrl } from '../api/routes.ts';
import { FileError, UsageError, parseFlags, stringFlag } from './flags.ts';

type ErrorBody = { error?: { code: string; message: string } };

/** Statuses whose body still lists each file's result (a parse failure, a file too large, a duplicate). */
const PER_FILE = new Set([409, 413, 422]);

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
  const body = text ? (JSON.parse(text) as T & ErrorBody) : ({} as T & ErrorBody);
  if (!res.ok && !PER_FILE.has(res.status))
    throw new UsageError(`${init.method ?? 'GET'} ${url}: HTTP ${res.status}: ${body.error?.message ?? text}`);
  return body;
}

/**
 * The name a file is uploaded under: its basename, with the folder it is in folded in when that folder
 * names a run (`run-5/cpu.pb.gz` → `run-5-cpu.pb.gz`), so the server pairs it with that run's load test.
 */
export function uploadName(path: string): string {
  const folder = basename(dirname(path));
  return /^run[-_]?\d+$/i.test(folder) ? `${folder}-${basename(path)}` : basename(path);
}

export interface StageUpload {
  server: string;
  /** Extend this comparison (needs `token`); without it a new comparison is created. */
  comparison?: string;
  token?: string;
  title?: string;
  stage: string;
  note?: string;
  /** Local paths, each sent under `name` (by default its basename, behind a `run-N` folder it is in). */
  files: { path: string; name?: string }[];
  /** A source archive (.tar.gz or .zip) stored as the stage's sources, replacing any it had. */
  source?: string;
}

export interface UploadResult {
  id: string;
  url: string;
  stageId: string;
  created: boolean;
  token: string;
  results: FileResult[];
  /** What the server kept of the source archive, when one was sent. */
  sources?: Reply<'putStageSources'>;
}

/**
 * Creates the comparison (or uses the given one), finds or creates the stage by name and uploads the
 * files in one multipart request. Per-file parse failures come back in `results`; transport and
 * HTTP failures throw a UsageError naming the URL.
 */
export async function uploadToStage(u: StageUpload): Promise<UploadResult> {
  const server = u.server.replace(/\/+$/, '');
  let id = u.comparison;
  let token = u.token;
  const writeToken = process.env.STAGEDIFF_WRITE_TOKEN;
  let created = false;
  if (!id) {
    const c = await call<Reply<'createComparison'>>(`${server}${endpointUrl('createComparison')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(writeToken ? { authorization: `Bearer ${writeToken}` } : {}) },
      body: JSON.stringify({ title: u.title ?? `${u.stage} (${new Date().toISOString().slice(0, 16)}Z)` }),
    });
    id = c.id;
    token = c.editToken;
    created = true;
  }
  const auth = { authorization: `Bearer ${token}` };
  const cmp = await call<Reply<'getComparison'>>(`${server}${endpointUrl('getComparison', { id })}`, {
    method: 'GET',
  });
  let stage: { id: string } | undefined = cmp.stages.find((s) => s.name === u.stage);
  if (!stage) {
    stage = await call<Reply<'createStage'>>(`${server}${endpointUrl('createStage', { id })}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({ name: u.stage, ...(u.note ? { note: u.note } : {}) }),
    });
  }
  let results: FileResult[] = [];
  if (u.files.length > 0) {
    const form = new FormData();
    for (const f of u.files) form.append('file', await openAsBlob(f.path), f.name ?? uploadName(f.path));
    const up = await call<Reply<'uploadArtifacts'>>(
      `${server}${endpointUrl('uploadArtifacts', { id, stageId: stage.id })}`,
      { method: 'POST', headers: auth, body: form },
    );
    results = up.results;
  }
  let sources: Reply<'putStageSources'> | undefined;
  if (u.source) {
    const url = `${server}${endpointUrl('putStageSources', { id, stageId: stage.id })}?filename=${encodeURIComponent(basename(u.source))}`;
    sources = await call<Reply<'putStageSources'>>(url, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/octet-stream' },
      body: await openAsBlob(u.source),
    });
    // A refused archive answers 413 too, which `call` leaves to the caller for per-file uploads.
    const refusal = (sources as ErrorBody).error;
    if (refusal) throw new UsageError(`--source ${u.source}: ${refusal.message}`);
  }
  return {
    id,
    // (Relative when the server has no PUBLIC_URL: resolved against the server reached.)
    url: new URL(cmp.url, `${server}/`).href,
    stageId: stage.id,
    created,
    token: token!,
    results,
    ...(sources ? { sources } : {}),
  };
}

/** Attaches a capture record (how the stage was recorded) to a stage. */
export async function postCapture(
  server: string,
  r: { id: string; stageId: string; token: string },
  record: unknown,
): Promise<void> {
  await call(`${server.replace(/\/+$/, '')}${endpointUrl('addCapture', { id: r.id, stageId: r.stageId })}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${r.token}` },
    body: JSON.stringify(record),
  });
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
    source: 'string',
    json: 'boolean',
  });
  const server = stringFlag(flags, 'server')?.replace(/\/+$/, '');
  const stageName = stringFlag(flags, 'stage');
  const id = stringFlag(flags, 'comparison');
  const token = stringFlag(flags, 'token') ?? process.env.STAGEDIFF_TOKEN;
  if (!server) throw new UsageError('upload needs --server URL');
  if (!stageName) throw new UsageError('upload needs --stage NAME');
  const source = stringFlag(flags, 'source');
  if (flags.positionals.length === 0 && !source)
    throw new UsageError('upload needs at least one FILE (or --source ARCHIVE)');
  if (id && !token) throw new UsageError('--comparison needs --token (or STAGEDIFF_TOKEN) to add to it');
  for (const f of [...flags.positionals, ...(source ? [source] : [])]) {
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
  const note = stringFlag(flags, 'note');
  const title = stringFlag(flags, 'title');
  const r = await uploadToStage({
    server,
    ...(id ? { comparison: id } : {}),
    ...(token ? { token } : {}),
    ...(title ? { title } : {}),
    stage: stageName,
    ...(note ? { note } : {}),
    files: flags.positionals.map((path) => ({ path })),
    ...(source ? { source } : {}),
  });
  if (r.sources)
    process.stderr.write(
      `  ${basename(source!)}: sources, ${r.sources.files} files of ${r.sources.modulePath || 'an unnamed module'}${r.sources.revision ? ` at ${r.sources.revision.slice(0, 12)}${r.sources.dirty ? ' (dirty)' : ''}` : ''}\n`,
    );
  let failed = 0;
  for (const x of r.results) {
    if (x.ok)
      process.stderr.write(
        `  ${x.filename}: ${x.artifact.kind} (${x.artifact.format})${x.note ? `, ${termText(x.note)}` : ''}\n`,
      );
    else {
      failed++;
      process.stderr.write(`stagediff: ${termText(x.error.message)}\n`);
    }
  }
  if (flags.values.json)
    process.stdout.write(
      `${JSON.stringify({ id: r.id, url: r.url, stageId: r.stageId, ...(r.created ? { editToken: r.token } : {}), results: r.results, ...(r.sources ? { sources: r.sources } : {}) }, null, 2)}\n`,
    );
  else {
    if (r.created)
      process.stderr.write(
        `edit token (keep it secret; pass it with --comparison ${r.id} --token ... to add stages): ${r.token}\n`,
      );
    process.stdout.write(`${termText(r.url)}\n`);
  }
  return failed > 0 ? 1 : 0;
}
