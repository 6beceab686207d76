import { describe, expect, it } from 'vitest';
import type { ChangePointMark } from '../lib/api.ts';
import { changeMarks } from './trajectory.tsx';

const mark = (figure: ChangePointMark['figure'], stageId: string, previousStageId: string): ChangePointMark => ({
  figure,
  stageId,
  stageName: stageId,
  previousStageId,
  previousStageName: previousStageId,
  pValue: 1e-6,
  meanBefore: 100,
  meanAfter: 50,
  changePercent: -50,
  direction: 'worse',
});

describe('changeMarks', () => {
  const stages = ['a', 'b', 'c', 'd', 'e'];
  it('puts a mark halfway between the stage before the change and the first after it', () => {
    // 5 stages over 220 px with 4 px padding: stage i at 4 + i·53.
    const [m] = changeMarks([mark('rps', 'c', 'b')], stages, 220, 4);
    expect(m).toMatchObject({ stageId: 'c', label: 'QPS' });
    expect(m!.x).toBeCloseTo((4 + 53 + 4 + 2 * 53) / 2, 9);
  });

  it('one mark per stage, naming every figure that shifts there; stages not drawn get none', () => {
    const got = changeMarks(
      [mark('rps', 'd', 'c'), mark('p99', 'd', 'c'), mark('cpuPerRequest', 'b', 'a'), mark('rps', 'zz', 'e')],
      stages,
      220,
      4,
    );
    expect(got.map((c) => [c.stageId, c.label])).toEqual([
      ['d', 'QPS, P99'],
      ['b', 'CPU/req'],
    ]);
    // A mark on the first drawn stage has no stage before it on this axis.
    expect(changeMarks([mark('rps', 'a', 'x')], stages, 220, 4)).toEqual([]);
  });
});
