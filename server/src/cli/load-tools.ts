import { spawnSync } from 'node:child_process';
import { basename } from 'node:path';
import { loadTestImporters } from '../ingest/importers.ts';
import { type LoadTool, toolOf } from '../ingest/loadtest/types.ts';

/**
 * What `stagediff capture` knows about the load tools it can run: which tool a command line runs,
 * where that tool writes its result, how long it will run, and how to ask it for its version.
 */

export type { LoadTool };

/**
 * The tools `capture` recognises in a load command: those whose output an importer reads, but for
 * `prometheus`, the requests counter an import reads (no command writes it).
 */
export const KNOWN_TOOLS: readonly LoadTool[] = [
  ...new Set(loadTestImporters.flatMap((i) => i.formats.map(toolOf))),
].filter((t) => t !== 'prometheus');

const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh']);

/** The words of the command that matter: argv itself, or the script of `sh -c '…'`. */
function words(argv: string[]): string[] {
  const first = basename(argv[0] ?? '');
  if (SHELLS.has(first)) {
    const i = argv.indexOf('-c');
    if (i >= 0 && argv[i + 1]) return argv[i + 1]!.split(/[\s|;&()]+/).filter(Boolean);
  }
  return argv;
}

/** The tool a command line runs (the first known tool name among its words), or null. */
export function detectTool(argv: string[]): LoadTool | null {
  for (const w of words(argv)) {
    const b = basename(w);
    const tool = KNOWN_TOOLS.find((t) => t === b);
    if (tool) return tool;
  }
  return null;
}

/** Value of an option given as `-d 30s`, `-d30s`, `-d=30s` or `--duration 30s`. */
function option(ws: string[], names: string[]): string | null {
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    for (const n of names) {
      if (w === n && ws[i + 1] !== undefined) return ws[i + 1]!;
      if (w.startsWith(`${n}=`)) return w.slice(n.length + 1);
      // Glued short options (wrk -d30s, -c32) only for one-dash single-letter names.
      if (/^-[A-Za-z]$/.test(n) && w.startsWith(n) && w.length > n.length && !w.startsWith(`${n}-`))
        return w.slice(n.length);
    }
  }
  return null;
}

/** "30s", "1m30s", "500ms", "2m", "1h", or a bare number (in `bareUnit` seconds). */
export function parseDurationSeconds(text: string, bareUnit = 1): number | null {
  const t = text.trim().replace(/^['"]|['"]$/g, '');
  if (/^\d+(\.\d+)?$/.test(t)) return Number(t) * bareUnit;
  const re = /(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/gy;
  let total = 0;
  let matched = 0;
  for (let m = re.exec(t); m; m = re.exec(t)) {
    const v = Number(m[1]);
    const unit = m[2]!;
    total += unit === 'h' ? v * 3600 : unit === 'm' ? v * 60 : unit === 's' ? v : unit === 'ms' ? v / 1e3 : 0;
    matched = re.lastIndex;
  }
  return matched === t.length && matched > 0 ? total : null;
}

/** How long the load command will run, when its own options say so; null when they do not. */
export function loadDurationSeconds(tool: LoadTool | null, argv: string[]): number | null {
  const ws = words(argv);
  const v = (names: string[], bare = 1) => {
    const o = option(ws, names);
    return o === null ? null : parseDurationSeconds(o, bare);
  };
  switch (tool) {
    case 'wrk':
    case 'wrk2':
      return v(['-d', '--duration']) ?? 10; // wrk's default is 10 s
    case 'hey':
      return v(['-z']);
    case 'vegeta':
      return v(['-duration', '--duration']);
    case 'k6':
      return v(['-d', '--duration']);
    case 'autocannon':
      return v(['-d', '--duration']) ?? 10;
    case 'bombardier':
      return v(['-d', '--duration']);
    case 'ghz':
      return v(['-z', '--duration']);
    case 'locust':
      return v(['-t', '--run-time']);
    case 'oha':
      return v(['-z', '--duration']);
    default:
      return null;
  }
}

/** Whether the command is a `vegeta attack` whose binary results come out on stdout. */
export function isVegetaAttack(argv: string[]): boolean {
  const ws = words(argv);
  const i = ws.findIndex((w) => basename(w) === 'vegeta');
  return i >= 0 && ws[i + 1] === 'attack' && !ws.slice(i + 2).some((w) => basename(w) === 'vegeta');
}

/**
 * The file name the load's own output is kept under, and which stream carries it (autocannon
 * prints its tables on stderr unless asked for JSON).
 */
export function loadOutputName(tool: LoadTool | null, argv: string[]): { name: string; stream: 'stdout' | 'stderr' } {
  const ws = words(argv);
  const has = (...xs: string[]) => ws.some((w) => xs.includes(w));
  switch (tool) {
    case 'hey':
      return { name: option(ws, ['-o']) === 'csv' ? 'hey.csv' : 'hey.txt', stream: 'stdout' };
    case 'vegeta':
      if (isVegetaAttack(argv)) return { name: 'vegeta.bin', stream: 'stdout' };
      return { name: has('-to=json', 'json') ? 'vegeta.jsonl' : 'vegeta.txt', stream: 'stdout' };
    case 'autocannon':
      return has('-j', '--json')
        ? { name: 'autocannon.json', stream: 'stdout' }
        : { name: 'autocannon.txt', stream: 'stderr' };
    case 'bombardier':
      return {
        name: option(ws, ['-o', '--format']) === 'json' ? 'bombardier.json' : 'bombardier.txt',
        stream: 'stdout',
      };
    case 'ghz':
      return { name: option(ws, ['-O', '--format']) === 'json' ? 'ghz.json' : 'ghz.txt', stream: 'stdout' };
    case 'oha':
      // `--output-format json` in current releases, `-j`/`--json` in older ones.
      return {
        name: option(ws, ['--output-format']) === 'json' || has('-j', '--json') ? 'oha.json' : 'oha.txt',
        stream: 'stdout',
      };
    case null:
      return { name: 'load.txt', stream: 'stdout' };
    default:
      return { name: `${tool}.txt`, stream: 'stdout' };
  }
}

/** Files the tool writes itself that hold its per-request log (k6 --out json=F / csv=F). */
export function extraOutputFiles(tool: LoadTool | null, argv: string[]): string[] {
  if (tool !== 'k6') return [];
  const ws = words(argv);
  const out: string[] = [];
  for (let i = 0; i < ws.length; i++) {
    const w = ws[i]!;
    const spec = w === '--out' || w === '-o' ? ws[i + 1] : w.startsWith('--out=') ? w.slice(6) : null;
    const m = spec ? /^(json|csv)=(.+)$/.exec(spec) : null;
    if (m) out.push(m[2]!);
  }
  return out;
}

/** A hint printed when the tool could have written a per-request log but was not asked to. */
export function perRequestHint(tool: LoadTool | null, argv: string[]): string | null {
  if (tool === 'hey' && loadOutputName(tool, argv).name !== 'hey.csv')
    return 'hey can write a per-request log: add -o csv for a timeline';
  if (tool === 'k6' && extraOutputFiles(tool, argv).length === 0)
    return 'k6 can write a per-request log: add --out json=k6.json for a timeline';
  return null;
}

const VERSION_ARGS: Record<LoadTool, string[][]> = {
  wrk: [['-v']],
  wrk2: [['-v']],
  hey: [],
  vegeta: [['-version']],
  k6: [['version']],
  ab: [['-V']],
  autocannon: [['--version']],
  bombardier: [['--version']],
  ghz: [['--version']],
  locust: [['--version']],
  jmeter: [['--version']],
  oha: [['--version']],
  // Not a command `capture` runs: the requests an import asked a Prometheus-compatible server for.
  prometheus: [],
};

function which(cmd: string): string | null {
  const r = spawnSync('sh', ['-c', 'command -v "$1"', 'sh', cmd], { encoding: 'utf8' });
  const p = r.stdout.trim();
  return r.status === 0 && p ? p : null;
}

/**
 * The tool's version as it reports it (first meaningful line), else the module version Go
 * recorded in the binary (`go version -m`), else null. Never throws; bounded to a few seconds.
 */
export function toolVersion(tool: LoadTool | null, argv: string[]): string | null {
  if (!tool) return null;
  const exe = SHELLS.has(basename(argv[0] ?? '')) ? tool : argv[0]!;
  for (const args of VERSION_ARGS[tool]) {
    const r = spawnSync(exe, args, { encoding: 'utf8', timeout: 5000 });
    const text = `${r.stdout ?? ''}\n${r.stderr ?? ''}`;
    const line = text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => /\d+\.\d+|version/i.test(l) && !/^usage/i.test(l));
    if (line) {
      const v = /^Version:\s*(\S+)/i.exec(line);
      if (v?.[1]) return `${tool} ${v[1]}`;
      const short = line.replace(/\s+Copyright.*$/i, '');
      if (!/^Version:\s*$/i.test(line)) return short.length > 120 ? short.slice(0, 120) : short;
    }
  }
  const path = which(exe);
  const go = which('go') ?? '/usr/local/go/bin/go';
  if (path) {
    const r = spawnSync(go, ['version', '-m', path], { encoding: 'utf8', timeout: 5000 });
    const mod = /^\s*mod\s+(\S+)\s+(\S+)/m.exec(r.stdout ?? '');
    if (r.status === 0 && mod) return `${tool} ${mod[2]} (${mod[1]})`;
  }
  return null;
}
