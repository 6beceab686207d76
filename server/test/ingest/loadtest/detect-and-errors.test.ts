/**
 * Detection across tools (content only, names only as hints), typed errors naming the line for
 * broken input, and the streaming hey CSV path at scale.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../../src/ingest/errors.ts';
import { abImporter } from '../../../src/ingest/loadtest/ab.ts';
import { heyImporter, measureHeyCsv, parseHeyCsv, syntheticHeyCsv } from '../../../src/ingest/loadtest/hey.ts';
import { wrkImporter } from '../../../src/ingest/loadtest/wrk.ts';
import { wrk2Importer } from '../../../src/ingest/loadtest/wrk2.ts';
import { bombardierImporter } from '../../../src/ingest/loadtest/bombardier.ts';
import { autocannonImporter } from '../../../src/ingest/loadtest/autocannon.ts';
import { bufferSource } from '../../../src/ingest/source.ts';
import {
  LOADTEST_FIXTURES as FIXTURES,
  LOADTEST_SAMPLES as SAMPLES,
  best,
  readHead as head,
} from '../../helpers/loadtest-expected.ts';

const LOG_TOOLS = ['vegeta', 'k6', 'locust', 'jmeter', 'ghz'];
const SUMMARY_IMPORTERS = [wrkImporter, wrk2Importer, heyImporter, abImporter, bombardierImporter, autocannonImporter];

describe('detection', () => {
  it('the wrk, hey, ab, bombardier and autocannon importers claim no vegeta, k6, Locust, JMeter or ghz sample with confidence ≥ 0.5', () => {
    let n = 0;
    for (const tool of LOG_TOOLS) {
      for (const f of readdirSync(join(SAMPLES, tool))) {
        const h = head(join(SAMPLES, tool, f));
        for (const imp of SUMMARY_IMPORTERS) {
          expect(imp.detect(h), `${tool}/${f} claimed by ${imp.formats.join('/')}`).toBeLessThan(0.5);
        }
        n++;
      }
    }
    expect(n).toBeGreaterThan(100);
  });

  it('a name hint never changes the importer chosen for our own fixtures', () => {
    for (const tool of ['wrk', 'hey', 'ab', 'bombardier', 'autocannon']) {
      for (const f of readdirSync(join(FIXTURES, tool))) {
        if (f === 'README.md') continue;
        const p = join(FIXTURES, tool, f);
        expect(best(p, p).importer, f).toBe(best(p).importer);
      }
    }
  });

  it('wrk2 output without wrk2-only lines is wrk2 only with a name hint', () => {
    const plain = readFileSync(join(FIXTURES, 'wrk/ok-latency.txt'));
    expect(wrkImporter.detect(plain)).toBeGreaterThan(wrk2Importer.detect(plain));
    expect(wrk2Importer.detect(plain, 'run-wrk2.txt')).toBeGreaterThan(wrkImporter.detect(plain, 'run-wrk2.txt'));
  });

  it('each tool output has exactly one confident importer', () => {
    const cases: [string, object][] = [
      ['wrk/ok-latency.txt', wrkImporter],
      ['hey/ok-summary.txt', heyImporter],
      ['hey/ok-requests.csv', heyImporter],
      ['ab/ok.txt', abImporter],
      ['ab/ok-gnuplot.tsv', abImporter],
      ['ab/ok-percentiles.csv', abImporter],
      ['bombardier/ok.json', bombardierImporter],
      ['bombardier/errors.txt', bombardierImporter],
      ['autocannon/ok.json', autocannonImporter],
      ['autocannon/ok-table.txt', autocannonImporter],
    ];
    for (const [rel, imp] of cases) expect(best(join(FIXTURES, rel)).importer, rel).toBe(imp);
    expect(best(join(SAMPLES, 'wrk2/baseline-r2000.txt')).importer).toBe(wrk2Importer);
  });
});

async function errorOf(p: Promise<unknown>): Promise<IngestError> {
  const e = await p.then(
    () => null,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(IngestError);
  return e as IngestError;
}

describe('broken input gives a typed error naming the line', () => {
  it('hey CSV: a corrupt row', async () => {
    const lines = readFileSync(join(FIXTURES, 'hey/ok-requests.csv'), 'utf8').split('\n');
    lines[9] = '0.00x1,0.0000,0.0000,0.0000,0.0010,0.0000,200,0.0500';
    const e = await errorOf(heyImporter.parse(bufferSource(Buffer.from(lines.join('\n')))));
    expect(e.code).toBe('malformed');
    expect(e.line).toBe(10);
  });
  it('hey CSV: a short row', async () => {
    const lines = readFileSync(join(FIXTURES, 'hey/ok-requests.csv'), 'utf8').split('\n');
    lines[4] = '0.0010,0.0000,200';
    const e = await errorOf(heyImporter.parse(bufferSource(Buffer.from(lines.join('\n')))));
    expect([e.code, e.line]).toEqual(['malformed', 5]);
  });
  it('hey CSV: header only is no run', async () => {
    const e = await errorOf(heyImporter.parse(bufferSource(readFileSync(join(SAMPLES, 'hey/down-requests.csv')))));
    expect(e.code).toBe('no-run');
  });
  it('ab -g: a row with a missing field', async () => {
    const lines = readFileSync(join(FIXTURES, 'ab/ok-gnuplot.tsv'), 'utf8').split('\n');
    lines[2] = lines[2]!.split('\t').slice(0, 5).join('\t');
    const e = await errorOf(abImporter.parse(bufferSource(Buffer.from(lines.join('\n')))));
    expect([e.code, e.line]).toEqual(['malformed', 3]);
  });
  it('ab -e: a broken row', async () => {
    const text = readFileSync(join(FIXTURES, 'ab/ok-percentiles.csv'), 'utf8').replace(/^50,.*$/m, '50,fast');
    const e = await errorOf(abImporter.parse(bufferSource(Buffer.from(text))));
    expect([e.code, e.line]).toEqual(['malformed', 52]);
  });
  it('wrk: a report cut before its totals is no run', async () => {
    const text = readFileSync(join(FIXTURES, 'wrk/ok-latency.txt'), 'utf8').split('\n').slice(0, 8).join('\n');
    expect((await errorOf(wrkImporter.parse(bufferSource(Buffer.from(text))))).code).toBe('no-run');
  });
  it('wrk: an unreadable Requests/sec line', async () => {
    const text = readFileSync(join(FIXTURES, 'wrk/ok-latency.txt'), 'utf8').replace(
      /^Requests\/sec:.*$/m,
      'Requests/sec:   lots',
    );
    const e = await errorOf(wrkImporter.parse(bufferSource(Buffer.from(text))));
    expect([e.code, e.line]).toEqual(['malformed', 12]);
  });
  it('bombardier JSON: truncated', async () => {
    const text = readFileSync(join(FIXTURES, 'bombardier/ok.json'), 'utf8').slice(0, 200);
    expect((await errorOf(bombardierImporter.parse(bufferSource(Buffer.from(text))))).code).toBe('malformed');
  });
  it('autocannon JSON: truncated', async () => {
    const text = readFileSync(join(FIXTURES, 'autocannon/ok.json'), 'utf8').slice(0, 300);
    expect((await errorOf(autocannonImporter.parse(bufferSource(Buffer.from(text))))).code).toBe('malformed');
  });
  it('empty input', async () => {
    for (const imp of [wrkImporter, heyImporter, abImporter, bombardierImporter, autocannonImporter]) {
      expect((await errorOf(imp.parse(bufferSource(Buffer.alloc(0))))).code).toBe('empty');
    }
  });
  it('head bytes only are ever needed for detection', () => {
    expect(head(join(FIXTURES, 'ab/ok-gnuplot.tsv')).length).toBe(64 * 1024);
  });
});

describe('hey CSV at scale (streamed)', () => {
  it('parses 300k generated rows with consistent totals', async () => {
    const run = await parseHeyCsv(syntheticHeyCsv(300_000, 20_000));
    expect(run.summary.requests).toBe(300_000);
    // 20k rows/s for 15 s; the last offset rounds to 15.0000 in hey's 4-decimal format.
    expect(run.timeline).toHaveLength(16);
    expect(run.timeline!.reduce((a, b) => a + b.requests, 0)).toBe(300_000);
    expect(run.timeline!.reduce((a, b) => a + b.errors, 0)).toBe(run.summary.non2xx);
    expect(run.summary.non2xx! / 300_000).toBeGreaterThan(0.005);
    expect(run.summary.non2xx! / 300_000).toBeLessThan(0.015);
  });
  it('measureHeyCsv reports rows/s (lenient floor: the machine is shared)', async () => {
    const m = await measureHeyCsv(syntheticHeyCsv(200_000));
    expect(m.rows).toBe(200_000);
    expect(m.rowsPerSecond).toBeGreaterThan(100_000);
  });
});
