/**
 * What people paste from a terminal or a README: the shell prompt and the command line around the
 * report, tabs turned to spaces by the terminal, a paste cut off anywhere. Real terminal captures
 * (fixtures/loadtests/pastes, tmux capture-pane of hey and wrk runs) and ghz's own docs output; the
 * command lines around them are the tools' own (cut and joined by each test, never edited).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import type { LoadTestRun, LoadTestSummary } from '../../../src/model/loadtest.ts';
import { LOADTEST_FIXTURES as FIXTURES } from '../../helpers/loadtest-expected.ts';

const fx = (rel: string) => readFileSync(`${FIXTURES}${rel}`).toString();

async function read(text: string): Promise<LoadTestRun> {
  const p = await ingest({ name: 'upload', bytes: Buffer.from(text) });
  if (p.kind !== 'loadtest') throw new Error(`expected a load test, got ${p.kind}`);
  expect(p.runs).toHaveLength(1);
  return p.runs[0]!;
}

/** Every figure of `part` is the full run's or null: a cut paste loses figures, never changes one. */
function keepsOrLoses(part: LoadTestSummary, full: LoadTestSummary, where: string) {
  for (const [k, v] of Object.entries(part.latencyMs))
    if (v !== null) expect(v, `${k} ${where}`).toBe(full.latencyMs[k as keyof typeof full.latencyMs]);
  for (const k of ['rps', 'durationSeconds', 'requests'] as const)
    if (part[k] !== null) expect(part[k], `${k} ${where}`).toBe(full[k]);
}

describe('terminal captures (tmux capture-pane: prompt, command, tabs as spaces, the next prompt)', () => {
  it('hey', async () => {
    const r = await read(fx('pastes/terminal-hey.txt'));
    expect(r.format).toBe('hey');
    const s = r.summary;
    expect([s.requests, s.rps, s.durationSeconds, s.errors]).toEqual([2000, 1935.2666, 1.0334, 0]);
    expect([s.latencyMs.min, s.latencyMs.mean, s.latencyMs.max]).toEqual([0.1, 3.9, 92]);
    expect([s.latencyMs.p50, s.latencyMs.p90, s.latencyMs.p99]).toEqual([0.4, 12, 43.9]);
  });

  it('wrk', async () => {
    const r = await read(fx('pastes/terminal-wrk.txt'));
    expect(r.format).toBe('wrk');
    const s = r.summary;
    expect([s.requests, s.rps, s.durationSeconds]).toEqual([22357, 11052.65, 2.02]);
    expect([s.latencyMs.p50, s.latencyMs.p75, s.latencyMs.p90, s.latencyMs.p99]).toEqual([0.356, 3.8, 11.38, 40.48]);
  });

  for (const rel of [
    'k6/console-v1-ok.txt',
    'k6/console-v0-errors.txt',
    'hey/ok-summary.txt',
    'wrk/errors-latency.txt',
  ]) {
    it(`${rel} between a prompt with its command and the next prompt`, async () => {
      const plain = (await read(fx(rel))).summary;
      const tool = rel.split('/')[0];
      const pasted = await read(`user@box:~/bench$ ${tool} run something\n${fx(rel)}\nuser@box:~/bench$ `);
      expect(pasted.summary.latencyMs).toEqual(plain.latencyMs);
      expect([pasted.summary.rps, pasted.summary.requests]).toEqual([plain.rps, plain.requests]);
    });
  }
});

describe('ghz', () => {
  const docs = fx('pastes/published/ghz-docs-output.txt');
  // the first command of ghz's docs (www/docs/example_calls.md), above its docs' output
  const command = `ghz -insecure \\\n  -proto ./greeter.proto \\\n  -call helloworld.Greeter.SayHello \\\n  -d '{"name":"Joe"}' \\\n  0.0.0.0:50051\n\n`;

  it("the output of ghz's docs: every printed figure", async () => {
    const s = (await read(docs)).summary;
    expect([s.requests, s.rps, s.durationSeconds, s.errors]).toEqual([200, 1101.53, 0.18157, 14]);
    expect(s.latencyMs).toMatchObject({
      min: 26.09,
      mean: 32.01,
      max: 69.6,
      p50: 33.23,
      p75: 35.43,
      p90: 38.89,
      p95: 55.45,
      p99: 69.6,
    });
  });

  it('with the command line above Summary: (as the docs and READMEs show it)', async () => {
    const plain = (await read(docs)).summary;
    const r = await read(`$ ${command}${docs}`);
    expect(r.format).toBe('ghz');
    expect(r.summary.latencyMs).toEqual(plain.latencyMs);
    expect([r.summary.requests, r.summary.errors, r.summary.rps]).toEqual([200, 14, 1101.53]);
    expect(r.summary.meta.commandLine).toBe('ghz -insecure \\');
  });

  it('cut off at any line: every figure still printed is kept', async () => {
    const full = (await read(docs)).summary;
    const lines = docs.split('\n');
    for (let n = 7; n < lines.length; n++) {
      let part: LoadTestSummary;
      try {
        part = (await read(lines.slice(0, n).join('\n'))).summary;
      } catch (e) {
        expect(e).toBeInstanceOf(IngestError);
        continue;
      }
      keepsOrLoses(part, full, `cut at line ${n}`);
      // Fastest/Average/Slowest are printed from the first lines on
      expect([part.latencyMs.min, part.latencyMs.mean, part.latencyMs.max], `cut at line ${n}`).toEqual([
        26.09, 32.01, 69.6,
      ]);
      // once the latency distribution is printed, a cut status list keeps the percentiles
      if (n > lines.indexOf('  99% in 69.60 ms')) expect(part.latencyMs.p99, `cut at line ${n}`).toBe(69.6);
    }
    // cut inside the status list, before its [OK] line: errors unknown, latency kept
    const cut = (
      await read(
        lines
          .slice(
            0,
            lines.findIndex((l) => l.includes('[PermissionDenied]')),
          )
          .join('\n'),
      )
    ).summary;
    expect(cut.errors).toBeNull();
    expect(cut.latencyMs.p50).toBe(33.23);
  });
});

describe('hostile lines around a report', () => {
  it('a huge last line of "@"s and no spaces is no prompt, and is judged without backtracking for ever', async () => {
    const line = 'a@b:'.repeat(100_000);
    const r = await ingest({ name: 'upload', bytes: Buffer.from(`${fx('ghz/ok-summary.txt')}${line}`) }).catch(
      (e: unknown) => e,
    );
    // read (the line ignored) or refused with a message: either way, at once
    if (r instanceof IngestError) expect(r.message.length).toBeGreaterThan(10);
    else expect((r as { kind: string }).kind).toBe('loadtest');
  });
});
