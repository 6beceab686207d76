// Child process of the pprof section. Two uses:
//   pprof-worker.ts serve            — a warm process answering one JSON request per stdin line,
//                                      {"op": "ours" | "pbjs-reflect" | "pbjs-static", "file": PATH},
//                                      with {"ms": …} for one full run of that op;
//   pprof-worker.ts rss OP [FILE]    — one run of OP in a fresh process, then its peak memory
//                                      (OP "baseline" loads everything and parses nothing).
// "ours" is what `stagediff inspect` computes: parse, flat/cum of the default sample type, the top
// rows by flat and by cum, and the total of every sample type. "pbjs-*" only inflate and decode the
// protobuf message with protobufjs (reflection from proto/profile.proto, or code generated from it
// by pbjs): a lower bound on any protobufjs-based ingest, which would still have to resolve ids and
// build the model afterwards.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { parsePprof } from '../../server/src/ingest/pprof/index.ts';
import { flatCum, sortByCum, sortByFlat, total } from '../../server/src/analysis/flat-cum.ts';
import { peakRssBytes } from './rss.ts';

const repo = new URL('../../', import.meta.url).pathname;

interface Decoder {
  decode(bytes: Uint8Array): unknown;
}
let reflectType: Decoder | null = null;
let staticType: Decoder | null = null;

function reflect(): Decoder {
  reflectType ??= protobuf.loadSync(`${repo}proto/profile.proto`).lookupType('stagediff.pprof.Profile');
  return reflectType;
}

/** The code pbjs generates (the bench section writes it to test-artifacts/bench/ before starting). */
function generated(): Decoder {
  if (!staticType) {
    const require = createRequire(import.meta.url);
    const mod = require(`${repo}test-artifacts/bench/profile-static.cjs`) as {
      stagediff: { pprof: { Profile: Decoder } };
    };
    staticType = mod.stagediff.pprof.Profile;
  }
  return staticType;
}

function inflate(bytes: Buffer): Uint8Array {
  return bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes) : bytes;
}

/** One run of an op; returns something derived from the result so no work can be skipped. */
export function runOp(op: string, file: string): number {
  const bytes = readFileSync(file);
  switch (op) {
    case 'ours': {
      const p = parsePprof(bytes);
      const i = p.sampleTypes.findIndex((t) => t.type === p.defaultSampleType);
      const rows = flatCum(p, i);
      const top = sortByFlat([...rows]).slice(0, 20);
      const topCum = sortByCum([...rows]).slice(0, 20);
      let sum = 0;
      for (let t = 0; t < p.sampleTypes.length; t++) sum += total(p, t);
      return top.length + topCum.length + (sum > 0 ? 1 : 0);
    }
    case 'parse':
      return parsePprof(bytes).stats.numSamples;
    case 'pbjs-reflect':
      return (reflect().decode(inflate(bytes)) as { sample: unknown[] }).sample.length;
    case 'pbjs-static':
      return (generated().decode(inflate(bytes)) as { sample: unknown[] }).sample.length;
    case 'baseline':
      return 0;
    default:
      throw new Error(`unknown op ${op}`);
  }
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
const [cmd, op, file] = isMain ? process.argv.slice(2) : [];
if (!isMain) {
  // Imported (e.g. by a profiling script): only runOp is wanted.
} else if (cmd === 'serve') {
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const req = JSON.parse(line) as { op: string; file: string };
    try {
      const t0 = performance.now();
      const check = runOp(req.op, req.file);
      const ms = performance.now() - t0;
      process.stdout.write(`${JSON.stringify({ ms, check })}\n`);
    } catch (e) {
      process.stdout.write(`${JSON.stringify({ error: (e as Error).message })}\n`);
    }
  }
} else if (cmd === 'rss') {
  // Load the code paths the op needs before the baseline figure would be taken, so that the net
  // figure is the op's data, not its modules.
  if (op === 'baseline-pbjs') {
    reflect();
    generated();
  }
  const t0 = performance.now();
  const check = op!.startsWith('baseline') ? 0 : runOp(op!, file!);
  const ms = performance.now() - t0;
  process.stdout.write(`${JSON.stringify({ op, ms, check, ...peakRssBytes() })}\n`);
} else {
  process.stderr.write('usage: pprof-worker.ts serve | rss OP [FILE]\n');
  process.exit(2);
}
