import { useId, useState } from 'react';
import { ApiError, api } from '../lib/api.ts';
import { copyText } from '../lib/export-files.ts';
import { saveToken } from '../lib/tokens.ts';

/**
 * "Have an edit token? Paste it": a token printed by the CLI or CI (`stagediff upload`, `capture
 * --server`) opens the comparison for editing in this browser. The server checks it (a request that
 * changes nothing, so the comparison and its cached views stay as they are), then it is kept like a
 * token created here.
 */
export function TokenPaste(props: { comparisonId: string; title: string; onToken: (token: string) => void }) {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  if (!open)
    return (
      <button type="button" className="link-button small" onClick={() => setOpen(true)}>
        Have an edit token? Paste it
      </button>
    );
  return (
    <form
      className="token-paste"
      aria-label="Paste an edit token"
      onSubmit={async (e) => {
        e.preventDefault();
        const token = value.trim();
        if (!token) return;
        setBusy(true);
        setProblem(null);
        try {
          await api('checkEditToken', { params: { id: props.comparisonId }, token });
          saveToken(props.comparisonId, token, props.title);
          props.onToken(token);
        } catch (err) {
          setProblem(
            err instanceof ApiError && (err.status === 401 || err.status === 403)
              ? 'This token does not open this comparison.'
              : err instanceof Error
                ? err.message
                : String(err),
          );
        } finally {
          setBusy(false);
        }
      }}
    >
      <label className="field">
        <span>Edit token</span>
        <input
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={value}
          aria-invalid={problem ? true : undefined}
          onChange={(e) => setValue(e.target.value)}
          placeholder="printed by stagediff upload or capture"
        />
      </label>
      <button type="submit" className="primary" disabled={busy || !value.trim()}>
        {busy ? 'Checking…' : 'Use token'}
      </button>
      <button type="button" onClick={() => setOpen(false)}>
        Cancel
      </button>
      {problem && (
        <span className="bad small" role="alert">
          {problem}
        </span>
      )}
    </form>
  );
}

/** What follows `#` in an edit link: `edit-token=TOKEN`. A fragment never reaches the server or its logs. */
const EDIT_LINK_KEY = 'edit-token';

/** A link that opens the comparison for editing in another browser (it keeps the token, as a paste does). */
export function editLinkOf(origin: string, id: string, token: string): string {
  return `${origin}/c/${encodeURIComponent(id)}#${EDIT_LINK_KEY}=${encodeURIComponent(token)}`;
}

/** The edit token an edit link carries in the page's address, or null. */
export function editTokenInAddress(): string | null {
  const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
  return hash.get(EDIT_LINK_KEY)?.trim() || null;
}

/** The address without its edit token, so neither the history entry nor a copied link keeps it. */
export function dropEditTokenFromAddress(): void {
  const hash = new URLSearchParams(location.hash.replace(/^#/, ''));
  if (!hash.has(EDIT_LINK_KEY)) return;
  hash.delete(EDIT_LINK_KEY);
  const rest = hash.toString();
  history.replaceState(history.state, '', `${location.pathname}${location.search}${rest ? `#${rest}` : ''}`);
}

/** Commands for CI that add stages to this comparison with the token kept as a secret (STAGEDIFF_TOKEN). */
export function ciSnippetOf(origin: string, id: string): string {
  const at = `--server ${origin} --comparison ${id} --token "$STAGEDIFF_TOKEN"`;
  return [
    '# STAGEDIFF_TOKEN: this comparison’s edit token, kept as a CI secret',
    `npx stagediff upload ${at} --stage NAME cpu.pb.gz wrk.txt`,
    `npx stagediff capture ${at} --stage NAME --pprof http://127.0.0.1:6060 -- wrk -t2 -c32 -d30s --latency http://127.0.0.1:8080/`,
  ].join('\n');
}

/**
 * "Share edit access": the edit token this browser holds, shown and copied, with an edit link and the
 * CI commands that use it. Whoever gets the token can change and delete the comparison.
 */
export function ShareEditAccess(props: { comparisonId: string; token: string; onClose: () => void }) {
  const origin = location.origin;
  return (
    <section className="card share-edit" aria-label="Share edit access">
      <p>
        Anyone with this token can add, change and delete this comparison’s stages and files, and delete it. Give it to
        a teammate (they paste it, or open the edit link) or to CI as a secret.
      </p>
      <CopyField what="Edit token" text={props.token} />
      <CopyField what="Edit link" text={editLinkOf(origin, props.comparisonId, props.token)} />
      <CopyField what="CI commands" text={ciSnippetOf(origin, props.comparisonId)} lines={3} />
      <button type="button" onClick={props.onClose}>
        Close
      </button>
    </section>
  );
}

/** A read-only field and its copy button. */
function CopyField(props: { what: string; text: string; lines?: number }) {
  const id = useId();
  const [copied, setCopied] = useState(false);
  return (
    <div className="command-row">
      <div className="field">
        <label htmlFor={id}>{props.what}</label>
        {props.lines ? (
          <textarea id={id} readOnly rows={props.lines} spellCheck={false} value={props.text} />
        ) : (
          <input id={id} readOnly spellCheck={false} value={props.text} onFocus={(e) => e.currentTarget.select()} />
        )}
      </div>
      <button
        type="button"
        aria-label={`Copy ${props.what.toLowerCase()}`}
        onClick={async () => {
          await copyText(props.text);
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}
