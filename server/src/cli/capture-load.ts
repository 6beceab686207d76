import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, join } from 'node:path';
import { ingest } from '../ingest/detect.ts';
import { loadOutputName } from './load-tools.ts';
import type { Options } from './capture-options.ts';

/** The load `stagediff capture` runs: a load tool's command line, or the built-in generator (autocannon); and its result read back. */

const requireHere = createRequire(import.meta.url);

/** The running load: an external process or the in-process generator. */
export interface RunningLoad {
  done: Promise<{ exitCode: number | null; signal: string | null; error: string | null }>;
  stop(): void;
  outputs: { rel: string; stream: 'stdout' | 'stderr' | 'generator' }[];
  /** Side streams kept as raw files when not empty (stderr, or stdout when the result is on stderr). */
  sideRels: string[];
  stderrRel: string | null;
}

export function startCommand(o: Options & { load: { kind: 'command' } }, dir: string, prefix: string): RunningLoad {
  const { argv, tool } = o.load;
  const out = loadOutputName(tool, argv);
  const outRel = `${prefix}${out.name}`;
  const errRel = out.stream === 'stderr' ? outRel : `${prefix}load.stderr.txt`;
  const stdoutFile = out.stream === 'stdout' ? outRel : `${prefix}load.stdout.txt`;
  const so = createWriteStream(join(dir, stdoutFile));
  const se = createWriteStream(join(dir, errRel));
  let child: ChildProcess;
  const done = new Promise<{ exitCode: number | null; signal: string | null; error: string | null }>((res) => {
    child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let spawnError: string | null = null;
    child.on('error', (e: NodeJS.ErrnoException) => {
      spawnError =
        e.code === 'ENOENT'
          ? `load tool "${argv[0]}" is not installed (not found on PATH)`
          : `cannot start "${argv[0]}": ${e.message}`;
    });
    child.stdout!.pipe(so);
    child.stderr!.pipe(se);
    let streams = 2;
    let code: number | null = null;
    let sig: string | null = null;
    let exited = false;
    const finish = () => {
      if (exited && streams === 0) res({ exitCode: code, signal: sig, error: spawnError });
    };
    so.on('close', () => {
      streams--;
      finish();
    });
    se.on('close', () => {
      streams--;
      finish();
    });
    child.on('close', (c, s) => {
      code = c;
      sig = s;
      exited = true;
      finish();
    });
  });
  return {
    done,
    stop: () => child?.kill('SIGTERM'),
    outputs: [{ rel: outRel, stream: out.stream }],
    sideRels: [out.stream === 'stderr' ? stdoutFile : errRel],
    stderrRel: errRel,
  };
}

interface AutocannonInstance {
  stop(): void;
}
type Autocannon = (
  opts: Record<string, unknown>,
  cb: (err: Error | null, result: unknown) => void,
) => AutocannonInstance;

export function autocannonVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(requireHere.resolve('autocannon/package.json'), 'utf8')) as { version: string };
    return `autocannon ${pkg.version}`;
  } catch {
    return 'autocannon';
  }
}

export function startGenerator(o: Options & { load: { kind: 'built-in' } }, dir: string, prefix: string): RunningLoad {
  const rel = `${prefix}autocannon.json`;
  let inst: AutocannonInstance | null = null;
  const done = (async () => {
    const autocannon = requireHere('autocannon') as Autocannon;
    return await new Promise<{ exitCode: number | null; signal: string | null; error: string | null }>((res) => {
      inst = autocannon(
        {
          url: o.load.url,
          connections: o.load.connections,
          duration: o.load.duration,
          ...(o.load.rate !== null ? { overallRate: o.load.rate } : {}),
        },
        (err, result) => {
          if (err) return res({ exitCode: 1, signal: null, error: `built-in generator failed: ${err.message}` });
          // Exactly what `autocannon --json` prints for the same run.
          writeFileSync(join(dir, rel), `${JSON.stringify(result)}\n`);
          res({ exitCode: 0, signal: null, error: null });
        },
      );
    });
  })();
  return {
    done,
    stop: () => (inst as AutocannonInstance | null)?.stop(),
    outputs: [{ rel, stream: 'generator' }],
    sideRels: [],
    stderrRel: null,
  };
}

/** Reads a load-test file the way the server will; null (with the reason) when it cannot. */
export async function readLoad(
  path: string,
): Promise<{ rps: number | null; requests: number | null; errors: number | null; p99: number | null } | string> {
  try {
    const p = await ingest({ name: basename(path), path });
    if (p.kind !== 'loadtest') return `read as a ${p.kind}, not a load test`;
    if (p.runs.length !== 1) return `read as ${p.runs.length} runs, not one`;
    const s = p.runs[0]!.summary;
    return { rps: s.rps, requests: s.requests, errors: s.errors, p99: s.latencyMs.p99 };
  } catch (e) {
    return (e as Error).message;
  }
}
