import type { Reply } from '../api/endpoints.ts';
import { endpointUrl } from '../api/routes.ts';
import { termText } from '../api/untrusted-text.ts';
import { UsageError, parseFlags, stringFlag } from './flags.ts';
import { uploadToStage } from './upload.ts';

/**
 * `stagediff import parca --url URL --query SELECTOR --from T --to T [--runs N]
 *   [--requests-url PROM --requests-query 'http_requests_total{job="api"}'] --server S --stage NAME`:
 * asks the server to import a window of a continuous profiler's scrapes into a stage (the server
 * fetches, from the hosts its PROFILER_HOSTS allows), as the browser's "Add from a profiler" does,
 * and prints each run's requested and covered window. With a requests query, the server also asks a
 * Prometheus-compatible server for the requests each run's window served, so the stage has
 * per-request figures.
 */
export async function importCommand(args: string[]): Promise<number> {
  const [source, ...rest] = args;
  if (source !== 'parca' && source !== 'pyroscope')
    throw new UsageError(`import needs the profiler first: stagediff import parca …, got "${source ?? ''}"`);
  const flags = parseFlags(rest, {
    url: 'string',
    query: 'string',
    from: 'string',
    to: 'string',
    runs: 'string',
    'requests-url': 'string',
    'requests-query': 'string',
    server: 'string',
    comparison: 'string',
    token: 'string',
    title: 'string',
    stage: 'string',
    note: 'string',
    json: 'boolean',
  });
  if (flags.positionals.length > 0) throw new UsageError(`import takes no file: "${flags.positionals[0]}"`);
  const need = (name: string): string => {
    const v = stringFlag(flags, name);
    if (!v) throw new UsageError(`import needs --${name}`);
    return v;
  };
  const url = need('url');
  const from = need('from');
  const to = need('to');
  const server = need('server').replace(/\/+$/, '');
  const stage = need('stage');
  const runsText = stringFlag(flags, 'runs') ?? '6';
  const runs = Number(runsText);
  if (!Number.isInteger(runs) || runs < 1) throw new UsageError(`--runs takes a whole number ≥ 1, got "${runsText}"`);
  const id = stringFlag(flags, 'comparison');
  const token = stringFlag(flags, 'token') ?? process.env.STAGEDIFF_TOKEN;
  if (id && !token) throw new UsageError('--comparison needs --token (or STAGEDIFF_TOKEN) to add to it');
  const requestsUrl = stringFlag(flags, 'requests-url');
  const requestsQuery = stringFlag(flags, 'requests-query');
  if (Boolean(requestsUrl) !== Boolean(requestsQuery))
    throw new UsageError('--requests-url and --requests-query go together: the server to ask and what to ask it');
  const note = stringFlag(flags, 'note');
  const title = stringFlag(flags, 'title');
  const target = await uploadToStage({
    server,
    ...(id ? { comparison: id } : {}),
    ...(token ? { token } : {}),
    ...(title ? { title } : {}),
    stage,
    ...(note ? { note } : {}),
    files: [],
  });
  const endpoint = `${server}${endpointUrl('importFromProfiler', { id: target.id, stageId: target.stageId })}`;
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}` },
      body: JSON.stringify({
        source,
        url,
        query: stringFlag(flags, 'query') ?? '{}',
        from,
        to,
        runs,
        ...(requestsUrl && requestsQuery ? { requestsUrl, requestsQuery } : {}),
      }),
    });
  } catch (e) {
    throw new Error(`cannot reach ${server}: ${(e as Error).message}`);
  }
  const text = await res.text();
  let reply: Reply<'importFromProfiler'> & { error?: { message: string } };
  try {
    reply = JSON.parse(text) as typeof reply;
  } catch {
    throw new Error(`POST ${endpoint}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  }
  // The server's refusal (a host not allowed, too few scrapes…) is not a usage error: exit 1.
  if (!res.ok && !reply.runs) throw new Error(`import: ${reply.error?.message ?? `HTTP ${res.status}`}`);
  let failed = 0;
  for (const r of reply.runs ?? []) {
    const cov = r.covered
      ? `covered ${r.covered.start} to ${r.covered.end} (${r.covered.seconds.toFixed(3)} s)`
      : 'no delta scrapes';
    const load = r.requests
      ? `; ${r.requests.requests.toFixed(0)} requests from ${r.requests.from} to ${r.requests.to}`
      : '';
    process.stderr.write(`  run ${r.run}: requested ${r.requested.start} to ${r.requested.end}; ${cov}${load}\n`);
  }
  for (const x of reply.results ?? [])
    if (!x.ok) {
      failed++;
      process.stderr.write(`stagediff: ${termText(x.error.message)}\n`);
    }
  const seconds = (reply.runs ?? []).reduce((a, r) => a + (r.covered?.seconds ?? 0), 0);
  process.stderr.write(
    `  ${(reply.results ?? []).filter((x) => x.ok).length} files in ${reply.runs?.length ?? 0} runs, ${seconds.toFixed(3)} covered seconds${reply.skippedTypes?.length ? `; not taken: ${reply.skippedTypes.join(', ')}` : ''}\n`,
  );
  if (flags.values.json)
    process.stdout.write(
      `${JSON.stringify({ id: target.id, url: target.url, stageId: target.stageId, ...(target.created ? { editToken: target.token } : {}), ...reply }, null, 2)}\n`,
    );
  else {
    if (target.created)
      process.stderr.write(
        `edit token (keep it secret; pass it with --comparison ${target.id} --token ... to add stages): ${target.token}\n`,
      );
    process.stdout.write(`${termText(target.url)}\n`);
  }
  return failed > 0 || !res.ok ? 1 : 0;
}
