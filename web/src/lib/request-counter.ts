import { isRequestCounterName } from '../../../server/src/api/labels.ts';
import type { Reply } from './api.ts';

type MetricsWindow = Reply<'runtime'>['base']['metrics'][number];

/**
 * The service's own request counter among a metrics window's series (isRequestCounterName), summed over
 * its label sets (routes, codes); of several, the one that grew most. Null without one.
 */
export function requestCounter(m: MetricsWindow): { name: string; rates: (number | null)[] } | null {
  const byName = new Map<string, { increase: number; rates: (number | null)[] }>();
  for (const s of m.series) {
    if (s.type !== 'counter' || !isRequestCounterName(s.name)) continue;
    const e = byName.get(s.name) ?? { increase: 0, rates: s.rates.map(() => null) };
    e.increase += s.windowDelta ?? 0;
    e.rates = e.rates.map((v, i) => {
      const r = s.rates[i];
      return r === null || r === undefined ? v : (v ?? 0) + r;
    });
    byName.set(s.name, e);
  }
  let best: { name: string; increase: number; rates: (number | null)[] } | null = null;
  for (const [name, e] of byName) if (e.increase > 0 && (!best || e.increase > best.increase)) best = { name, ...e };
  return best ? { name: best.name, rates: best.rates } : null;
}
