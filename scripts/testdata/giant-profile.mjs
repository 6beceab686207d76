#!/usr/bin/env node
// A seeded synthetic Go CPU profile (pprof protobuf, gzipped) of any number of samples, for the
// benchmarks of big profiles. The same `graphSeed` gives the same program (functions, files, call
// graph), so two profiles of one program can be diffed; `seed` picks the samples (random walks down
// the call graph, each its own sample record, as a profile that was never aggregated would hold).
//
//   node scripts/testdata/giant-profile.mjs [--samples N] [--seed S] [--out FILE]
//
// Without --out the file is cached under .testdata-cache/ (ignored by git) and its path printed.
// The default — 8,000,000 samples — inflates to about 317 MiB.
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openCpuProfile, prng, varintLength, Writer } from './pprof-wire.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The program: functions (one location each) and, per function, the functions it calls. */
function program(graphSeed, numFunctions) {
  const rnd = prng(graphSeed);
  const pkgs = ['encoding/json', 'net/http', 'runtime', 'bufio', 'sync', 'strconv', 'reflect', 'bytes'];
  for (let i = 0; i < 40; i++) pkgs.push(`github.com/acme/shop/internal/svc${i}`);
  const funcs = [];
  for (let i = 0; i < numFunctions; i++) {
    const pkg = pkgs[Math.floor(rnd() * pkgs.length)];
    const recv = rnd() < 0.5 ? `(*T${Math.floor(rnd() * 50)}).` : '';
    funcs.push({
      name: `${pkg}.${recv}Func${i}`,
      file: `/src/${pkg}/file${i % 97}.go`,
      line: 10 + Math.floor(rnd() * 900),
    });
  }
  funcs[0] = { name: 'runtime.goexit', file: '/usr/local/go/src/runtime/asm_amd64.s', line: 1700 };
  funcs[1] = { name: 'net/http.(*conn).serve', file: '/usr/local/go/src/net/http/server.go', line: 2092 };
  const callees = funcs.map(() => {
    const k = 2 + Math.floor(rnd() * 4);
    return Array.from({ length: k }, () => 2 + Math.floor(rnd() * (numFunctions - 2)));
  });
  return { funcs, callees };
}

/**
 * Writes the profile. Returns {path, inflatedBytes, samples}. Samples are random walks from the
 * root: depth 6..24, each step to one of the current function's callees (earlier callees likelier).
 */
export async function writeGiantProfile({
  samples,
  seed,
  graphSeed = 1,
  numFunctions = 6000,
  numPaths = 20_000,
  skew = 3,
  callGraph = true,
  out,
}) {
  const { write, str, strings, done, gz, tmp, inflated } = await openCpuProfile(out);
  const w = new Writer();

  const { funcs, callees } = program(graphSeed, numFunctions);
  // The program's distinct call paths (from graphSeed), encoded once: location ids, leaf first.
  const walk = prng(graphSeed + 1);
  const paths = [];
  const stack = new Uint32Array(32);
  const enc = new Writer(256);
  // A few deep entry chains (server loop, middleware, handler) shared by most stacks, as in a real
  // service; below them a walk of the call graph.
  const chains = Array.from({ length: 6 }, () => {
    const c = [0, 1];
    const len = 8 + Math.floor(walk() * 6);
    while (c.length < len) c.push(2 + Math.floor(walk() * (numFunctions - 2)));
    return c;
  });
  for (let p = 0; p < numPaths; p++) {
    const chain = chains[Math.floor(walk() ** 2 * chains.length)];
    const depth = chain.length + 2 + Math.floor(walk() * 9);
    for (let d = 0; d < chain.length; d++) stack[d] = chain[d];
    let f = chain[chain.length - 1];
    for (let d = chain.length; d < depth; d++) {
      const c = callees[f];
      const r = walk();
      // without the call graph every step is any function: nearly every path is distinct
      f = callGraph ? c[Math.floor(r * r * c.length)] : 2 + Math.floor(r * (numFunctions - 2));
      stack[d] = f;
    }
    let locBytes = 0;
    for (let d = 0; d < depth; d++) locBytes += varintLength(stack[d] + 1);
    enc.tag(1, 2);
    enc.varint(locBytes);
    for (let d = depth - 1; d >= 0; d--) enc.varint(stack[d] + 1);
    paths.push(enc.take());
  }
  // Samples (from seed): a path, hot paths far likelier (r^skew), and one or two ticks.
  const rnd = prng(seed);
  const period = 10_000_000;
  const sample = new Writer(256);
  for (let s = 0; s < samples; s++) {
    const path = paths[Math.floor(rnd() ** skew * numPaths)];
    const ticks = rnd() < 0.1 ? 2 : 1;
    const vals = [ticks, ticks * period];
    let valBytes = 0;
    for (const v of vals) valBytes += varintLength(v);
    sample.tag(2, 2);
    sample.varint(path.length + 2 + valBytes);
    sample.ensure(path.length);
    path.copy(sample.buf, sample.pos);
    sample.pos += path.length;
    sample.tag(2, 2);
    sample.varint(valBytes);
    for (const v of vals) sample.varint(v);
    const body = sample.take();
    w.ensure(body.length);
    body.copy(w.buf, w.pos);
    w.pos += body.length;
    if (w.pos > 1 << 21) await write(w.take());
  }
  // mapping, locations, functions
  const m = new Writer(128);
  m.uint(1, 1);
  m.uint(2, 0x400000);
  m.uint(3, 0x4000000);
  m.uint(5, str('/app/shop'));
  m.uint(7, 1);
  m.uint(8, 1);
  m.uint(9, 1);
  m.uint(10, 1);
  w.bytes(3, m.take());
  const loc = new Writer(128);
  const line = new Writer(32);
  const fn = new Writer(128);
  funcs.forEach((f, i) => {
    line.uint(1, i + 1);
    line.uint(2, f.line + 3);
    loc.uint(1, i + 1);
    loc.uint(2, 1);
    loc.uint(3, 0x401000 + i * 64);
    loc.bytes(4, line.take());
    w.bytes(4, loc.take());
  });
  funcs.forEach((f, i) => {
    fn.uint(1, i + 1);
    fn.uint(2, str(f.name));
    fn.uint(3, str(f.name));
    fn.uint(4, str(f.file));
    fn.uint(5, f.line);
    w.bytes(5, fn.take());
  });
  const periodType = new Writer(32);
  periodType.uint(1, str('cpu'));
  periodType.uint(2, str('nanoseconds'));
  for (const s of strings) w.string(6, s);
  w.uint(9, 1_700_000_000 * 1e9);
  w.uint(10, 30 * 1e9);
  w.bytes(11, periodType.take());
  w.uint(12, period);
  await write(w.take());
  gz.end();
  await done;
  renameSync(tmp, out);
  return { path: out, inflatedBytes: inflated(), samples };
}

/** The cached profile of `samples` samples (generated on first use). */
export async function giantProfilePath({ samples = 8_000_000, seed = 42 } = {}) {
  const out = join(repoRoot, '.testdata-cache', `giant-cpu-v2-${samples}-s${seed}.pb.gz`);
  if (!existsSync(out)) await writeGiantProfile({ samples, seed, out });
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      samples: { type: 'string', default: '8000000' },
      seed: { type: 'string', default: '42' },
      out: { type: 'string' },
    },
  });
  const samples = Number(values.samples);
  const seed = Number(values.seed);
  const t0 = performance.now();
  const r = values.out
    ? await writeGiantProfile({ samples, seed, out: values.out })
    : { path: await giantProfilePath({ samples, seed }) };
  console.log(
    `${r.path}${r.inflatedBytes ? ` (${(r.inflatedBytes / 1048576).toFixed(1)} MiB inflated)` : ''} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}
