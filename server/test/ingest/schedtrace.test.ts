/**
 * GODEBUG=schedtrace logs of the demo service (fixtures/schedtrace): Go 1.26 and Go 1.22 line formats,
 * with gctrace=1 in the same log, and a scheddetail=1 log. Every SCHED line's figures are checked
 * against an awk extraction of the same lines (expected/NAME.tsv, made by record.sh).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/detect.ts';
import { IngestError } from '../../src/ingest/errors.ts';
import * as gctrace from '../../src/ingest/gctrace.ts';
import { detect, parse } from '../../src/ingest/schedtrace.ts';
import type { SchedTrace } from '../../src/model/schedtrace.ts';
import { fixturesDir, samplePath } from '../helpers/paths.ts';

const dir = `${fixturesDir}schedtrace/`;
const logs = ['demo-go1.26-schedtrace-gctrace', 'demo-go1.22-schedtrace-gctrace', 'demo-go1.26-scheddetail'];

async function read(name: string): Promise<SchedTrace> {
  const p = await ingest({ name: 'stderr.txt', path: `${dir}${name}.log` });
  if (p.kind !== 'schedtrace') throw new Error(`${name} read as ${p.kind}`);
  return p.schedtrace;
}

describe.each(logs)('%s', (name) => {
  const text = readFileSync(`${dir}${name}.log`, 'utf8');

  it('is detected by content and every SCHED line equals the awk reading of it', async () => {
    const t = await read(name);
    const rows = readFileSync(`${dir}expected/${name}.tsv`, 'utf8').trim().split('\n');
    expect(t.samples.length).toBe(rows.length);
    rows.forEach((row, i) => {
      const [ms, procs, idle, threads, spinning, idleThreads, runq, local] = row.split('\t');
      const s = t.samples[i]!;
      expect([
        s.atMs,
        s.gomaxprocs,
        s.idleProcs,
        s.threads,
        s.spinningThreads,
        s.idleThreads,
        s.globalRunqueue,
      ]).toEqual([ms, procs, idle, threads, spinning, idleThreads, runq].map(Number));
      const localSum = s.localRunqueues.reduce((a, b) => a + b, 0);
      if (local !== '-') expect(localSum).toBe(Number(local));
      expect(s.localRunqueues.length).toBe(s.gomaxprocs);
    });
    expect(t.summary.samples).toBe(rows.length);
    expect(t.summary.runqueue.total.max).toBe(
      Math.max(...t.samples.map((s) => s.globalRunqueue + s.localRunqueues.reduce((a, b) => a + b, 0))),
    );
  });

  it('carries the GC trace of the same log', async () => {
    const t = await read(name);
    const gcLines = text.split('\n').filter((l) => l.startsWith('gc ')).length;
    if (gcLines === 0) expect(t.gc).toBeNull();
    else expect(t.gc?.cycles.length).toBe(gcLines);
  });
});

describe('line formats', () => {
  it('reads Go 1.26’s [ a b ] and schedticks, Go 1.22’s [a b] without them', async () => {
    const new_ = await read('demo-go1.26-schedtrace-gctrace');
    const old = await read('demo-go1.22-schedtrace-gctrace');
    expect(new_.samples.every((s) => s.schedticks?.length === 2)).toBe(true);
    expect(old.samples.every((s) => s.schedticks === null && s.needSpinning !== null)).toBe(true);
  });

  it('reads the scheddetail lines: each P, the threads, the goroutines counted by status', async () => {
    const t = await read('demo-go1.26-scheddetail');
    const text = readFileSync(`${dir}demo-go1.26-scheddetail.log`, 'utf8');
    const gLines = text.split('\n').filter((l) => /^ {2}G\d+: /.test(l)).length;
    const mLines = text.split('\n').filter((l) => /^ {2}M\d+: /.test(l)).length;
    expect(t.samples.reduce((n, s) => n + s.detail!.goroutines.total, 0)).toBe(gLines);
    expect(t.samples.reduce((n, s) => n + s.detail!.threads.total, 0)).toBe(mLines);
    for (const s of t.samples) {
      expect(s.detail!.procs.map((p) => p.id)).toEqual([0, 1]);
      const g = s.detail!.goroutines;
      expect(Object.values(g.byStatus).reduce((a, b) => a + b, 0)).toBe(g.total);
      expect(Object.values(g.byWaitReason).reduce((a, b) => a + b, 0)).toBe(g.byStatus.waiting ?? 0);
    }
    expect(t.summary.detailed).toBe(true);
    expect(t.summary.goroutines!.max).toBeGreaterThan(100);
  });

  it('a log with only gc lines stays a GC trace; a SCHED line out of format is refused with its line', async () => {
    const gcOnly = readFileSync(samplePath('gobench/render-before-gctrace.txt'));
    expect(detect(gcOnly)).toBe(0);
    expect((await ingest({ name: 'x', bytes: gcOnly })).kind).toBe('gctrace');
    expect(gctrace.detect(readFileSync(`${dir}demo-go1.26-scheddetail.log`))).toBe(0);
    const bad = Buffer.from('start\nSCHED 0ms: gomaxprocs=2 idleprocs=1 threads=x\n');
    expect(() => parse(bad)).toThrow(IngestError);
    try {
      parse(bad);
    } catch (e) {
      expect([(e as IngestError).code, (e as IngestError).line]).toEqual(['malformed', 2]);
    }
  });
});
