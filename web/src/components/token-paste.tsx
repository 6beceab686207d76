import { useState } from 'react';
import { ApiError, api } from '../lib/api.ts';
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
