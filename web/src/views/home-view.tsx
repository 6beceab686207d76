import { useCallback, useState } from 'react';
import { ErrorBox, Loading } from '../components/common.tsx';
import { FormatsTable } from '../components/formats-table.tsx';
import { Link } from '../components/link.tsx';
import { TokenPaste } from '../components/token-paste.tsx';
import { StageEditor } from '../components/upload.tsx';
import { api } from '../lib/api.ts';
import { captureCommandLine } from '../lib/capture-format.ts';
import { copyText } from '../lib/export-files.ts';
import { navigate } from '../lib/navigation.ts';
import { getRecent, getToken, saveToken } from '../lib/tokens.ts';
import { useApi } from './use-fetch.ts';
import { useStageEditor } from './use-stage-editor.ts';

/** `/` — create a comparison, add stages and files; `/?edit=ID` continues editing one. */
export function HomeView({ search }: { search: string }) {
  const editId = new URLSearchParams(search).get('edit');
  return (
    <div className="page home">
      {editId ? <EditComparison key={editId} id={editId} /> : <CreateComparison />}
      <RecentList />
      <FormatsTable />
    </div>
  );
}

function CreateComparison() {
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  return (
    <section aria-labelledby="create-h">
      <h1 id="create-h">Tell the story of an optimization</h1>
      <p className="lead">
        One comparison per optimization: add a stage per step (baseline, easyjson, pooled buffers, …), drop each stage’s
        pprof profiles and load-test outputs (wrk, hey, vegeta, k6, ab, …), then read what changed — stage table,
        flamegraphs side by side, diff, hot paths, timelines — and share the link.
      </p>
      <form
        className="create-form"
        onSubmit={async (e) => {
          e.preventDefault();
          if (!title.trim()) return;
          setBusy(true);
          setError(null);
          try {
            const c = await api('createComparison', {
              params: {},
              body: { title: title.trim(), description: description.trim() },
            });
            saveToken(c.id, c.editToken, title.trim());
            navigate(`/?edit=${encodeURIComponent(c.id)}`);
          } catch (err) {
            setError(err);
          } finally {
            setBusy(false);
          }
        }}
      >
        <label className="field">
          <span>Title</span>
          <input value={title} onChange={(e) => setTitle(e.target.value)} required placeholder="JSON API: 10× QPS" />
        </label>
        <label className="field">
          <span>Description</span>
          <textarea
            value={description}
            onChange={(e) => setDescription(e.target.value)}
            rows={2}
            placeholder="Service, hardware, load generator settings…"
          />
        </label>
        <button type="submit" className="primary" disabled={busy || !title.trim()}>
          {busy ? 'Creating…' : 'Create comparison'}
        </button>
      </form>
      {error !== null && <ErrorBox error={error} />}
      <CaptureCommand />
      <p>
        Or look at the <Link href="/c/demo">demo comparison</Link>.
      </p>
    </section>
  );
}

/** The one-line `stagediff capture` command that records a stage into this server, to copy. */
function CaptureCommand() {
  const [copied, setCopied] = useState(false);
  const command = captureCommandLine(location.origin);
  return (
    <div className="capture-command">
      <p>
        Or record a stage from a terminal: <code>stagediff capture</code> runs your load command, takes the service’s
        pprof profiles over the same window and files the stage here, printing the link.
      </p>
      <div className="command-row">
        <pre>
          <code>{command}</code>
        </pre>
        <button
          type="button"
          onClick={async () => {
            await copyText(command);
            setCopied(true);
            setTimeout(() => setCopied(false), 2000);
          }}
        >
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
    </div>
  );
}

function EditComparison({ id }: { id: string }) {
  const [token, setToken] = useState(() => getToken(id));
  const { data, error, loading, reload } = useApi('getComparison', { params: { id } });
  const [actionError, setActionError] = useState<unknown>(null);
  const onError = useCallback((e: unknown) => setActionError(e), []);
  const { uploads, handlers } = useStageEditor(data, token, reload, onError);
  if (!token) {
    return (
      <section>
        <h1>Not editable here</h1>
        <p>
          This browser has no edit token for this comparison. <Link href={`/c/${encodeURIComponent(id)}`}>View it</Link>
          .
        </p>
        {data && !data.readOnly && <TokenPaste comparisonId={id} title={data.title} onToken={setToken} />}
      </section>
    );
  }
  if (!data) return loading ? <Loading what="comparison" /> : <ErrorBox error={error} onRetry={reload} />;
  return (
    <section aria-labelledby="edit-h">
      <h1 id="edit-h">{data.title}</h1>
      {data.description && <p className="lead">{data.description}</p>}
      <p>
        Add stages in order (the first is the baseline), then drop each stage’s files.{' '}
        <Link href={`/c/${encodeURIComponent(id)}`} className="button primary">
          Open comparison
        </Link>
      </p>
      {actionError !== null && <ErrorBox error={actionError} onDismiss={() => setActionError(null)} />}
      <StageEditor stages={data.stages} uploads={uploads} handlers={handlers} />
    </section>
  );
}

function RecentList() {
  const recent = getRecent();
  return (
    <section aria-labelledby="recent-h" className="recent">
      <h2 id="recent-h">Your comparisons</h2>
      {recent.length === 0 ? (
        <p className="muted">
          Comparisons created in this browser, or opened here with their edit token (pasted, or an edit link), appear
          here; their edit tokens stay in this browser.
        </p>
      ) : (
        <ul>
          {recent.map((r) => (
            <li key={r.id}>
              <Link href={`/c/${encodeURIComponent(r.id)}`}>{r.title}</Link>{' '}
              <Link href={`/?edit=${encodeURIComponent(r.id)}`} className="small">
                edit
              </Link>{' '}
              {r.createdAt && <span className="muted small">{new Date(r.createdAt).toLocaleString()}</span>}
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link href="/c/demo">Open the demo comparison</Link>
      </p>
    </section>
  );
}
