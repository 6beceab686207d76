/**
 * What the trace reader does with traces it cannot read whole: older and unknown versions, a trace
 * cut short anywhere, damaged bytes, traces past the limits (events, bytes, generation size, a 1 GB
 * file), and a trace of 10 M events (a result, in bounded memory). Every case ends in a typed
 * IngestError naming the problem, or in a result; never another exception, never a hang.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync, ftruncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { SYNTHETIC_TRACE_10M, syntheticTracePath } from '../../../../scripts/testdata/index.ts';
import { type Parsed, ingest } from '../../../src/ingest/detect.ts';
import { IngestError } from '../../../src/ingest/errors.ts';
import { detect as detectPprof } from '../../../src/ingest/pprof/index.ts';
import { detect, parseTrace } from '../../../src/ingest/trace/index.ts';
import { bufferSource } from '../../../src/ingest/source.ts';
import type { TraceModel } from '../../../src/model/trace.ts';
import { fixturesDir, repoRoot } from '../../helpers/paths.ts';

const dir = `${fixturesDir}traces/`;
const read = (name: string) => readFileSync(`${dir}${name}`);
const work = mkdtempSync(join(tmpdir(), 'stagediff-trace-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Parses bytes as an upload would be (by content), returning the model or the IngestError. */
async function attempt(bytes: Buffer, limits = {}): Promise<TraceModel | IngestError> {
  try {
    const p: Parsed = await ingest({ name: 'upload', bytes }, { trace: limits });
    if (p.kind !== 'trace') throw new Error(`read as ${p.kind}`);
    return p.trace;
  } catch (e) {
    if (e instanceof IngestError) return e;
    throw e;
  }
}

async function refusal(bytes: Buffer, limits = {}): Promise<IngestError> {
  const r = await attempt(bytes, limits);
  if (!(r instanceof IngestError)) throw new Error('expected a refusal, got a result');
  return r;
}

/** Offsets just after each end-of-generation mark of a Go 1.26 trace (found by reading it). */
async function generationEnds(bytes: Buffer): Promise<number[]> {
  const ends: number[] = [];
  for (let cut = bytes.length - 1; cut > 16; cut -= 97) {
    const r = await attempt(bytes.subarray(0, cut));
    if (!(r instanceof IngestError) && r.summary.incomplete && !ends.includes(r.summary.incomplete.validBytes))
      ends.push(r.summary.incomplete.validBytes);
  }
  return ends.sort((a, b) => a - b);
}

describe('detection', () => {
  it('knows a trace by its header alone, whatever the file is called', async () => {
    const bytes = read('demo-go1.26-light-3gen.trace');
    expect(detect(bytes.subarray(0, 64))).toBeGreaterThan(0.9);
    expect(detectPprof(bytes.subarray(0, 64), 'trace.out')).toBe(0);
    const p = await ingest({ name: 'cpu.pb.gz', bytes });
    expect([p.kind, p.format]).toEqual(['trace', 'go-trace']);
  });

  it('reads a gzip’d trace as the trace itself', async () => {
    const bytes = read('xtime-rate-go1.22.trace');
    const plain = await attempt(bytes);
    const gz = await attempt(gzipSync(bytes));
    expect(gz).toEqual(plain);
  });
});

describe('versions', () => {
  it('refuses the older format (Go 1.21) naming the version and what to do', async () => {
    const e = await refusal(read('xsync-semaphore-go1.21.trace'));
    expect(e.code).toBe('unsupported');
    expect(e.message).toMatch(/format of Go 1\.21/);
    expect(e.message).toMatch(/Go 1\.22 or later/);
  });

  it.each(['27', '24', '30'])('refuses wire version go 1.%s, naming it', async (v) => {
    const bytes = Buffer.from(read('demo-go1.26-light-3gen.trace'));
    bytes.write(v, 5, 'latin1');
    const e = await refusal(bytes);
    expect(e.code).toBe('unsupported');
    expect(e.message).toContain(`go 1.${v}`);
    expect(e.message).toContain('1.22 to 1.26');
  });
});

describe('truncated traces', () => {
  it.each([
    ['demo-go1.26-light-3gen.trace', 3],
    ['xtime-rate-go1.22.trace', 3],
  ])('%s cut in a later generation: the complete generations, marked incomplete', async (name, gens) => {
    const bytes = read(name);
    const whole = await attempt(bytes);
    if (whole instanceof IngestError) throw whole;
    expect(whole.summary.generations).toBe(gens);
    const cut = await attempt(bytes.subarray(0, bytes.length - 200));
    if (cut instanceof IngestError) throw cut;
    expect(cut.summary.generations).toBe(gens - 1);
    expect(cut.summary.incomplete?.reason).toBeTruthy();
    // the same as the trace cut exactly where the valid part ends
    const valid = bytes.subarray(0, cut.summary.incomplete!.validBytes);
    const prefix = await attempt(valid);
    if (prefix instanceof IngestError) throw prefix;
    expect({ ...cut.summary, incomplete: null }).toEqual({ ...prefix.summary, incomplete: prefix.summary.incomplete });
    expect(cut.profiles).toEqual(prefix.profiles);
  });

  it('a trace cut in its first generation is refused as truncated', async () => {
    const bytes = read('demo-go1.26-light-3gen.trace');
    for (const n of [10, 17, 100, 5000]) {
      const e = await refusal(bytes.subarray(0, n));
      expect(e.code).toBe('malformed');
      expect(e.message).toMatch(/truncated|ends inside/);
    }
  });

  it('cut anywhere: a typed refusal or a result marked incomplete, never anything else', async () => {
    const bytes = read('demo-go1.26-light-3gen.trace');
    const ends = await generationEnds(bytes);
    expect(ends.length).toBe(2); // the ends of generations 1 and 2
    let results = 0;
    for (let cut = 0; cut < bytes.length; cut += 499) {
      const r = await attempt(bytes.subarray(0, cut));
      if (r instanceof IngestError) {
        expect(['empty', 'malformed', 'no-run']).toContain(r.code);
        expect(cut).toBeLessThan(ends[0]! + 1);
      } else {
        results++;
        expect(r.summary.incomplete).not.toBeNull();
        expect(r.summary.generations).toBe(cut >= ends[1]! ? 2 : 1);
      }
    }
    expect(results).toBeGreaterThan(50);
  });
});

describe('damaged traces', () => {
  it('bytes overwritten anywhere: a typed refusal or a result', async () => {
    const base = read('demo-go1.26-light-3gen.trace');
    let seed = 42;
    const next = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed;
    };
    const codes = new Set<string>();
    for (let i = 0; i < 120; i++) {
      const bytes = Buffer.from(base);
      const at = 16 + (next() % (bytes.length - 16));
      for (let k = 0; k < 4 && at + k < bytes.length; k++) bytes[at + k] = next() & 0xff;
      const r = await attempt(bytes);
      if (r instanceof IngestError) codes.add(r.code);
    }
    expect([...codes].every((c) => ['malformed', 'too-large', 'no-run'].includes(c))).toBe(true);
  });

  it('random bytes after a valid header are refused', async () => {
    const bytes = Buffer.concat([read('demo-go1.26-light-3gen.trace').subarray(0, 16), Buffer.alloc(4096, 0xab)]);
    const e = await refusal(bytes);
    expect(e.code).toBe('malformed');
    expect(e.message).toMatch(/expected a batch/);
  });

  it('a header and nothing else holds no events', async () => {
    const e = await refusal(read('demo-go1.26-light-3gen.trace').subarray(0, 16));
    expect(e.code).toBe('no-run');
  });
});

describe('limits', () => {
  const bytes = read('demo-go1.26-pooled.trace');

  it('refuses more events than TRACE_MAX_EVENTS allows', async () => {
    const e = await refusal(bytes, { maxEvents: 10_000 });
    expect(e.code).toBe('too-large');
    expect(e.message).toContain('10000 events (TRACE_MAX_EVENTS)');
  });

  it('refuses a generation over TRACE_MAX_GENERATION_BYTES', async () => {
    const e = await refusal(bytes, { maxGenerationBytes: 100_000 });
    expect(e.code).toBe('too-large');
    expect(e.message).toContain('TRACE_MAX_GENERATION_BYTES');
  });

  it('refuses a stream past TRACE_MAX_BYTES as it reads it', async () => {
    await expect(parseTrace(bufferSource(bytes), { maxBytes: 200_000 })).rejects.toThrow(/TRACE_MAX_BYTES/);
  });

  it('refuses a 1 GB trace file before reading it', async () => {
    const path = join(work, 'huge.trace');
    const fd = openSync(path, 'w');
    writeSync(fd, bytes.subarray(0, 16));
    ftruncateSync(fd, 1024 ** 3);
    closeSync(fd);
    try {
      await ingest({ name: 'huge.trace', path });
      throw new Error('read');
    } catch (e) {
      expect(e).toBeInstanceOf(IngestError);
      expect((e as IngestError).code).toBe('too-large');
      expect((e as IngestError).message).toMatch(/1073741824 bytes, over the 536870912-byte limit \(TRACE_MAX_BYTES\)/);
    }
  });
});

describe('a trace of 10 M events', () => {
  const path = syntheticTracePath(SYNTHETIC_TRACE_10M);

  it('is read within the default limits in bounded memory', () => {
    // in a process of its own, so its peak resident memory is its own
    const script = `
      import { ingest } from './server/src/ingest/detect.ts';
      import { readFileSync } from 'node:fs';
      const p = await ingest({ name: 't', path: process.argv[1] });
      const hwm = Number(/VmHWM:\\s+(\\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024;
      console.log(JSON.stringify({ kind: p.kind, events: p.trace.summary.events, generations: p.trace.summary.generations, created: p.trace.summary.goroutines.created, sched: p.trace.profiles.sched.stats.numSamples, hwm }));
    `;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, path], {
      cwd: repoRoot,
      encoding: 'utf8',
      timeout: 300_000,
    });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout);
    expect(out.kind).toBe('trace');
    expect(out.events).toBeGreaterThanOrEqual(10_000_000);
    expect(out.generations).toBeGreaterThan(10);
    expect(out.sched).toBeGreaterThan(0);
    // streamed a generation at a time: far below the file's 50 MB times the ~100 bytes an event would take held
    expect(out.hwm).toBeLessThan(400 * 1024 * 1024);
  }, 300_000);

  it('is refused clearly under a smaller TRACE_MAX_EVENTS', async () => {
    await expect(ingest({ name: 't', path }, { trace: { maxEvents: 1_000_000 } })).rejects.toThrow(
      /more than 1000000 events \(TRACE_MAX_EVENTS\)/,
    );
  });
});
