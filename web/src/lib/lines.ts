import type { Granularity } from './api.ts';

/** The function a focused frame stands for: a line node (`fn file:line`) names its function first. */
export function functionOf(fn: string, granularity: Granularity): string {
  return granularity === 'lines' ? fn.replace(/ \S*:\d+$/, '') : fn;
}
