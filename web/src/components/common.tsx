import { type ReactNode, useState } from 'react';
import { ApiError } from '../lib/api.ts';

export function Loading({ what }: { what: string }) {
  return (
    <div className="loading" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" /> Loading {what}…
    </div>
  );
}

/**
 * A failed request, in words. Retry is offered only where asking again may help (the network, a busy
 * or failing server): a 4xx answer (not found, refused) would be the same the next time.
 */
export function ErrorBox({
  error,
  onRetry,
  onDismiss,
}: {
  error: unknown;
  onRetry?: () => void;
  /** For the failure of an action (an edit, a deletion): put it away. */
  onDismiss?: () => void;
}) {
  const message = error instanceof Error ? error.message : String(error);
  const final = error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
  return (
    <div className="error-box" role="alert">
      <strong>Error:</strong> {message}
      {onRetry && !final && (
        <button type="button" className="link-button" onClick={onRetry}>
          Retry
        </button>
      )}
      {onDismiss && (
        <button type="button" className="link-button" onClick={onDismiss}>
          Dismiss
        </button>
      )}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="empty">{children}</p>;
}

export interface TabDef<K extends string> {
  key: K;
  label: string;
}

/** Accessible tab list (roles tablist/tab, arrow keys move between tabs). */
export function Tabs<K extends string>(props: {
  tabs: TabDef<K>[];
  active: K;
  onChange: (k: K) => void;
  label: string;
}) {
  const { tabs, active, onChange, label } = props;
  return (
    <div className="tabs" role="tablist" aria-label={label}>
      {tabs.map((t, i) => (
        <button
          key={t.key}
          type="button"
          role="tab"
          id={`tab-${t.key}`}
          aria-selected={t.key === active}
          aria-controls={`panel-${t.key}`}
          tabIndex={t.key === active ? 0 : -1}
          className={t.key === active ? 'tab active' : 'tab'}
          onClick={() => onChange(t.key)}
          onKeyDown={(e) => {
            if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
            const next = tabs[(i + (e.key === 'ArrowRight' ? 1 : tabs.length - 1)) % tabs.length];
            if (next) {
              onChange(next.key);
              document.getElementById(`tab-${next.key}`)?.focus();
            }
          }}
        >
          {t.label}
        </button>
      ))}
    </div>
  );
}

export function Select<V extends string>(props: {
  label: string;
  value: V;
  options: { value: V; label: string }[];
  onChange: (v: V) => void;
  disabled?: boolean;
}) {
  return (
    <label className="field">
      <span>{props.label}</span>
      <select value={props.value} disabled={props.disabled} onChange={(e) => props.onChange(e.target.value as V)}>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * A verdict as words that wrap cleanly: the change, then its parenthesis ("(p=0.041, n=6+6)") whole on
 * the next line when both do not fit — never broken inside either. The text is unchanged.
 */
export function VerdictWords({ text }: { text: string }) {
  const at = text.indexOf(' (');
  // A long parenthesis ("2+2 runs: too few to test — …") wraps as any sentence does.
  if (at < 0 || text.length - at > 28) return <>{text}</>;
  return (
    <>
      <span className="nowrap-part">{text.slice(0, at)}</span> <span className="nowrap-part">{text.slice(at + 1)}</span>
    </>
  );
}

/**
 * A `<details>` whose content is rendered the first time it is opened, and kept after: closed, its rows
 * cost the page nothing (not rendered, not laid out) — the first draw of a large comparison does not
 * wait for files and records nobody has asked to see.
 */
export function LazyDetails(props: { className: string; summary: ReactNode; children: ReactNode }) {
  const [opened, setOpened] = useState(false);
  return (
    <details className={props.className} onToggle={(e) => e.currentTarget.open && setOpened(true)}>
      <summary>{props.summary}</summary>
      {opened && props.children}
    </details>
  );
}

/** A numeric column's header cell (right-aligned with its figures). */
export function NumTh({ title, children }: { title?: string; children: ReactNode }) {
  return (
    <th scope="col" className="num" title={title}>
      {children}
    </th>
  );
}
