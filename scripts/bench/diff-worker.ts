// Child process of the diff section. Two uses:
//   diff-worker.ts serve                 — a warm process answering one JSON request per stdin line,
//                                          {"op": "flamegraph" | "diff", "files": [PATH…]}, with
//                                          {"ms": …} for one run of the view (models already loaded);
//   diff-worker.ts rss OP PATH…          — one run of OP in this fresh process, its models read from
//                                          their compact form (PATH.sdp, as a server worker reads
//                                          them from the store): the peak resident memory, and the
//                                          op's own part of it (the peak above what the models hold);
//   diff-worker.ts compact PATH OUT      — writes PATH's model in its compact form to OUT.
// A model is what the server keeps per upload: the parsed profile with its samples aggregated.
// "flamegraph" is the flamegraph view's work: the call tree of the default sample type trimmed as
// the web client asks (minFraction 0.0005) and its JSON; "diff" the diff view's: diffProfiles of
// the two (absolute, same minFraction: rows and tree) and its JSON with the rows the endpoint sends.
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parsePprof } from '../../server/src/ingest/pprof/index.ts';
import { aggregateSamples, decodeProfile, encodeProfile } from '../../server/src/model/profile-codec.ts';
import { callTree } from '../../server/src/analysis/call-tree.ts';
import { diffProfiles } from '../../server/src/analysis/diff.ts';
import type { Profile } from '../../server/src/model/profile.ts';
import { DIFF_DEFAULT_ROWS } from '../../server/src/api/views.ts';
import { TREE_MIN_FRACTION } from '../../server/src/api/page-requests.ts';

const models = new Map<string, Profile>();

function model(file: string): Profile {
  let p = models.get(file);
  if (!p) {
    p = file.endsWith('.sdp') ? decodeProfile(readFileSync(file))! : aggregateSamples(parsePprof(readFileSync(file)));
    models.set(file, p);
  }
  return p;
}

/** One run of an op; returns the JSON's length so no work can be skipped. */
function runOp(op: string, files: string[]): number {
  const a = model(files[0]!);
  const type = a.defaultSampleType;
  if (op === 'flamegraph') {
    const i = a.sampleTypes.findIndex((t) => t.type === type);
    return JSON.stringify(callTree(a, i, TREE_MIN_FRACTION)).length;
  }
  if (op === 'diff') {
    const b = model(files[1]!);
    const d = diffProfiles(a, b, { sampleType: type, mode: 'absolute', minFraction: TREE_MIN_FRACTION });
    // As the diff endpoint answers: the rows ranked, the first DIFF_DEFAULT_ROWS of them sent.
    return JSON.stringify({ ...d, rowsTotal: d.rows.length, rows: d.rows.slice(0, DIFF_DEFAULT_ROWS) }).length;
  }
  throw new Error(`unknown op ${op}`);
}

function status(field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

const [cmd, op, ...files] = process.argv.slice(2);
if (cmd === 'serve') {
  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    const req = JSON.parse(line) as { op: string; files: string[] };
    try {
      for (const f of req.files) model(f);
      const t0 = performance.now();
      const check = runOp(req.op, req.files);
      process.stdout.write(`${JSON.stringify({ ms: performance.now() - t0, check })}\n`);
    } catch (e) {
      process.stdout.write(`${JSON.stringify({ error: (e as Error).message })}\n`);
    }
  }
} else if (cmd === 'rss') {
  for (const f of files) model(f);
  // Let the parse's garbage go, then restart the high-water mark (Linux: clear_refs 5), so the peak
  // read afterwards is the op's own.
  (globalThis as { gc?: () => void }).gc?.();
  const before = status('VmRSS');
  const hwmAtLoad = status('VmHWM');
  writeFileSync('/proc/self/clear_refs', '5');
  const t0 = performance.now();
  const check = runOp(op!, files);
  const ms = performance.now() - t0;
  const peak = status('VmHWM');
  // The process's own peak over its whole life is the larger of the two high-water marks.
  process.stdout.write(
    `${JSON.stringify({ op, ms, check, before, peak, net: peak - before, processPeak: Math.max(peak, hwmAtLoad) })}\n`,
  );
} else if (cmd === 'compact') {
  writeFileSync(files[0]!, encodeProfile(model(op!)));
} else {
  process.stderr.write('usage: diff-worker.ts serve | rss OP PATH…\n');
  process.exit(2);
}
