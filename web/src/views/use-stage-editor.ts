import { readableCaptures } from '../lib/capture-format.ts';
import { useCallback, useRef, useState } from 'react';
import type { PickedFile, StageEditorHandlers, UploadItem } from '../components/upload.tsx';
import { type Comparison, type Stage, api, uploadFile, uploadSources } from '../lib/api.ts';
import {
  type CapturePlan,
  type FoundRecord,
  asCaptureRecord,
  captureFiles,
  isSourceArchiveName,
  pickedRoot,
  planCapture,
  stageFileName,
} from '../lib/capture-folder.ts';

const PARALLEL_UPLOADS = 2;

/**
 * Edit actions on one comparison (stages, uploads, files), authorised with the browser's edit token.
 * `reload` refreshes the comparison after each change; `onError` reports a failed action.
 */
export function useStageEditor(
  comparison: Comparison | null,
  token: string | null,
  reload: () => void,
  onError: (e: unknown) => void,
): { uploads: UploadItem[]; handlers: StageEditorHandlers } {
  const [uploads, setUploads] = useState<UploadItem[]>([]);
  const seq = useRef(0);
  const id = comparison?.id ?? '';

  const run = useCallback(
    async (f: () => Promise<unknown>) => {
      try {
        await f();
      } catch (e) {
        onError(e);
      } finally {
        reload();
      }
    },
    [reload, onError],
  );

  const ordered = (): Stage[] => [...(comparison?.stages ?? [])].sort((a, b) => a.position - b.position);

  const update = (key: string, patch: Partial<UploadItem>) =>
    setUploads((u) => u.map((x) => (x.key === key ? { ...x, ...patch } : x)));

  /** Uploads files, PARALLEL_UPLOADS at a time, each with its own line and result. */
  const uploadAll = async (stageId: string, list: { file: File; name: string; run: string | null }[]) => {
    if (!token) return;
    const items: UploadItem[] = list.map((f) => ({
      key: `u${++seq.current}`,
      stageId,
      filename: f.name,
      run: f.run,
      size: f.file.size,
      progress: 0,
      state: 'uploading',
    }));
    setUploads((u) => [...u, ...items]);
    // The stage's name for the file: its path below the folder picked.
    const queue = list.map((f, i) => ({
      file: f.name === f.file.name ? f.file : new File([f.file], f.name, { type: f.file.type }),
      item: items[i] as UploadItem,
    }));
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const { file, item } = next;
        const result = await uploadFile({ id, stageId }, file, token, (p) => update(item.key, { progress: p }));
        if (result.ok) update(item.key, { state: 'done', progress: 1, artifact: result.artifact });
        else
          update(item.key, {
            state: 'error',
            progress: 1,
            error: result.error.message,
            duplicateOf: result.error.code === 'duplicate' ? (result.error.existing?.filename ?? null) : undefined,
          });
        reload();
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL_UPLOADS, list.length) }, worker));
  };

  /** A line under the stage that is no file being sent: a capture record read, a file it lists that is missing. */
  const note = (stageId: string, filename: string, state: UploadItem['state'], text: string) =>
    setUploads((u) => [
      ...u,
      {
        key: `u${++seq.current}`,
        stageId,
        filename,
        size: 0,
        progress: 1,
        state,
        ...(state === 'error' ? { error: text } : { note: text }),
      },
    ]);

  /** A source archive as the stage's sources (replacing any), with a line saying what it holds or why not. */
  const sendSources = async (stageId: string, file: File, name: string) => {
    if (!token) return;
    try {
      const s = await uploadSources({ id, stageId }, file, token);
      note(stageId, name, 'done', `the stage's sources: ${s.files} files of ${s.modulePath || 'the module'}`);
    } catch (e) {
      note(stageId, name, 'error', (e as Error).message);
    }
    reload();
  };

  /**
   * Picked files or a folder: without capture records, each file as picked (named by its path below the
   * folder); with `stagediff capture` records (capture.json), what they list as load tests and profiles,
   * labelled with their run, then the records, so the stage shows how it was captured.
   */
  const uploadPicked = async (stageId: string, picked: PickedFile[]) => {
    const root = pickedRoot(picked.map((p) => p.path));
    const manifests = captureFiles(picked);
    if (manifests.length === 0) {
      // A source archive among the files (src.zip, a .tar.gz of the module) is the stage's sources.
      const archives = picked.filter((p) => isSourceArchiveName(p.path));
      await uploadAll(
        stageId,
        picked
          .filter((p) => !isSourceArchiveName(p.path))
          .map((p) => ({ file: p.file, name: stageFileName(p.path, root), run: null })),
      );
      const [first, ...more] = archives.map((a) => ({ file: a.file, name: stageFileName(a.path, root) }));
      if (first) await sendSources(stageId, first.file, first.name);
      for (const m of more)
        note(stageId, m.name, 'error', `a stage has one source archive: ${first?.name} was taken, not this one`);
      return;
    }
    const found: FoundRecord[] = [];
    for (const m of manifests) {
      const name = stageFileName(m.picked.path, root);
      let record = null;
      try {
        record = asCaptureRecord(JSON.parse(await m.picked.file.text()));
      } catch {
        /* said below */
      }
      if (record) found.push({ dir: m.dir, record });
      else
        note(
          stageId,
          name,
          'error',
          'not a stagediff capture record (schema stagediff-capture/1); nothing of its folder was read',
        );
    }
    const plan: CapturePlan<PickedFile> = planCapture(
      picked.map((p) => ({ ...p, size: p.file.size })),
      found,
    );
    const runs = found.reduce((n, r) => n + r.record.runs.length, 0);
    if (found.length > 0)
      note(
        stageId,
        found.length === 1 ? 'capture.json' : `${found.length} capture.json files`,
        'done',
        `how the stage was captured: ${runs} run${runs === 1 ? '' : 's'}, ${plan.files.length} files to upload` +
          (plan.left.length > 0
            ? `; not uploaded (records, raw outputs, other runs' sources): ${plan.left.join(', ')}`
            : ''),
      );
    for (const m of plan.missing) note(stageId, m, 'error', 'listed in capture.json but not among the files picked');
    await uploadAll(
      stageId,
      plan.files.map((f) => ({ file: f.picked.file, name: f.name, run: f.run })),
    );
    // The sources capture kept, as `upload --source` sends them.
    const sources = plan.sources;
    if (sources) await sendSources(stageId, sources.file, stageFileName(sources.path, root));
    // The records, once their files are in; a record the stage already holds is not added twice.
    const held = new Set(
      readableCaptures(comparison?.stages.find((s) => s.id === stageId)?.captures).map(
        (c) => `${c.startedAt}|${c.command}`,
      ),
    );
    await run(async () => {
      for (const { record } of plan.records) {
        if (held.has(`${record.startedAt}|${record.command}`)) continue;
        await api('addCapture', { params: { id, stageId }, body: record, token });
      }
    });
  };

  const handlers: StageEditorHandlers = {
    onAddStage: (name, note) => run(() => api('createStage', { params: { id }, body: { name, note }, token })),
    onRename: (stageId, name) => run(() => api('patchStage', { params: { id, stageId }, body: { name }, token })),
    onNote: (stageId, note) => run(() => api('patchStage', { params: { id, stageId }, body: { note }, token })),
    onDelete: (stageId) => run(() => api('deleteStage', { params: { id, stageId }, token })),
    onDeleteFile: (artifactId) =>
      run(async () => {
        await api('deleteArtifact', { params: { id, artifactId }, token });
        // The file's upload line goes with it.
        setUploads((u) => u.filter((x) => x.artifact?.id !== artifactId));
      }),
    onMove: (stageId, dir) =>
      run(() => {
        const ids = ordered().map((s) => s.id);
        const i = ids.indexOf(stageId);
        const j = i + dir;
        if (i < 0 || j < 0 || j >= ids.length) return Promise.resolve();
        [ids[i], ids[j]] = [ids[j] as string, ids[i] as string];
        return api('orderStages', { params: { id }, body: { stageIds: ids }, token });
      }),
    onSources: (stageId, file) =>
      run(async () => {
        if (token) await uploadSources({ id, stageId }, file, token);
      }),
    onFiles: (stageId, picked) => {
      if (!token) return;
      void uploadPicked(stageId, picked);
    },
    // The form shows the answer (runs and covered windows) or the server's refusal itself.
    onImport: async (stageId, ask) => {
      const reply = await api('importFromProfiler', { params: { id, stageId }, body: ask, token });
      reload();
      return reply;
    },
  };
  return { uploads, handlers };
}
