import { NumTh } from './common.tsx';
import { formatInt, formatMs, formatShare } from '../../../server/src/api/format.ts';
import type { GcStageSummary } from '../lib/gc-summary.ts';

/** Stop-the-world pauses per stage: cycles, forced cycles, p50/p99/max/total pause, GC CPU %, largest heap. */
export function GcTable({ rows }: { rows: GcStageSummary[] }) {
  return (
    <div className="table-scroll">
      <table className="gc-table" aria-label="GC pauses per stage">
        <thead>
          <tr>
            <th scope="col">Stage</th>
            <NumTh>Cycles</NumTh>
            <NumTh>Forced</NumTh>
            <NumTh>STW p50</NumTh>
            <NumTh>STW p99</NumTh>
            <NumTh>STW max</NumTh>
            <NumTh>STW total</NumTh>
            <NumTh title="the runtime's cumulative GC CPU share at the last cycle">GC CPU</NumTh>
            <NumTh title="largest heap at the start of a cycle, and the largest goal">Max heap / goal</NumTh>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.stageId} data-stage-id={r.stageId}>
              <th scope="row">
                {r.name}
                {r.traces > 1 && <span className="muted small"> ({r.traces} traces pooled)</span>}
              </th>
              <td className="num" data-field="cycles" data-value={r.cycles}>
                {formatInt(r.cycles)}
              </td>
              <td className="num" data-field="forced" data-value={r.forcedCycles}>
                {formatInt(r.forcedCycles)}
              </td>
              <td className="num" data-field="p50" data-value={r.stwPauseMs.p50}>
                {formatMs(r.stwPauseMs.p50)}
              </td>
              <td className="num" data-field="p99" data-value={r.stwPauseMs.p99}>
                {formatMs(r.stwPauseMs.p99)}
              </td>
              <td className="num" data-field="max" data-value={r.stwPauseMs.max}>
                {formatMs(r.stwPauseMs.max)}
              </td>
              <td className="num" data-field="total" data-value={r.stwPauseMs.total}>
                {formatMs(r.stwPauseMs.total)}
              </td>
              <td className="num" data-field="cpu" data-value={r.cpuPercent}>
                {formatShare(r.cpuPercent / 100)}
              </td>
              <td className="num" data-field="heap" data-value={r.maxHeapMb}>
                {formatInt(r.maxHeapMb)} MB <span className="muted">/ {formatInt(r.maxGoalMb)} MB</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
