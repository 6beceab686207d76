import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { runCliSync } from '../helpers/cli.ts';
import { fixturesDir, repoRoot, samplePath } from '../helpers/paths.ts';
import { parseTopAll, parseTopRows } from '../helpers/pprof-text.ts';
import { reportTotal } from '../helpers/trace-compare.ts';

describe('stagediff inspect --json', () => {
  it('reports a heap profile per the contract, opening on inuse_space', () => {
    const r = runCliSync('inspect', samplePath('pprof/go_httpserver_before_heap.pb.gz'), '--json', '--top', '10');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    const ref = JSON.parse(readFileSync(samplePath('pprof/expected/go_httpserver_before_heap.json'), 'utf8'));
    expect(o.kind).toBe('profile');
    expect(o.format).toBe('pprof');
    expect(o.defaultSampleType).toBe('inuse_space');
    expect(o.sampleType).toBe('inuse_space');
    expect(o.sampleTypes).toEqual(ref.sample_types);
    expect(o.periodType).toEqual(ref.period_type);
    expect(o.numSamples).toBe(ref.num_samples);
    expect(o.numLocations).toBe(ref.num_locations);
    expect(o.numFunctions).toBe(ref.num_functions);
    expect(o.numMappings).toBe(ref.num_mappings);
    for (const t of ref.totals) expect(o.totals[t.type]).toBe(t.total);
    expect(o.top).toEqual(ref.top10_by_flat);
    expect(o.topCum).toEqual(ref.top10_by_cum);
    expect(o.description.kind).toBe('heap');
  });

  it('prints time_nanos exactly, past 2^53 (the reference profile’s 1795310508350514331)', () => {
    const ref = JSON.parse(readFileSync(samplePath('pprof/expected/go_bench_compress_flate_cpu.json'), 'utf8'));
    const r = runCliSync('inspect', samplePath('pprof/go_bench_compress_flate_cpu.pb.gz'), '--json', '--top', '1');
    expect(r.status, r.stderr).toBe(0);
    // JSON.parse would round it: read the digits as written
    const digits = /^ {2}"timeNanos": (\d+),$/m.exec(r.stdout)?.[1];
    const refDigits = /"time_nanos": (\d+)/.exec(
      readFileSync(samplePath('pprof/expected/go_bench_compress_flate_cpu.json'), 'utf8'),
    )?.[1];
    expect(refDigits).toBe('1795310508350514331');
    expect(digits).toBe(refDigits);
    expect(JSON.parse(r.stdout).timeNanos).toBe(ref.time_nanos); // both rounded the same way
  });

  it('honours --sample-type and a go test -memprofile file opens on alloc_space', () => {
    const r = runCliSync('inspect', samplePath('pprof/go_bench_sort_mem.pb.gz'), '--json');
    expect(JSON.parse(r.stdout).sampleType).toBe('alloc_space');
    const r2 = runCliSync(
      'inspect',
      samplePath('pprof/go_bench_sort_mem.pb.gz'),
      '--json',
      '--sample-type',
      'alloc_objects',
      '--top',
      '3',
    );
    const o = JSON.parse(r2.stdout);
    expect(o.sampleType).toBe('alloc_objects');
    expect(o.top).toHaveLength(3);
    const alltypes = JSON.parse(readFileSync(samplePath('pprof/expected/alltypes.json'), 'utf8')) as {
      file: string;
      types: { type: string; functions: Record<string, [number, number]> }[];
    }[];
    const fns = alltypes
      .find((e) => e.file === 'go_bench_sort_mem.pb.gz')!
      .types.find((t) => t.type === 'alloc_objects')!.functions;
    for (const row of o.top) expect([row.flat, row.cum]).toEqual(fns[row.name]);
  });
});

describe('stagediff diff --json', () => {
  it('equals go tool pprof -diff_base on the before/after CPU pair', () => {
    const r = runCliSync(
      'diff',
      samplePath('pprof/go_httpserver_before_cpu.pb.gz'),
      samplePath('pprof/go_httpserver_after_cpu.pb.gz'),
      '--json',
      '--top',
      '10',
    );
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    const ref = JSON.parse(readFileSync(samplePath('pprof/expected/diff/go_httpserver_cpu.diff.json'), 'utf8'));
    expect(o.sampleType).toBe('cpu');
    expect(o.baseTotal).toBe(ref.base_total);
    expect(o.targetTotal).toBe(ref.after_total);
    expect(
      o.top.map((x: { name: string; deltaFlat: number; deltaCum: number }) => ({
        name: x.name,
        flat: x.deltaFlat,
        cum: x.deltaCum,
      })),
    ).toEqual(ref.top10_by_flat);
    for (const x of o.top) {
      expect(x.deltaFlat).toBe(x.target.flat - x.base.flat);
      expect(x.deltaCum).toBe(x.target.cum - x.base.cum);
    }
  });
});

describe('bad input: exit code ≠ 0 and one clear line naming the file', () => {
  const cases: [string, string[], RegExp][] = [
    ['missing file', ['inspect', '/nonexistent/cpu.pb.gz'], /cpu\.pb\.gz: no such file/],
    [
      'gzip bomb',
      ['inspect', samplePath('pprof/hostile/gzip_bomb_10GB_zeros.pb.gz')],
      /gzip_bomb_10GB_zeros\.pb\.gz: .*limit/,
    ],
    [
      'truncated gzip',
      ['inspect', samplePath('pprof/hostile/truncated_gzip.pb.gz')],
      /truncated_gzip\.pb\.gz: corrupt gzip/,
    ],
    [
      'bad reference',
      ['inspect', samplePath('pprof/hostile/missing_location_id.pb.gz')],
      /missing_location_id\.pb\.gz: .*location/,
    ],
    [
      'unknown sample type',
      ['inspect', samplePath('pprof/go_httpserver_before_cpu.pb.gz'), '--sample-type', 'heap'],
      /no sample type "heap"/,
    ],
    [
      'diff of mismatched kinds',
      ['diff', samplePath('pprof/go_httpserver_before_cpu.pb.gz'), samplePath('pprof/go_httpserver_after_heap.pb.gz')],
      /no sample type "inuse_space"/,
    ],
    ['usage', ['inspect'], /inspect needs exactly one FILE/],
  ];
  for (const [what, args, re] of cases) {
    it(what, () => {
      const r = runCliSync(...args);
      expect(r.status).not.toBe(0);
      const lines = r.stderr.split('\n').filter((l) => l.startsWith('stagediff:'));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(re);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    });
  }
});

describe('stagediff inspect --json totals of profiles with negative values', () => {
  // fixtures/profiles/delta: a net/http/pprof ?seconds=2 delta heap profile, and go tool pprof
  // -proto -diff_base output; *.pprof-top.txt hold `go tool pprof -top -unit=… -sample_index=…`'s
  // "… of X total" line for each sample type
  for (const name of ['heap-delta', 'heap-diff']) {
    it(`${name}: totals are pprof's percentage base`, () => {
      const r = runCliSync('inspect', `${repoRoot}fixtures/profiles/delta/${name}.pb.gz`, '--json');
      expect(r.status, r.stderr).toBe(0);
      const o = JSON.parse(r.stdout);
      const lines = readFileSync(`${repoRoot}fixtures/profiles/delta/${name}.pprof-top.txt`, 'utf8').trim().split('\n');
      expect(lines.length).toBe(4);
      for (const l of lines) {
        const m = /^(\w+): .* of (-?\d+)B? total$/.exec(l)!;
        expect(o.totals[m[1]!], l).toBe(Number(m[2]));
      }
    });
  }
});

describe('stagediff inspect --json of a file of several runs and of new formats', () => {
  it('wrk/three-runs.txt: each run in the file’s order', () => {
    const r = runCliSync('inspect', `${repoRoot}fixtures/loadtests/wrk/three-runs.txt`, '--json');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    expect([o.kind, o.format, o.note]).toEqual(['loadtest', 'wrk', '3 runs read from one file']);
    expect(o.runs.map((x: { summary: { rps: number } }) => x.summary.rps)).toEqual([19925.47, 18360, 21217.19]);
  });

  it('oha and trace-derived profiles name their format and kind', () => {
    const oha = JSON.parse(runCliSync('inspect', `${repoRoot}fixtures/loadtests/oha/ok.json`, '--json').stdout);
    expect([oha.kind, oha.format, oha.summary.rps]).toEqual(['loadtest', 'oha-json', 35235.85193248088]);
    const sched = JSON.parse(runCliSync('inspect', `${repoRoot}fixtures/profiles/trace/sched.pprof`, '--json').stdout);
    expect(sched.description.kind).toBe('trace-sched');
  });
});

describe('stagediff inspect --root', () => {
  const demo = `${repoRoot}fixtures/demo/baseline/run-1/cpu.pb.gz`;
  it('prints the subtree under a call path, re-trimmed at its own value, and what it left out', () => {
    const path = 'net/http.(*conn).serve;net/http.serverHandler.ServeHTTP';
    const r = runCliSync('inspect', demo, '--json', '--top', '1', '--root', path, '--min-fraction', '0.2');
    expect(r.status, r.stderr).toBe(0);
    const s = JSON.parse(r.stdout).subtree;
    expect(s.root).toEqual(path.split(';'));
    expect(s.minFraction).toBe(0.2);
    expect(s.tree.name).toBe('net/http.serverHandler.ServeHTTP');
    // every drawn child holds at least a fifth of the subtree; what was cut is reported
    const walk = (n: { value: number; children: { value: number }[] }): void => {
      for (const c of n.children) {
        expect(c.value).toBeGreaterThanOrEqual(0.2 * s.tree.value);
        walk(c as typeof n);
      }
    };
    walk(s.tree);
    expect(s.trim.prunedNodes).toBeGreaterThan(0);
    const text = runCliSync('inspect', demo, '--top', '1', '--root', path, '--min-fraction', '0.2');
    expect(text.stdout).toMatch(/^Subtree: net\/http\.\(\*conn\)\.serve → net\/http\.serverHandler\.ServeHTTP, /m);
    expect(text.stdout).toMatch(/^[\d.]+% in \d+ frames under 20% of it, too small to draw$/m);
  });

  it('names a call path no sample passes through, and a bad --min-fraction', () => {
    const r = runCliSync('inspect', demo, '--root', 'main.nothing');
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/--root: no sample passes through the call path main\.nothing/);
    const f = runCliSync('inspect', demo, '--root', '', '--min-fraction', '2');
    expect(f.status).not.toBe(0);
    expect(f.stderr).toMatch(/--min-fraction needs a number from 0 to 1, got "2"/);
  });
});

// Execution traces: the summary, and --kind for a derived profile (fixtures/traces and Go’s answers).
const trace = (name: string) => `${fixturesDir}traces/${name}.trace`;
const expected = (name: string) => `${fixturesDir}traces/expected/${name}`;

describe('inspect TRACE', () => {
  it('--json prints the summary (as scripts/trace-reference computes it) and each derived profile’s totals', () => {
    const r = runCliSync('inspect', trace('xtime-rate-go1.22'), '--json');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    const ref = JSON.parse(readFileSync(expected('xtime-rate-go1.22.summary.json'), 'utf8'));
    expect([o.kind, o.format, o.goVersion, o.generations, o.events]).toEqual([
      'trace',
      'go-trace',
      '1.22',
      3,
      ref.events,
    ]);
    expect(o.schedWait).toEqual(ref.schedWait);
    expect(o.gc).toEqual(ref.gc);
    for (const k of ['net', 'sync', 'syscall', 'sched']) {
      const text = readFileSync(expected(`xtime-rate-go1.22.${k}.delay.txt`), 'utf8');
      expect([k, o.profiles[k].delayNanos]).toEqual([k, reportTotal(text)]);
    }
  });

  it('without --json: one screen of figures', () => {
    const r = runCliSync('inspect', trace('demo-go1.26-light-3gen'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Format: Go execution trace \(go 1\.26\), 3 generation\(s\), 6060 events/m);
    expect(r.stdout).toMatch(/^Scheduling wait \(runnable → running\): \d+, mean/m);
    expect(r.stdout).toContain('net/http.(*conn).serve');
  });

  it('says which go tool trace its derived profiles equal, with the trace’s own Go version', () => {
    const r = runCliSync('inspect', trace('xtime-rate-go1.22'));
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      "Note: trace written by go 1.22: its net, sync, syscall and sched profiles equal Go 1.26's go tool trace -pprof; earlier releases of the tool drop stackless events (golang/go#74850) and can show other figures",
    );
  });

  it('--kind sched --json prints the derived profile like any profile, equal to go tool trace -pprof=sched', () => {
    const r = runCliSync('inspect', trace('demo-go1.26-pooled'), '--kind', 'sched', '--json', '--top', '0');
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    const text = readFileSync(expected('demo-go1.26-pooled.sched.delay.txt'), 'utf8');
    expect([o.kind, o.sampleType, o.description.kind]).toEqual(['profile', 'delay', 'trace-sched']);
    expect(o.totals.delay).toBe(reportTotal(text));
    const ref = parseTopAll(text);
    const ours = new Map<string, [number, number]>(
      o.top
        .filter((x: { flat: number; cum: number }) => x.flat || x.cum)
        .map((x: { name: string; flat: number; cum: number }) => [x.name, [x.flat, x.cum]]),
    );
    expect(ours).toEqual(ref);
    expect(o.durationNanos).toBeGreaterThan(0.6e9);
  });

  it('--kind applies filters as any profile (--focus)', () => {
    const r = runCliSync('inspect', trace('demo-go1.26-pooled'), '--kind', 'sync', '--focus', 'selectgo', '--json');
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).filters).toEqual({ focus: 'selectgo' });
  });
});

describe('diff --kind', () => {
  it('diffs two traces’ derived profiles: base and target totals are go tool trace’s', () => {
    const r = runCliSync(
      'diff',
      trace('demo-go1.22-baseline'),
      trace('demo-go1.22-pooled'),
      '--kind',
      'sync',
      '--json',
    );
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout);
    const total = (n: string) => reportTotal(readFileSync(expected(`${n}.sync.delay.txt`), 'utf8'));
    expect([o.sampleType, o.baseTotal, o.targetTotal]).toEqual([
      'delay',
      total('demo-go1.22-baseline'),
      total('demo-go1.22-pooled'),
    ]);
    expect(o.top.length).toBeGreaterThan(0);
  });

  it('refuses two traces without --kind, and --kind on a profile or an unknown kind', () => {
    const none = runCliSync('diff', trace('demo-go1.22-baseline'), trace('demo-go1.22-pooled'));
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('diff of execution traces needs --kind net|sync|syscall|sched');
    const onProfile = runCliSync(
      'inspect',
      `${fixturesDir}reference/pprof/go_httpserver_before_cpu.pb.gz`,
      '--kind',
      'sched',
    );
    expect(onProfile.status).toBe(2);
    expect(onProfile.stderr).toMatch(/--kind picks a profile of an execution trace; .* is a profile \(pprof\)/);
    const bad = runCliSync('inspect', trace('demo-go1.22-baseline'), '--kind', 'cpu');
    expect(bad.stderr).toContain('--kind must be one of net, sync, syscall, sched');
  });

  it('a trace of the older format is refused, naming its version', () => {
    const r = runCliSync('inspect', trace('xsync-semaphore-go1.21'));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/xsync-semaphore-go1\.21\.trace: a Go execution trace in the format of Go 1\.21/);
  });
});

describe('stagediff inspect/diff --granularity lines|files --json', () => {
  const answer = (rel: string) =>
    parseTopRows(gunzipSync(readFileSync(samplePath(`pprof/expected/granularity/${rel}`))).toString('utf8'));
  const bare = (n: string) => n.replace(/( \(function at line \d+\))?( \[[^\]]*\])?$/, '');
  const byName = (rows: [string, number, number][]) =>
    [...rows].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || a[2] - b[2]));

  it.each([
    ['go_httpserver_after_cpu', 'cpu', 'lines'],
    ['go_httpserver_before_heap', 'alloc_space', 'files'],
    ['go_bench_encoding_json_cpu', 'samples', 'files'],
  ])('inspect %s --sample-type %s --granularity %s: every row of go tool pprof -top', (name, type, g) => {
    const r = runCliSync(
      'inspect',
      samplePath(`pprof/${name}.pb.gz`),
      '--json',
      '--top',
      '0',
      '--sample-type',
      type,
      '--granularity',
      g,
    );
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout) as { granularity: string; top: { name: string; flat: number; cum: number }[] };
    expect(o.granularity).toBe(g);
    const ours = o.top.map((x): [string, number, number] => [bare(x.name), x.flat, x.cum]);
    const ref = answer(`${name}.${type}.${g}.txt.gz`);
    expect(ref.length).toBeGreaterThan(10);
    expect(byName(ours)).toEqual(byName(ref));
  });

  it('diff --granularity lines equals go tool pprof -diff_base -lines, every row', () => {
    const r = runCliSync(
      'diff',
      samplePath('pprof/go_httpserver_before_cpu.pb.gz'),
      samplePath('pprof/go_httpserver_after_cpu.pb.gz'),
      '--json',
      '--top',
      '0',
      '--granularity',
      'lines',
    );
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout) as {
      granularity: string;
      top: { name: string; deltaFlat: number; deltaCum: number }[];
    };
    expect(o.granularity).toBe('lines');
    const ours = o.top.map((x): [string, number, number] => [x.name, x.deltaFlat, x.deltaCum]);
    expect(ours.some(([n]) => n === 'main.appendJSONString example.com/httpserver/after.go:45')).toBe(true);
    expect(byName(ours)).toEqual(byName(answer('diff/go_httpserver_cpu.cpu.lines.diff_base.txt.gz')));
  });

  it('refuses an unknown granularity, and granularity on a benchmark, naming the flag', () => {
    const r = runCliSync('inspect', samplePath('pprof/go_httpserver_after_cpu.pb.gz'), '--granularity', 'line');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--granularity must be one of functions, lines, files, got "line"/);
  });
});

describe('stagediff inspect --tagfocus/--tagignore', () => {
  it('equals go tool pprof -tagfocus -tagignore on a labelled profile, every row', () => {
    const r = runCliSync(
      'inspect',
      `${repoRoot}fixtures/profiles/labels/cpu.pb.gz`,
      '--json',
      '--top',
      '0',
      '--sample-type',
      'cpu',
      '--tagfocus',
      'endpoint=orders',
      '--tagignore',
      'tenant=glob',
    );
    expect(r.status, r.stderr).toBe(0);
    const o = JSON.parse(r.stdout) as {
      filters: Record<string, string>;
      top: { name: string; flat: number; cum: number }[];
    };
    expect(o.filters).toEqual({ tagfocus: 'endpoint=orders', tagignore: 'tenant=glob' });
    const ref = parseTopRows(readFileSync(`${repoRoot}fixtures/profiles/labels/answers/focus-and-ignore.txt`, 'utf8'));
    const sort = (rows: [string, number, number][]) => [...rows].sort((a, b) => (a[0] < b[0] ? -1 : 1));
    expect(sort(o.top.map((x) => [x.name, x.flat, x.cum]))).toEqual(sort(ref));
  });

  it('refuses a tag regexp Go refuses, naming the flag', () => {
    const r = runCliSync('inspect', `${repoRoot}fixtures/profiles/labels/cpu.pb.gz`, '--tagfocus', 'endpoint=(?=x)');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--tagfocus: "\(\?=x\)" is not a valid Go regular expression/);
  });
});
