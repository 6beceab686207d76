import { useRef, useState, type DragEvent } from 'react';
import { formatFileSize } from '../../../server/src/api/format.ts';
import { type Artifact, type Stage, apiUrl } from '../lib/api.ts';
import { describeArtifact } from '../lib/artifact-summary.ts';
import { ProfilerImportForm, type ProfilerImportAsk, type ProfilerImportReply } from './profiler-import.tsx';

/** Per-file upload state shown under a stage. */
export interface UploadItem {
  key: string;
  stageId: string;
  filename: string;
  size: number;
  progress: number;
  state: 'uploading' | 'done' | 'error';
  artifact?: Artifact;
  error?: string;
  /** Refused as a duplicate: the name of the file of the stage that already holds these bytes. */
  duplicateOf?: string | null;
  /** The run of a capture the file belongs to ("run 3 of 6"). */
  run?: string | null;
  /** A line that is no file sent (a capture record read): what it says. */
  note?: string;
}

/** A file as picked or dropped, with its path inside the folder picked ("baseline/run-1/cpu.pb.gz"). */
export interface PickedFile {
  file: File;
  path: string;
}

/** Files from a file input: a folder input gives each one's path inside the folder. */
function fromInput(files: FileList | null): PickedFile[] {
  return Array.from(files ?? []).map((file) => ({ file, path: file.webkitRelativePath || file.name }));
}

/** Every file of a dropped entry, folders read through (a dropped folder keeps its name as the first part). */
async function readEntry(entry: FileSystemEntry, out: PickedFile[]): Promise<void> {
  if (entry.isFile) {
    const file = await new Promise<File>((res, rej) => (entry as FileSystemFileEntry).file(res, rej));
    out.push({ file, path: entry.fullPath.replace(/^\/+/, '') });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers in batches until an empty one.
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((res, rej) => reader.readEntries(res, rej));
    if (batch.length === 0) break;
    for (const e of batch) await readEntry(e, out);
  }
}

/** What a drop carries: its files, and the files of any folder dropped. */
async function fromDrop(dt: DataTransfer): Promise<PickedFile[]> {
  // Entries must be taken while the drop event runs; reading them may wait.
  const entries = Array.from(dt.items ?? [])
    .map((i) => (i.kind === 'file' ? i.webkitGetAsEntry?.() : null))
    .filter((e): e is FileSystemEntry => !!e);
  if (entries.length === 0 || !entries.some((e) => e.isDirectory))
    return Array.from(dt.files).map((file) => ({ file, path: file.name }));
  const out: PickedFile[] = [];
  for (const e of entries) await readEntry(e, out);
  return out;
}

export interface StageEditorHandlers {
  onAddStage: (name: string, note: string) => Promise<void> | void;
  onRename: (stageId: string, name: string) => Promise<void> | void;
  onNote: (stageId: string, note: string) => Promise<void> | void;
  onMove: (stageId: string, dir: -1 | 1) => Promise<void> | void;
  onDelete: (stageId: string) => Promise<void> | void;
  /** Removes one file from its stage. */
  onDeleteFile: (artifactId: string) => Promise<void> | void;
  /** Files or a folder picked or dropped (a `stagediff capture --out` folder uploads as its capture.json lists). */
  onFiles: (stageId: string, files: PickedFile[]) => void;
  /** A source archive (.tar.gz or .zip) picked: stored as the stage's sources, replacing any. */
  onSources: (stageId: string, file: File) => Promise<void> | void;
  /** Runs imported from a continuous profiler's window (the server fetches); rejects with the server's error. */
  onImport?: (stageId: string, ask: ProfilerImportAsk) => Promise<ProfilerImportReply>;
}

function EditableText(props: { label: string; value: string; onSave: (v: string) => void; placeholder?: string }) {
  const [v, setV] = useState(props.value);
  const [lastProp, setLastProp] = useState(props.value);
  if (props.value !== lastProp) {
    setLastProp(props.value);
    setV(props.value);
  }
  const commit = () => {
    if (v.trim() !== props.value) props.onSave(v.trim());
  };
  return (
    <input
      className="inline-edit"
      aria-label={props.label}
      value={v}
      placeholder={props.placeholder}
      onChange={(e) => setV(e.target.value)}
      onBlur={commit}
      onKeyDown={(e) => {
        if (e.key === 'Enter') (e.target as HTMLInputElement).blur();
        if (e.key === 'Escape') setV(props.value);
      }}
    />
  );
}

function rawUrl(a: Artifact): string {
  return apiUrl('rawArtifact', { params: { artifactId: a.id } });
}

/** A delete button for one file of a stage (asks first). */
function DeleteFile({ a, onDelete }: { a: Artifact; onDelete: (artifactId: string) => Promise<void> | void }) {
  return (
    <button
      type="button"
      className="danger small-button"
      aria-label={`Delete file ${a.filename}`}
      title="Remove this file from the stage"
      onClick={() => {
        if (confirm(`Delete “${a.filename}” from this stage?`)) void onDelete(a.id);
      }}
    >
      ✕
    </button>
  );
}

function ArtifactLine({ a, onDelete }: { a: Artifact; onDelete?: (artifactId: string) => Promise<void> | void }) {
  return (
    <li className="artifact" data-artifact-id={a.id}>
      <a href={rawUrl(a)} download={a.filename} title="Download the original file">
        {a.filename}
      </a>{' '}
      <span className="badge">{a.format}</span> <span className="muted small">{formatFileSize(a.size)}</span>{' '}
      <span className="small">{describeArtifact(a)}</span>
      {onDelete && (
        <>
          {' '}
          <DeleteFile a={a} onDelete={onDelete} />
        </>
      )}
    </li>
  );
}

/** Why a file was refused, at the file: a duplicate names the file already there. */
function UploadError({ u }: { u: UploadItem }) {
  if (u.duplicateOf !== undefined)
    return (
      <span className="bad" title={u.error}>
        ✗ already in this stage{u.duplicateOf ? ` as ${u.duplicateOf}` : ''}: a run uploaded twice is one run; nothing
        was stored
      </span>
    );
  return <span className="bad">✗ {u.error}</span>;
}

/** The next free name for pasted text in a stage: paste-1.txt, paste-2.txt, … */
export function nextPasteName(taken: readonly string[]): string {
  let n = 0;
  for (const name of taken) {
    const m = /^paste-(\d+)\.txt$/.exec(name);
    if (m) n = Math.max(n, Number(m[1]));
  }
  return `paste-${n + 1}.txt`;
}

/**
 * Text pasted from a terminal (a wrk, hey, ab… output, with its prompt lines if any) uploaded as a file
 * of the stage, as if that output had been saved and picked.
 */
function PasteBox(props: { stageName: string; fileName: string; onFile: (file: File) => void; onClose: () => void }) {
  const [text, setText] = useState('');
  return (
    <form
      className="paste-box"
      aria-label={`Paste an output into stage ${props.stageName}`}
      onSubmit={(e) => {
        e.preventDefault();
        if (!text.trim()) return;
        props.onFile(new File([text], props.fileName, { type: 'text/plain' }));
        setText('');
      }}
    >
      <label className="field grow">
        <span>Pasted output (uploaded as {props.fileName})</span>
        <textarea
          rows={6}
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder="a load tool's output as the terminal printed it (wrk, hey, ab, vegeta report, k6…)"
        />
      </label>
      <button type="submit" className="primary" disabled={!text.trim()}>
        Upload pasted text
      </button>
      <button type="button" onClick={props.onClose}>
        Close
      </button>
    </form>
  );
}

function StageCard(props: {
  stage: Stage;
  index: number;
  count: number;
  uploads: UploadItem[];
  h: StageEditorHandlers;
}) {
  const { stage, index, count, uploads, h } = props;
  const [over, setOver] = useState(false);
  const [pasting, setPasting] = useState(false);
  const [importing, setImporting] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const sourceInput = useRef<HTMLInputElement>(null);
  // Files just uploaded are already listed with their result; list only the others below.
  const shownAbove = new Set(uploads.flatMap((u) => (u.artifact ? [u.artifact.id] : [])));
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    void fromDrop(e.dataTransfer).then((files) => files.length > 0 && h.onFiles(stage.id, files));
  };
  return (
    <section className="stage-card" aria-label={`Stage ${stage.name}`}>
      <div className="stage-head">
        <span className="stage-index">{index + 1}</span>
        <EditableText
          label={`Name of stage ${stage.name}`}
          value={stage.name}
          onSave={(v) => v && h.onRename(stage.id, v)}
        />
        <EditableText
          label={`Key action of stage ${stage.name}`}
          value={stage.note}
          placeholder="key action, e.g. “generated JSON encoder”"
          onSave={(v) => h.onNote(stage.id, v)}
        />
        <button
          type="button"
          aria-label={`Move ${stage.name} up`}
          disabled={index === 0}
          onClick={() => h.onMove(stage.id, -1)}
        >
          ↑
        </button>
        <button
          type="button"
          aria-label={`Move ${stage.name} down`}
          disabled={index === count - 1}
          onClick={() => h.onMove(stage.id, 1)}
        >
          ↓
        </button>
        <button
          type="button"
          className="danger"
          aria-label={`Delete stage ${stage.name}`}
          onClick={() => {
            if (confirm(`Delete stage “${stage.name}” and its files?`)) void h.onDelete(stage.id);
          }}
        >
          ✕
        </button>
      </div>
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target only; the keyboard path is the file input button inside it */}
      <div
        className={over ? 'dropzone over' : 'dropzone'}
        onDragOver={(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={onDrop}
      >
        <span>Drop pprof profiles, load-test outputs or a capture folder here, or </span>
        <button type="button" className="link-button" onClick={() => input.current?.click()}>
          choose files
        </button>
        <span> or </span>
        <button type="button" className="link-button" onClick={() => folderInput.current?.click()}>
          a folder
        </button>
        <input
          ref={input}
          type="file"
          multiple
          hidden
          aria-label={`Add files to stage ${stage.name}`}
          onChange={(e) => {
            const files = fromInput(e.target.files);
            e.target.value = '';
            if (files.length) h.onFiles(stage.id, files);
          }}
        />
        <span> or </span>
        <button type="button" className="link-button" aria-expanded={pasting} onClick={() => setPasting(!pasting)}>
          paste an output
        </button>
        {h.onImport && (
          <>
            <span> or </span>
            <button
              type="button"
              className="link-button"
              aria-expanded={importing}
              onClick={() => setImporting(!importing)}
            >
              add from a profiler
            </button>
          </>
        )}
        <span> · sources: </span>
        <button type="button" className="link-button" onClick={() => sourceInput.current?.click()}>
          a source archive
        </button>
        <input
          ref={sourceInput}
          type="file"
          hidden
          accept=".tar.gz,.tgz,.zip,application/gzip,application/zip"
          aria-label={`Add a source archive to stage ${stage.name}`}
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = '';
            if (f) void h.onSources(stage.id, f);
          }}
        />
        <input
          ref={(el) => {
            folderInput.current = el;
            // Not in React's attribute list: a folder picker (every file inside, with its path).
            el?.setAttribute('webkitdirectory', '');
          }}
          type="file"
          hidden
          aria-label={`Add a folder to stage ${stage.name}`}
          onChange={(e) => {
            const files = fromInput(e.target.files);
            e.target.value = '';
            if (files.length) h.onFiles(stage.id, files);
          }}
        />
      </div>
      {pasting && (
        <PasteBox
          stageName={stage.name}
          fileName={nextPasteName([...stage.artifacts.map((a) => a.filename), ...uploads.map((u) => u.filename)])}
          onFile={(file) => h.onFiles(stage.id, [{ file, path: file.name }])}
          onClose={() => setPasting(false)}
        />
      )}
      {importing && h.onImport && (
        <ProfilerImportForm
          stageName={stage.name}
          onImport={(ask) => h.onImport!(stage.id, ask)}
          onClose={() => setImporting(false)}
        />
      )}
      {stage.sources && (
        <p className="small muted stage-sources">
          Sources: {stage.sources.files} files of {stage.sources.modulePath || 'an unnamed module'}
          {stage.sources.revision ? ` at ${stage.sources.revision.slice(0, 12)}` : ''}
          {stage.sources.dirty ? ' (dirty)' : ''} from {stage.sources.origin}
        </p>
      )}
      {uploads.length > 0 && (
        <ul className="uploads" aria-label={`Uploads to ${stage.name}`}>
          {uploads.map((u) => (
            <li key={u.key} className={`upload upload-${u.state}`} data-filename={u.filename}>
              <span className="upload-name">{u.filename}</span>
              {u.run && <span className="badge upload-run">{u.run}</span>}
              {u.note === undefined && (
                <progress max={1} value={u.progress} aria-label={`Upload progress of ${u.filename}`} />
              )}
              <span className="upload-result" role="status">
                {u.state === 'uploading' && `${Math.round(u.progress * 100)} %`}
                {u.note}
                {u.state === 'done' && u.artifact && (
                  <>
                    ✓ <span className="badge">{u.artifact.format}</span> {describeArtifact(u.artifact)}{' '}
                    <a href={rawUrl(u.artifact)} download={u.artifact.filename} className="small">
                      raw
                    </a>{' '}
                    <DeleteFile a={u.artifact} onDelete={h.onDeleteFile} />
                  </>
                )}
                {u.state === 'error' && <UploadError u={u} />}
              </span>
            </li>
          ))}
        </ul>
      )}
      {stage.artifacts.some((a) => !shownAbove.has(a.id)) && (
        <ul className="artifacts" aria-label={`Files of ${stage.name}`}>
          {stage.artifacts
            .filter((a) => !shownAbove.has(a.id))
            .map((a) => (
              <ArtifactLine key={a.id} a={a} onDelete={h.onDeleteFile} />
            ))}
        </ul>
      )}
    </section>
  );
}

/** Stages with add/rename/annotate/reorder/delete and per-stage file drop zones. */
export function StageEditor(props: { stages: Stage[]; uploads: UploadItem[]; handlers: StageEditorHandlers }) {
  const { stages, uploads, handlers } = props;
  const [name, setName] = useState('');
  const [note, setNote] = useState('');
  const sorted = [...stages].sort((a, b) => a.position - b.position);
  return (
    <div className="stage-editor">
      {sorted.map((s, i) => (
        <StageCard
          key={s.id}
          stage={s}
          index={i}
          count={sorted.length}
          uploads={uploads.filter((u) => u.stageId === s.id)}
          h={handlers}
        />
      ))}
      <form
        className="add-stage"
        onSubmit={(e) => {
          e.preventDefault();
          const n = name.trim();
          if (!n) return;
          void handlers.onAddStage(n, note.trim());
          setName('');
          setNote('');
        }}
      >
        <label className="field">
          <span>New stage name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder={stages.length ? 'e.g. easyjson' : 'baseline'}
          />
        </label>
        <label className="field grow">
          <span>New stage key action</span>
          <input value={note} onChange={(e) => setNote(e.target.value)} placeholder="what this stage changed" />
        </label>
        <button type="submit" disabled={!name.trim()}>
          Add stage
        </button>
      </form>
    </div>
  );
}

/** Read-only list of a stage's files with links to the original bytes. */
export function ArtifactList({ artifacts, label }: { artifacts: Artifact[]; label: string }) {
  if (artifacts.length === 0) return <p className="muted small">No files.</p>;
  return (
    <ul className="artifacts" aria-label={label}>
      {artifacts.map((a) => (
        <ArtifactLine key={a.id} a={a} />
      ))}
    </ul>
  );
}
