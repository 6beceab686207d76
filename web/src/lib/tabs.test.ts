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
    expect(TABS).toEqual(['flame', 'diff', 'trends', 'sandwich', 'lines', 'load', 'runtime', 'bench', 'gc']);
    expect(new Set(TABS).size).toBe(TAB_TABLE.length);
    for (const tab of TABS) expect(parseViewState(`?tab=${tab}`).tab).toBe(tab);
    expect(parseViewState('?tab=constructor').tab).toBe('flame');
  });

  it('offers a tab when some stage holds what it draws; the flamegraphs when none does', () => {
    expect(visibleTabs(demo).map((t) => t.key)).toEqual(['flame', 'diff', 'trends', 'sandwich', 'lines', 'load']);
    expect(visibleTabs(demo.map((s) => withOnly(s, 'loadtest'))).map((t) => t.label)).toEqual(['Load tests']);
    expect(visibleTabs([])).toEqual([{ key: 'flame', label: 'Flamegraphs' }]);
  });

  it('knows what a stage needs for each tab, and which tabs read profiles or a directed pair', () => {
    const [first, second] = demo as [Stage, Stage];
    const stages = [withOnly(first, 'loadtest'), second];
    expect([...stagesWithWhatTheTabNeeds(stages, 'load', null)]).toEqual([first.id, second.id]);
    expect([...stagesWithWhatTheTabNeeds(stages, 'flame', 'cpu')]).toEqual([second.id]);
    expect([...stagesWithWhatTheTabNeeds(stages, 'flame', 'mutex')]).toEqual([second.id]);
    expect(stagesWithWhatTheTabNeeds(stages, 'diff', 'wall').size).toBe(0);
    expect(stagesWithWhatTheTabNeeds(stages, 'gc', null).size).toBe(0);
    expect(TABS.filter((t) => tabSpec(t).directed)).toEqual(['diff', 'runtime', 'bench']);
    expect(TABS.filter((t) => !tabSpec(t).profile)).toEqual(['runtime', 'bench', 'gc']);
  });
});
