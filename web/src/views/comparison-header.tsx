import { useState } from 'react';
import { formatBytes } from '../../../server/src/api/format.ts';
import { Link } from '../components/link.tsx';
import type { Comparison } from '../lib/api.ts';

/** An address naming no comparison: say so, and the way home (a retry would only ask again). */
export function NoSuchComparison({ id }: { id: string }) {
  return (
    <div className="page not-found">
      <h1>No such comparison</h1>
      <p>
        There is no comparison at <code>/c/{id}</code>: the link may be incomplete or mistyped, or the comparison was
        deleted.
      </p>
      <p>
        <Link href="/" className="button primary">
          Go home
        </Link>{' '}
        <Link href="/c/demo">or open the demo comparison</Link>
      </p>
    </div>
  );
}

export function DescriptionEditor({ value, onSave }: { value: string; onSave: (v: string) => void }) {
  const [v, setV] = useState(value);
  return (
    <label className="field description-field">
      <span>Description</span>
      <textarea
        rows={2}
        value={v}
        onChange={(e) => setV(e.target.value)}
        onBlur={() => v.trim() !== value && onSave(v.trim())}
      />
    </label>
  );
}

export function TitleEditor({ value, onSave }: { value: string; onSave: (v: string) => void }) {
  const [v, setV] = useState(value);
  return (
    <h1>
      <input
        className="title-input"
        aria-label="Comparison title"
        value={v}
        onChange={(e) => setV(e.target.value)}
        onBlur={() => v.trim() && v.trim() !== value && onSave(v.trim())}
        onKeyDown={(e) => e.key === 'Enter' && (e.target as HTMLInputElement).blur()}
      />
    </h1>
  );
}

/** Storage the comparison's files take, and the server's bound on it (MAX_COMPARISON_BYTES). */
type Usage = Comparison['usage'];

export function StorageUsage({ usage }: { usage: Usage }) {
  return (
    <span className="storage-usage" title="storage the comparison's files take on this server">
      {' · '}files {formatBytes(usage.bytes)}
      {usage.maxBytes !== null && ` of ${formatBytes(usage.maxBytes)}`}
    </span>
  );
}
