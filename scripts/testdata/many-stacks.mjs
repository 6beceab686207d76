#!/usr/bin/env node
// A seeded synthetic Go CPU profile whose samples spread over a great many distinct stacks: by
// default 8,000,000 samples over 1,000,000 distinct stacks of a program of 6,000 functions and
// 16,000 locations, one stack in a hundred ending in 200–400 frames of mutual recursion (about
// 40 MB gzipped, 317 MiB inflated). Aggregation cannot shrink such a profile much: its model and
// its call tree (millions of nodes) are as big as a real profile's get, which is what the big-profile
// test and benchmark need. Every sample is its own record, as in a profile nobody aggregated.
//
// The program (functions, locations, call graph and the set of stacks) comes from `graphSeed`; the
// samples from `seed`. Two seeds over one program are two runs of it, to diff: every stack is
// sampled at least once in each, with different weights.
//
//   node scripts/testdata/many-stacks.mjs [--samples N] [--stacks N] [--seed S] [--out FILE]
//
// Without --out the file is cached under .testdata-cache/ (ignored by git) and its path printed.
import { existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { openCpuProfile, prng, varintLength, Writer } from './pprof-wire.mjs';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** Bump when the output for the same options changes, so cached files are made again. */
const VERSION = 1;

/**
 * The program: functions, their locations (call sites; every function has one, the rest are spread
 * at random), a call graph, and `numStacks` distinct call paths grown as a tree: each path extends
 * an earlier one by one to three calls along the graph, or starts from one of six entry chains;
 * one in a hundred ends in a mutual recursion of 200–400 frames. Paths are location ids, root first.
 */
function program(graphSeed, numFunctions, numLocations, numStacks, deepShare) {
  const rnd = prng(graphSeed);
  const int = (n) => Math.floor(rnd() * n);
  const pkgs = ['encoding/json', 'net/http', 'runtime', 'bufio', 'sync', 'strconv', 'reflect', 'bytes'];
  for (let i = 0; i < 40; i++) pkgs.push(`github.com/acme/shop/internal/svc${i}`);
  const funcs = [];
  for (let i = 0; i < numFunctions; i++) {
    const pkg = pkgs[int(pkgs.length)];
    const recv = rnd() < 0.5 ? `(*T${int(50)}).` : '';
    funcs.push({ name: `${pkg}.${recv}Func${i}`, file: `/src/${pkg}/file${i % 97}.go`, line: 10 + int(900) });
  }
  funcs[0] = { name: 'runtime.goexit', file: '/usr/local/go/src/runtime/asm_amd64.s', line: 1700 };
  funcs[1] = { name: 'net/http.(*conn).serve', file: '/usr/local/go/src/net/http/server.go', line: 2092 };
  // Locations: location i (id i + 1) is in function locFn[i] at line locLine[i].
  const locFn = new Uint32Array(numLocations);
  const locLine = new Uint32Array(numLocations);
  const fnLocs = funcs.map(() => []);
  for (let i = 0; i < numLocations; i++) {
    const f = i < numFunctions ? i : int(numFunctions);
    locFn[i] = f;
    locLine[i] = funcs[f].line + 1 + int(60);
    fnLocs[f].push(i);
  }
  const callees = funcs.map(() => Array.from({ length: 3 + int(6) }, () => 2 + int(numFunctions - 2)));
  /** A location of f: one of its call sites. */
  const site = (f) => fnLocs[f][int(fnLocs[f].length)];
  const recursive = Array.from({ length: 40 }, () => 2 + int(numFunctions - 2));

  const chains = Array.from({ length: 6 }, () => {
    const fns = [0, 1];
    const len = 6 + int(5);
    while (fns.length < len) fns.push(2 + int(numFunctions - 2));
    return fns;
  });
  // Paths, root first: locations in `locs` and their functions in `fns`, path p at [start[p], start[p + 1]).
  let cap = numStacks * 16;
  let locs = new Uint32Array(cap);
  let fns = new Uint32Array(cap);
  const start = new Uint32Array(numStacks + 1);
  let used = 0;
  let count = 0;
  const seen = new Set();
  const scratchLoc = [];
  const scratchFn = [];
  const add = () => {
    const key = scratchLoc.join(',');
    if (seen.has(key)) return;
    seen.add(key);
    if (used + scratchLoc.length > cap) {
      cap = Math.max(cap * 2, used + scratchLoc.length);
      const l = new Uint32Array(cap);
      l.set(locs);
      locs = l;
      const f = new Uint32Array(cap);
      f.set(fns);
      fns = f;
    }
    for (let i = 0; i < scratchLoc.length; i++) {
      locs[used + i] = scratchLoc[i];
      fns[used + i] = scratchFn[i];
    }
    used += scratchLoc.length;
    start[++count] = used;
  };
  const push = (f) => {
    scratchLoc.push(site(f));
    scratchFn.push(f);
  };
  for (const c of chains) {
    scratchLoc.length = 0;
    scratchFn.length = 0;
    for (const f of c) push(f);
    add();
  }
  while (count < numStacks) {
    scratchLoc.length = 0;
    scratchFn.length = 0;
    const parent = int(count);
    const from = start[parent];
    const len = start[parent + 1] - from;
    if (len > 12) for (const f of chains[int(chains.length)]) push(f);
    else
      for (let i = 0; i < len; i++) {
        scratchLoc.push(locs[from + i]);
        scratchFn.push(fns[from + i]);
      }
    if (rnd() < deepShare) {
      const a = recursive[int(recursive.length)];
      const b = recursive[int(recursive.length)];
      const depth = 200 + int(201);
      for (let d = 0; d < depth; d++) push(d % 2 === 0 ? a : b);
    }
    const steps = 1 + int(3);
    for (let s = 0; s < steps; s++) {
      const c = callees[scratchFn[scratchFn.length - 1]];
      push(c[int(c.length)]);
    }
    add();
  }
  return { funcs, locFn, locLine, locs, start };
}

/**
 * Writes the profile. Samples: a fifth are fresh draws — the first ones visit every stack once (in a
 * scrambled order), later ones favour low-numbered stacks — and the rest repeat one of the 32 most
 * recent fresh draws (a program runs the same code for a while), which is also what lets gzip find
 * repeats. One sample in ten is two ticks.
 */
export async function writeManyStacksProfile({
  samples = 8_000_000,
  stacks = 1_000_000,
  seed = 42,
  graphSeed = 1,
  functions = 6_000,
  locations = 16_000,
  deepShare = 0.01,
  out,
}) {
  if (samples < stacks) throw new Error(`${samples} samples cannot cover ${stacks} stacks`);
  const { write, str, strings, done, gz, tmp, inflated } = await openCpuProfile(out);
  const w = new Writer();

  const prog = program(graphSeed, functions, locations, stacks, deepShare);
  const rnd = prng(seed);
  const period = 10_000_000;
  // A scrambled visit of every stack: i → (i × a + b) mod stacks, a coprime with stacks.
  let a = 2654435761 % stacks;
  const gcd = (x, y) => (y === 0 ? x : gcd(y, x % y));
  while (gcd(a, stacks) !== 1) a++;
  const b = Math.floor(rnd() * stacks);
  const recent = new Uint32Array(32);
  let fresh = 0;
  for (let s = 0; s < samples; s++) {
    let p;
    // Fresh draws while stacks are left unvisited and samples would otherwise run out.
    const mustVisit = fresh < stacks && samples - s <= stacks - fresh;
    if (mustVisit || fresh === 0 || rnd() < 0.2) {
      p = fresh < stacks ? (fresh * a + b) % stacks : Math.floor(rnd() ** 3 * stacks);
      recent[fresh % recent.length] = p;
      fresh++;
    } else p = recent[Math.floor(rnd() * Math.min(fresh, recent.length))];
    const from = prog.start[p];
    const to = prog.start[p + 1];
    let locBytes = 0;
    for (let i = from; i < to; i++) locBytes += varintLength(prog.locs[i] + 1);
    const ticks = rnd() < 0.1 ? 2 : 1;
    const valBytes = varintLength(ticks) + varintLength(ticks * period);
    const body = 1 + varintLength(locBytes) + locBytes + 2 + valBytes;
    w.tag(2, 2);
    w.varint(body);
    w.tag(1, 2);
    w.varint(locBytes);
    // leaf first
    for (let i = to - 1; i >= from; i--) w.varint(prog.locs[i] + 1);
    w.tag(2, 2);
    w.varint(valBytes);
    w.varint(ticks);
    w.varint(ticks * period);
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
  for (let i = 0; i < locations; i++) {
    line.uint(1, prog.locFn[i] + 1);
    line.uint(2, prog.locLine[i]);
    loc.uint(1, i + 1);
    loc.uint(2, 1);
    loc.uint(3, 0x401000 + i * 64);
    loc.bytes(4, line.take());
    w.bytes(4, loc.take());
  }
  const fn = new Writer(128);
  prog.funcs.forEach((f, i) => {
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
  for (const s of strings) w.bytes(6, Buffer.from(s, 'utf8'));
  w.uint(9, 1_700_000_000 * 1e9);
  w.uint(10, 30 * 1e9);
  w.bytes(11, periodType.take());
  w.uint(12, period);
  await write(w.take());
  gz.end();
  await done;
  renameSync(tmp, out);
  return { path: out, inflatedBytes: inflated(), samples, stacks };
}

/** The cached profile (generated on first use): by default 8M samples over 1M stacks, seed 42. */
export async function manyStacksProfilePath({ samples = 8_000_000, stacks = 1_000_000, seed = 42 } = {}) {
  const out = join(repoRoot, '.testdata-cache', `many-stacks-v${VERSION}-${samples}-${stacks}-s${seed}.pb.gz`);
  if (!existsSync(out)) await writeManyStacksProfile({ samples, stacks, seed, out });
  return out;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: {
      samples: { type: 'string', default: '8000000' },
      stacks: { type: 'string', default: '1000000' },
      seed: { type: 'string', default: '42' },
      out: { type: 'string' },
    },
  });
  const o = { samples: Number(values.samples), stacks: Number(values.stacks), seed: Number(values.seed) };
  const t0 = performance.now();
  const r = values.out
    ? await writeManyStacksProfile({ ...o, out: values.out })
    : { path: await manyStacksProfilePath(o) };
  console.log(
    `${r.path}${r.inflatedBytes ? ` (${(r.inflatedBytes / 1048576).toFixed(1)} MiB inflated)` : ''} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}
