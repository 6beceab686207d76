import { IngestError } from './errors.ts';
import { benchMedian } from '../analysis/benchstat.ts';
import type { BenchConfig, BenchmarkRun, BenchmarkSeries } from '../model/benchmark.ts';
import { headUtf8 } from './head-text.ts';

/**
 * Importer for Go benchmark output (`go test -bench … -benchmem -count N`), the text format of the Go
 * benchmark data proposal (golang.org/design/14313) as benchstat reads it:
 *
 * - `key: value` lines set file configuration (key starts with a lower-case letter, no spaces or
 *   upper-case letters before the colon; an empty value unsets the key). `go test` writes goos, goarch,
 *   pkg and cpu before each package's results, so one file may hold several packages;
 * - `BenchmarkName-N  ITERS  VALUE UNIT  VALUE UNIT …` lines are results. A line holding only a name
 *   (what `go test -v` prints before a benchmark's log output) is skipped;
 * - everything else (PASS, ok, FAIL, logs, `Unit` metadata lines) is ignored.
 *
 * Values are tidied like benchstat: `ns` in a unit's numerator becomes `sec` (÷10^9) and `MB` becomes
 * `B` (×10^6), so `ns/op` → `sec/op` and `MB/s` → `B/s`.
 */

export const GOBENCH_LIMITS = {
  maxBytes: 64 * 1024 * 1024,
  maxResultLines: 1_000_000,
  maxLineLength: 64 * 1024,
};

const RESULT_HEAD = /^Benchmark\S*\s+\d+\s+[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s+\S/;
const FLOAT = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

/** Confidence that `head` (the first bytes of a file) is `go test -bench` output. Works without a name. */
export function detect(head: Buffer, _fileName?: string): number {
  const text = headUtf8(head, 256 * 1024);
  const lines = text
    .split('\n')
    .slice(0, 2000)
    .map((l) => l.replace(/\r$/, ''));
  if (lines.some((l) => RESULT_HEAD.test(l))) return 0.95;
  const keys = new Set(lines.map((l) => /^(goos|goarch|pkg|cpu): \S/.exec(l)?.[1]).filter(Boolean));
  if (keys.has('goos') && keys.has('goarch')) return 0.6;
  return 0;
}

/** Parses `go test -bench` output. Throws IngestError: `empty`, `no-run`, `malformed`, `too-large`. */
export function parse(bytes: Buffer, _fileName?: string): BenchmarkRun {
  if (bytes.length > GOBENCH_LIMITS.maxBytes) {
    throw new IngestError('too-large', `benchmark output is larger than ${GOBENCH_LIMITS.maxBytes} bytes`);
  }
  const text = bytes.toString('utf8');
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  if (text.includes('\u0000')) throw new IngestError('malformed', 'binary data, not `go test -bench` output');

  const config = new Map<string, string>();
  const series = new Map<string, BenchmarkSeries>();
  // Distinct values each reported config key took on result lines.
  const seen: Record<keyof BenchConfig, Set<string | null>> = {
    goos: new Set(),
    goarch: new Set(),
    pkg: new Set(),
    cpu: new Set(),
  };
  let results = 0;

  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    const lineNo = i + 1;
    if (line.startsWith('Benchmark')) {
      if (line.length > GOBENCH_LIMITS.maxLineLength) {
        throw new IngestError(
          'too-large',
          `a Benchmark line is longer than ${GOBENCH_LIMITS.maxLineLength} characters`,
          lineNo,
        );
      }
      const fields = line
        .slice('Benchmark'.length)
        .split(/\s+/)
        .filter((f, k) => f !== '' || k === 0);
      if (fields.length === 1) continue; // a bare name line: no result
      const name = fields[0]!;
      if (name === '') throw new IngestError('malformed', 'Benchmark line without a benchmark name', lineNo);
      const iters = fields[1]!;
      if (!/^\d+$/.test(iters)) {
        throw new IngestError(
          'malformed',
          `benchmark ${name}: iteration count "${iters}" is not a whole number`,
          lineNo,
        );
      }
      if (fields.length < 3) {
        throw new IngestError('malformed', `benchmark ${name}: no measurements after the iteration count`, lineNo);
      }
      if (++results > GOBENCH_LIMITS.maxResultLines) {
        throw new IngestError('too-large', `more than ${GOBENCH_LIMITS.maxResultLines} benchmark result lines`, lineNo);
      }
      const pkg = config.get('pkg') ?? '';
      // The configuration in effect for this result: benchstat compares results under equal ones only.
      const configKey = [...config].map(([k, v]) => `${k}: ${v}`).join('\n');
      for (const k of Object.keys(seen) as (keyof BenchConfig)[]) seen[k].add(config.get(k) ?? null);
      for (let f = 2; f < fields.length; f += 2) {
        const rawValue = fields[f]!;
        const rawUnit = fields[f + 1];
        if (rawUnit === undefined) {
          throw new IngestError('malformed', `benchmark ${name}: value "${rawValue}" has no unit`, lineNo);
        }
        if (!FLOAT.test(rawValue)) {
          throw new IngestError(
            'malformed',
            `benchmark ${name}: "${rawValue}" is not a number (before unit "${rawUnit}")`,
            lineNo,
          );
        }
        const { value, unit } = tidy(Number(rawValue), rawUnit);
        const key = `${configKey}\u0000${pkg}\u0000${name}\u0000${unit}`;
        let s = series.get(key);
        if (!s) {
          s = { pkg, name, unit, config: Object.fromEntries(config), values: [], median: 0 };
          series.set(key, s);
        }
        s.values.push(value);
      }
      continue;
    }
    const kv = keyValue(line);
    if (kv) {
      if (kv.value === '') config.delete(kv.key);
      else config.set(kv.key, kv.value);
    }
  }
  if (results === 0) {
    throw new IngestError(
      'no-run',
      'no Benchmark result lines: not `go test -bench` output, or every benchmark failed',
    );
  }
  const benchmarks = [...series.values()];
  for (const s of benchmarks) s.median = benchMedian(s.values);
  const single = (k: keyof BenchConfig) => (seen[k].size === 1 ? [...seen[k]][0]! : null);
  return {
    kind: 'benchmark',
    format: 'go-bench',
    config: { goos: single('goos'), goarch: single('goarch'), pkg: single('pkg'), cpu: single('cpu') },
    benchmarks,
  };
}

/** A `key: value` configuration line, by benchfmt's rules; null for anything else. */
function keyValue(line: string): { key: string; value: string } | null {
  const colon = line.indexOf(':');
  if (colon <= 0) return null;
  const key = line.slice(0, colon);
  if (!/^\p{Ll}/u.test(key) || /[\s\p{Lu}]/u.test(key)) return null;
  return { key, value: line.slice(colon + 1).replace(/^[ \t]+/, '') };
}

/**
 * benchstat's unit normalisation: in the numerator of a unit (tokens separated by `*`, `/`, `-` or
 * spaces; everything after a `/` up to the next `*` is denominator) `ns` becomes `sec` and `MB` becomes
 * `B`, with the value scaled to match.
 */
export function tidy(value: number, unit: string): { value: number; unit: string } {
  switch (unit) {
    case 'ns/op':
      return { value: value * 1e-9, unit: 'sec/op' };
    case 'MB/s':
      return { value: value * 1e6, unit: 'B/s' };
    case 'B/op':
    case 'allocs/op':
      return { value, unit };
  }
  if (!unit.includes('ns') && !unit.includes('MB')) return { value, unit };
  let factor = 1;
  let out = '';
  let denominator = false;
  for (const m of unit.matchAll(/([*/\-\s]+)|([^*/\-\s]+)/gu)) {
    if (m[1] !== undefined) {
      for (const ch of m[1]) {
        if (ch === '*') denominator = false;
        else if (ch === '/') denominator = true;
      }
      out += m[1];
      continue;
    }
    const tok = m[2]!;
    if (!denominator && tok === 'ns') {
      out += 'sec';
      factor /= 1e9;
    } else if (!denominator && tok === 'MB') {
      out += 'B';
      factor *= 1e6;
    } else {
      out += tok;
    }
  }
  return { value: value * factor, unit: out };
}
