/**
 * The h1 hash of a module zip equals the one the go command wrote to go.sum for it (fixtures/goproxy:
 * app/go.sum by `go mod tidy`, the zip by `go mod download`); go.mod's requirements and go.sum's hashes
 * are read as the go command writes them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DirHashError, hash1, zipHash1 } from '../../src/sources/dirhash.ts';
import { goSumHashes, requiredModules } from '../../src/sources/go-mod.ts';
import { fixturesDir } from '../helpers/paths.ts';

const fx = join(fixturesDir, 'goproxy');
const ZIP = join(fx, 'proxy/github.com/!burnt!sushi/toml/@v/v1.4.0.zip');

describe('the h1 hash of a module zip', () => {
  it("is go.sum's for github.com/BurntSushi/toml v1.4.0", async () => {
    const sums = goSumHashes(readFileSync(join(fx, 'app', 'go.sum'), 'utf8'));
    expect(sums.get('github.com/BurntSushi/toml@v1.4.0')).toBe('h1:kuoIxZQy2WRRk1pttg9asf+WVv6tWQuBNVmK8+nqPr0=');
    expect(sums.size).toBe(1);
    expect(await zipHash1(ZIP, 64 * 1024 * 1024)).toBe(sums.get('github.com/BurntSushi/toml@v1.4.0'));
  });

  it('is bounded: a zip inflating past the bound is not hashed', async () => {
    await expect(zipHash1(ZIP, 10_000)).rejects.toThrow(DirHashError);
  });

  it('sorts by name and refuses a name with a newline', () => {
    const a = { name: 'm@v1/a.go', data: Buffer.from('a') };
    const b = { name: 'm@v1/b.go', data: Buffer.from('b') };
    expect(hash1([a, b])).toBe(hash1([b, a]));
    expect(hash1([a, b])).not.toBe(hash1([a, { ...b, data: Buffer.from('c') }]));
    expect(() => hash1([{ name: 'm@v1/x\ny', data: Buffer.alloc(0) }])).toThrow(DirHashError);
  });
});

describe("a go.mod's requirements", () => {
  it('reads require lines and blocks, and replacements to a module version', () => {
    const r = requiredModules(
      [
        'module example.com/app',
        '',
        'go 1.22',
        '',
        'require github.com/a/b v1.2.3 // indirect',
        'require (',
        '\tgithub.com/c/d v0.1.0',
        '\t"github.com/e/f" v2.0.0+incompatible',
        ')',
        'replace github.com/c/d => github.com/c/d-fork v0.1.1',
        'replace github.com/x/y => ../y',
      ].join('\n'),
    );
    expect([...r].map(([m, v]) => [m, [...v]])).toEqual([
      ['github.com/a/b', ['v1.2.3']],
      ['github.com/c/d', ['v0.1.0']],
      ['github.com/e/f', ['v2.0.0+incompatible']],
      ['github.com/c/d-fork', ['v0.1.1']],
    ]);
  });
});
