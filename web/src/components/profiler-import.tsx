import { type FormEvent, useState } from 'react';
import type { Body, Reply } from '../lib/api.ts';

export type ProfilerImportAsk = Body<'importFromProfiler'>;
export type ProfilerImportReply = Reply<'importFromProfiler'>;

/** A window's start: a minute ago's minute, as RFC 3339 (UTC), for the form's defaults. */
function minutesAgo(n: number): string {
  const d = new Date(Date.now() - n * 60_000);
  d.setUTCSeconds(0, 0);
  return d.toISOString().replace('.000Z', 'Z');
}

/**
 * "Add from a profiler": a stage's runs taken from Parca's scrapes (or Pyroscope's profiles) over a window. The server fetches
 * (only from the hosts its PROFILER_HOSTS names) and answers each run's requested and covered window.
 */
export function ProfilerImportForm(props: {
  stageName: string;
  onImport: (ask: ProfilerImportAsk) => Promise<ProfilerImportReply>;
  onClose: () => void;
}) {
  const [source, setSource] = useState<ProfilerImportAsk['source']>('parca');
  const [url, setUrl] = useState('');
  const [query, setQuery] = useState('{}');
  const [from, setFrom] = useState(() => minutesAgo(12));
  const [to, setTo] = useState(() => minutesAgo(2));
  const [runs, setRuns] = useState('6');
  const [requestsUrl, setRequestsUrl] = useState('');
  const [requestsQuery, setRequestsQuery] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<ProfilerImportReply | null>(null);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      setDone(
        await props.onImport({
          source,
          url: url.trim(),
          query,
          from: from.trim(),
          to: to.trim(),
          runs: Number(runs),
          ...(requestsUrl.trim() || requestsQuery.trim()
            ? { requestsUrl: requestsUrl.trim(), requestsQuery: requestsQuery.trim() }
            : {}),
        }),
      );
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const covered = done ? done.runs.reduce((a, r) => a + (r.covered?.seconds ?? 0), 0) : 0;
  return (
    <form className="profiler-import" aria-label={`Add from a profiler to stage ${props.stageName}`} onSubmit={submit}>
      <label>
        Profiler{' '}
        <select value={source} onChange={(e) => setSource(e.target.value as ProfilerImportAsk['source'])}>
          <option value="parca">Parca</option>
          <option value="pyroscope">Pyroscope</option>
        </select>
      </label>{' '}
      <label>
        Profiler URL{' '}
        <input
          type="url"
          required
          value={url}
          placeholder="http://parca.internal:7070"
          onChange={(e) => setUrl(e.target.value)}
        />
      </label>{' '}
      <label>
        Selector <input value={query} placeholder='{job="api"}' onChange={(e) => setQuery(e.target.value)} />
      </label>{' '}
      <label>
        From <input required value={from} onChange={(e) => setFrom(e.target.value)} />
      </label>{' '}
      <label>
        To <input required value={to} onChange={(e) => setTo(e.target.value)} />
      </label>{' '}
      <label>
        Runs <input type="number" min={1} max={100} required value={runs} onChange={(e) => setRuns(e.target.value)} />
      </label>{' '}
      <fieldset className="profiler-requests">
        <legend>Requests (optional: for per-request figures)</legend>
        <label>
          Prometheus URL{' '}
          <input
            type="url"
            value={requestsUrl}
            placeholder="http://prometheus.internal:9090"
            onChange={(e) => setRequestsUrl(e.target.value)}
          />
        </label>{' '}
        <label>
          Requests counter{' '}
          <input
            value={requestsQuery}
            placeholder='http_requests_total{job="api"}'
            onChange={(e) => setRequestsQuery(e.target.value)}
          />
        </label>
        <p className="small">
          The service&apos;s requests counter: each run&apos;s requests are read from its samples around the run&apos;s
          window. Without it, figures stay per second.
        </p>
      </fieldset>{' '}
      <button type="submit" className="primary" disabled={busy || !url.trim()}>
        {busy ? 'Importing…' : 'Import'}
      </button>{' '}
      <button type="button" onClick={props.onClose}>
        Close
      </button>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {done && (
        <div role="status">
          <p className="small">
            {done.results.filter((r) => r.ok).length} files in {done.runs.length} runs, {covered.toFixed(3)} covered
            seconds
          </p>
          <ul className="small" aria-label="Imported runs">
            {done.runs.map((r) => (
              <li key={r.run}>
                run {r.run}: requested {r.requested.start} to {r.requested.end};{' '}
                {r.covered
                  ? `covered ${r.covered.start} to ${r.covered.end} (${r.covered.seconds.toFixed(3)} s)`
                  : 'no delta scrapes'}
                {r.requests &&
                  `; ${Math.round(r.requests.requests)} requests from ${r.requests.from} to ${r.requests.to}`}
              </li>
            ))}
          </ul>
          {done.results
            .filter((r) => !r.ok)
            .map((r) => (
              <p key={r.filename} className="error">
                {!r.ok && r.error.message}
              </p>
            ))}
        </div>
      )}
    </form>
  );
}
