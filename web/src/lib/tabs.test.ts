/// <reference types="node" />
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Stage } from './api.ts';
import { TABS, TAB_TABLE, stagesWithWhatTheTabNeeds, tabSpec, visibleTabs } from './tabs.ts';
import { parseViewState } from './url-state.ts';

/** The stages of the demo comparison as GET /api/comparisons/demo lists them (their files' summaries). */
const demo = JSON.parse(readFileSync(new URL('./testdata/demo.stages.json', import.meta.url), 'utf8')) as Stage[];
const withOnly = (s: Stage, kind: string): Stage => ({ ...s, artifacts: s.artifacts.filter((a) => a.kind === kind) });

describe('the tab table', () => {
  it('is the one list of the address, the tab bar and the panels: each slug once', () => {
    expect(TABS).toEqual([
      'flame',
      'diff',
      'trends',
      'sandwich',
      'lines',
      'load',
      'runtime',
      'requests',
      'bench',
      'gc',
    ]);
    expect(new Set(TABS).size).toBe(TAB_TABLE.length);
    for (const tab of TABS) expect(parseViewState(`?tab=${tab}`).tab).toBe(tab);
    expect(parseViewState('?tab=constructor').tab).toBe('flame');
  });

  it('offers a tab when some stage holds what it draws; the flamegraphs when none does', () => {
    expect(visibleTabs(demo).map((t) => t.key)).toEqual(['flame', 'diff', 'trends', 'sandwich', 'lines', 'load']);
    expect(visibleTabs(demo.map((s) => withOnly(s, 'loadtest'))).map((t) => t.label)).toEqual(['Load tests']);
    expect(visibleTabs([])).toEqual([{ key: 'flame', label: 'Flamegraphs' }]);
  });

  it('offers the Requests tab only when two stages have traces with requests found in them', () => {
    const trace = (count: number, status = 'ok') =>
      ({
        id: `t${count}${status}`,
        kind: 'trace',
        filename: 'trace.out',
        summary: { requests: { status, duration: { count } } },
      }) as unknown as Stage['artifacts'][number];
    const [first, second] = demo as [Stage, Stage];
    const with_ = (s: Stage, ...a: Stage['artifacts']) => ({ ...s, artifacts: [...s.artifacts, ...a] });
    const shown = (stages: Stage[]) => visibleTabs(stages).some((t) => t.key === 'requests');
    expect(shown([with_(first, trace(450)), with_(second, trace(1100))])).toBe(true);
    expect(shown([with_(first, trace(450)), second])).toBe(false);
    expect(shown([with_(first, trace(450)), with_(second, trace(0))])).toBe(false);
    expect(shown([with_(first, trace(450)), with_(second, trace(0, 'too-large'))])).toBe(false);
    // the Runtime tab is offered for any trace
    expect(visibleTabs([with_(first, trace(0)), second]).some((t) => t.key === 'runtime')).toBe(true);
    expect([...stagesWithWhatTheTabNeeds([with_(first, trace(450)), second], 'requests', null)]).toEqual([first.id]);
  });

  it('knows what a stage needs for each tab, and which tabs read profiles or a directed pair', () => {
    const [first, second] = demo as [Stage, Stage];
    const stages = [withOnly(first, 'loadtest'), second];
    expect([...stagesWithWhatTheTabNeeds(stages, 'load', null)]).toEqual([first.id, second.id]);
    expect([...stagesWithWhatTheTabNeeds(stages, 'flame', 'cpu')]).toEqual([second.id]);
    expect([...stagesWithWhatTheTabNeeds(stages, 'flame', 'mutex')]).toEqual([second.id]);
    expect(stagesWithWhatTheTabNeeds(stages, 'diff', 'wall').size).toBe(0);
    expect(stagesWithWhatTheTabNeeds(stages, 'gc', null).size).toBe(0);
    expect(TABS.filter((t) => tabSpec(t).directed)).toEqual(['diff', 'runtime', 'requests', 'bench']);
    expect(TABS.filter((t) => !tabSpec(t).profile)).toEqual(['runtime', 'requests', 'bench', 'gc']);
  });
});
