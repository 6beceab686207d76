/**
 * What `stagediff capture` reads from a load command line: the tool, how long it runs (to place the
 * profile window inside it), where its result goes, and the per-request log it can write.
 */
import { expect, it } from 'vitest';
import {
  detectTool,
  extraOutputFiles,
  isVegetaAttack,
  loadDurationSeconds,
  loadOutputName,
  parseDurationSeconds,
  perRequestHint,
} from '../../src/cli/load-tools.ts';

it('reads Go-style and bare durations', () => {
  expect(parseDurationSeconds('30s')).toBe(30);
  expect(parseDurationSeconds('1m30s')).toBe(90);
  expect(parseDurationSeconds('500ms')).toBe(0.5);
  expect(parseDurationSeconds('2m')).toBe(120);
  expect(parseDurationSeconds('10')).toBe(10);
  expect(parseDurationSeconds('30x')).toBeNull();
  expect(parseDurationSeconds('s')).toBeNull();
  expect(parseDurationSeconds('')).toBeNull();
});

it('finds the tool in argv or in an sh -c script', () => {
  expect(detectTool(['wrk', '-t2', 'http://x/'])).toBe('wrk');
  expect(detectTool(['/usr/local/bin/hey', '-z', '10s', 'http://x/'])).toBe('hey');
  expect(detectTool(['sh', '-c', "echo 'GET http://x/' | vegeta attack -duration=5s"])).toBe('vegeta');
  expect(detectTool(['oha', '--no-tui', '-z', '10s', 'http://x/'])).toBe('oha');
  expect(detectTool(['./my-load', 'http://x/'])).toBeNull();
});

it("knows each tool's duration option, with wrk's and autocannon's 10 s default", () => {
  expect(loadDurationSeconds('wrk', ['wrk', '-t2', '-c32', '-d30s', 'http://x/'])).toBe(30);
  expect(loadDurationSeconds('wrk', ['wrk', '--duration', '1m', 'http://x/'])).toBe(60);
  expect(loadDurationSeconds('wrk', ['wrk', 'http://x/'])).toBe(10);
  expect(loadDurationSeconds('hey', ['hey', '-z', '20s', 'http://x/'])).toBe(20);
  expect(loadDurationSeconds('hey', ['hey', '-n', '1000', 'http://x/'])).toBeNull();
  expect(loadDurationSeconds('vegeta', ['sh', '-c', 'vegeta attack -rate=500/s -duration=8s < t'])).toBe(8);
  expect(loadDurationSeconds('k6', ['k6', 'run', '--duration', '45s', 's.js'])).toBe(45);
  expect(loadDurationSeconds('autocannon', ['autocannon', '-d', '15', 'http://x/'])).toBe(15);
  expect(loadDurationSeconds('locust', ['locust', '--headless', '-t', '2m'])).toBe(120);
  expect(loadDurationSeconds('oha', ['oha', '--no-tui', '-z', '30s', 'http://x/'])).toBe(30);
  expect(loadDurationSeconds('oha', ['oha', '-n', '200', 'http://x/'])).toBeNull();
  expect(loadDurationSeconds(null, ['./my-load'])).toBeNull();
});

it('names the output after the tool, and where it is printed', () => {
  expect(loadOutputName('wrk', ['wrk', 'http://x/'])).toEqual({ name: 'wrk.txt', stream: 'stdout' });
  expect(loadOutputName('hey', ['hey', '-o', 'csv', 'http://x/'])).toEqual({ name: 'hey.csv', stream: 'stdout' });
  expect(loadOutputName('hey', ['hey', 'http://x/'])).toEqual({ name: 'hey.txt', stream: 'stdout' });
  expect(loadOutputName('autocannon', ['autocannon', 'http://x/'])).toEqual({
    name: 'autocannon.txt',
    stream: 'stderr',
  });
  expect(loadOutputName('autocannon', ['autocannon', '--json', 'http://x/']).name).toBe('autocannon.json');
  expect(loadOutputName('bombardier', ['bombardier', '-o', 'json', 'http://x/']).name).toBe('bombardier.json');
  expect(loadOutputName('oha', ['oha', '--no-tui', 'http://x/'])).toEqual({ name: 'oha.txt', stream: 'stdout' });
  expect(loadOutputName('oha', ['oha', '--output-format', 'json', 'http://x/']).name).toBe('oha.json');
  expect(loadOutputName('oha', ['oha', '-j', 'http://x/']).name).toBe('oha.json');
  expect(loadOutputName(null, ['./my-load']).name).toBe('load.txt');
});

it('vegeta attack writes binary results (encoded afterwards); a pipeline through encode does not', () => {
  expect(isVegetaAttack(['vegeta', 'attack', '-duration=5s'])).toBe(true);
  expect(loadOutputName('vegeta', ['vegeta', 'attack', '-duration=5s']).name).toBe('vegeta.bin');
  const piped = ['sh', '-c', 'vegeta attack -duration=5s < t | vegeta encode -to=json'];
  expect(isVegetaAttack(piped)).toBe(false);
  expect(loadOutputName('vegeta', piped).name).toBe('vegeta.jsonl');
});

it("keeps k6's own per-request file and hints where a per-request log is missing", () => {
  expect(extraOutputFiles('k6', ['k6', 'run', '--out', 'json=k6.json', 's.js'])).toEqual(['k6.json']);
  expect(extraOutputFiles('k6', ['k6', 'run', '--out=csv=out.csv', 's.js'])).toEqual(['out.csv']);
  expect(perRequestHint('k6', ['k6', 'run', 's.js'])).toMatch(/--out json=/);
  expect(perRequestHint('hey', ['hey', '-z', '5s', 'http://x/'])).toMatch(/-o csv/);
  expect(perRequestHint('hey', ['hey', '-o', 'csv', 'http://x/'])).toBeNull();
  expect(perRequestHint('wrk', ['wrk', 'http://x/'])).toBeNull();
});

it('recognises the tool of every load-test importer, and only those', async () => {
  const { loadTestImporters } = await import('../../src/ingest/importers.ts');
  const { toolOf } = await import('../../src/ingest/loadtest/types.ts');
  const tools = new Set(loadTestImporters.flatMap((i) => i.formats.map(toolOf)));
  expect([...tools].sort()).toEqual([
    'ab',
    'autocannon',
    'bombardier',
    'ghz',
    'hey',
    'jmeter',
    'k6',
    'locust',
    'oha',
    'prometheus',
    'vegeta',
    'wrk',
    'wrk2',
  ]);
  // an import's requests counter is read, never run as a load command
  tools.delete('prometheus');
  expect(detectTool(['prometheus', '--config.file=p.yml'])).toBeNull();
  for (const tool of tools) expect(detectTool([tool, 'http://x/'])).toBe(tool);
  expect(detectTool(['curl', 'http://x/'])).toBeNull();
});
