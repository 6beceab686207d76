/**
 * The benchmark rows of GET …/benchmarks in the shape the shared benchstat formatter reads. The answer
 * carries each row's verdict; the formatter (written for the engine's rows) asks whether it is
 * significant, which is what the verdict says.
 */
import type { Benchmarks } from './api.ts';

export type BenchFormatRow = Benchmarks['rows'][number] & { significant: boolean };

export function benchRows(diff: Pick<Benchmarks, 'rows'>): BenchFormatRow[] {
  return diff.rows.map((r) => ({ ...r, significant: r.verdict.status === 'significant' }));
}
