import { useCallback, useRef, useState } from 'react';
import type { StageEditorHandlers, UploadItem } from '../components/upload.tsx';
import { type Comparison, type Stage, api, uploadFile } from '../lib/api.ts';

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
    onFiles: (stageId, files) => {
      if (!token) return;
      const items: UploadItem[] = files.map((f) => ({
        key: `u${++seq.current}`,
        stageId,
        filename: f.name,
        size: f.size,
        progress: 0,
        state: 'uploading',
      }));
      setUploads((u) => [...u, ...items]);
      const update = (key: string, patch: Partial<UploadItem>) =>
        setUploads((u) => u.map((x) => (x.key === key ? { ...x, ...patch } : x)));
      const queue = files.map((file, i) => ({ file, item: items[i] as UploadItem }));
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
      void Promise.all(Array.from({ length: Math.min(PARALLEL_UPLOADS, files.length) }, worker));
    },
  };
  return { uploads, handlers };
}
