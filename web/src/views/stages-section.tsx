import { CodeChanges } from '../components/code-change.tsx';
import { memo } from 'react';
import { formatInt, formatValue } from '../../../server/src/api/format.ts';
import { BusyCaptureWarning, CaptureDetails } from '../components/capture-details.tsx';
import { ConditionsDetails, StageConditionsWarning } from '../components/conditions.tsx';
import { ErrorBox, LazyDetails, Loading } from '../components/common.tsx';
import { PanelBoundary } from '../components/panel-boundary.tsx';
import {
  type BenchLine,
  HowToRead,
  StageTable,
  type StageTableGc,
  WhatChangedList,
} from '../components/stage-table.tsx';
import { ArtifactList } from '../components/upload.tsx';
import type { Stage, StageRow, StageTable as StageTableData } from '../lib/api.ts';
import { copyText, downloadText, slug } from '../lib/export-files.ts';
import { presentLatencyColumns, stageTableCsv, stageTableMarkdown } from '../lib/stage-table-export.ts';
import type { ChangesByStage } from './use-stage-changes.ts';

/** The first stage's own figures in words: "QPS 7,972 req/s, P99 9.27 ms, CPU per request 208 µs/req (medians of 6 runs)". */
function ownFigures(row: StageRow | undefined): string[] {
  if (!row) return [];
  const f = row.figures;
  const lat = presentLatencyColumns([row]);
  const tail = lat.includes('p95') ? 'p95' : lat.includes('p99') ? 'p99' : null;
  const parts = [
    ...(f.rps ? [`QPS ${formatValue(f.rps.median, 'req/s')}`] : []),
    ...(tail && f[tail] ? [`${tail.toUpperCase()} ${formatValue(f[tail].median, 'ms')}`] : []),
    ...(f.cpuPerRequest ? [`CPU per request ${formatValue(f.cpuPerRequest.median, 'nanoseconds/request')}`] : []),
    ...(f.allocPerRequest ? [`allocated per request ${formatValue(f.allocPerRequest.median, 'bytes/request')}`] : []),
    ...(row.errors ? [`${formatInt(row.errors)} errors`] : []),
  ];
  if (parts.length === 0) return [];
  return [`${parts.join(', ')}${row.summary === 'median' ? ` (medians of ${row.loadTests} runs)` : ''}`];
}

/** The stage table's two export formats, each copied or downloaded. */
const STAGE_TABLE_EXPORTS = [
  { label: 'Markdown', ext: 'md', mime: 'text/markdown', text: stageTableMarkdown },
  { label: 'CSV', ext: 'csv', mime: 'text/csv', text: stageTableCsv },
] as const;

/**
 * The stage table, "what changed", the files and the capture records: a memoised component, so a change
 * of the view (a zoom, a search, another tab) does not render them again.
 */
export const StagesSection = memo(function StagesSection({
  title,
  stages,
  table,
  tableLoading,
  tableError,
  reloadTable,
  gc,
  bench,
  changes,
  flash,
}: {
  title: string;
  stages: Stage[];
  table: StageTableData | null;
  tableLoading: boolean;
  tableError: unknown;
  reloadTable: () => void;
  gc: StageTableGc | null;
  bench: Map<string, BenchLine[]> | null;
  changes: ChangesByStage;
  flash: (text: string) => void;
}) {
  const rowOf = (stageId: string) => table?.rows.find((r) => r.stageId === stageId);
  return (
    <section aria-labelledby="stages-h" className="card">
      <div className="section-head">
        <h2 id="stages-h">Stages</h2>
        <div className="actions">
          {STAGE_TABLE_EXPORTS.flatMap((f) => [
            <button
              key={`copy-${f.ext}`}
              type="button"
              disabled={!table}
              onClick={async () => {
                if (!table) return;
                await copyText(f.text(table));
                flash(`${f.label} copied`);
              }}
            >
              {`Copy ${f.label}`}
            </button>,
            <button
              key={`download-${f.ext}`}
              type="button"
              disabled={!table}
              onClick={() => table && downloadText(`${slug(title)}-stages.${f.ext}`, f.text(table), f.mime)}
            >
              {`Download ${f.label}`}
            </button>,
          ])}
        </div>
      </div>
      <PanelBoundary what="capture warning">
        <BusyCaptureWarning stages={stages} />
      </PanelBoundary>
      {table && (
        <PanelBoundary what="conditions warning">
          <StageConditionsWarning rows={table.rows} />
        </PanelBoundary>
      )}
      {table ? (
        <PanelBoundary what="stage table">
          <StageTable table={table} gc={gc} bench={bench} />
        </PanelBoundary>
      ) : tableLoading ? (
        <Loading what="stage table" />
      ) : (
        <ErrorBox error={tableError} onRetry={reloadTable} />
      )}
      {table && <HowToRead alpha={table.alpha} runsNeeded={table.runsNeeded} />}
      <h3>What changed</h3>
      <WhatChangedList
        items={stages.map((s, i) => {
          const c = changes.get(s.id);
          return {
            stageId: s.id,
            name: s.name,
            note: s.note,
            sentences: i === 0 ? (table ? ownFigures(rowOf(s.id)) : null) : c && 'data' in c ? c.data.sentences : null,
            error: c && 'error' in c ? c.error : null,
          };
        })}
      />
      <PanelBoundary what="code change">
        <CodeChanges
          items={stages.slice(1).map((s) => {
            const c = changes.get(s.id);
            return { stageId: s.id, name: s.name, code: c && 'data' in c ? c.data.code : undefined };
          })}
        />
      </PanelBoundary>
      <LazyDetails className="files" summary="Raw files">
        {stages.map((s) => (
          <div key={s.id}>
            <strong>{s.name}</strong>
            <ArtifactList artifacts={s.artifacts} label={`Files of ${s.name}`} />
          </div>
        ))}
      </LazyDetails>
      <PanelBoundary what="capture details">
        <CaptureDetails stages={stages} />
      </PanelBoundary>
      {table && (
        <PanelBoundary what="conditions">
          <ConditionsDetails rows={table.rows} />
        </PanelBoundary>
      )}
    </section>
  );
});
