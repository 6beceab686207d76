/**
 * Which module version a profile's file names, on the file names of real profiles (fixtures/goproxy:
 * one build as is, one with -trimpath; fixtures/line-view for the standard library), and the module
 * proxy protocol's case encoding.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePprof } from '../../src/ingest/pprof/index.ts';
import {
  escapeModulePath,
  foreignFile,
  hasToolchainModule,
  isModulePath,
  isModuleVersion,
  moduleZipPath,
  toolchainDirective,
  toolchainVersion,
  unescapeModulePath,
} from '../../src/sources/module-path.ts';
import { fixturesDir } from '../helpers/paths.ts';

/** Each function of a profile with its file, as the profile names them. */
function frames(profile: string): { fn: string; file: string }[] {
  const seen = new Map<string, { fn: string; file: string }>();
  for (const f of parsePprof(readFileSync(profile)).frames)
    seen.set(`${f.name} ${f.file}`, { fn: f.name, file: f.file });
  return [...seen.values()];
}

describe('the module proxy protocol', () => {
  it('writes upper-case letters as ! and the lower case, and reads them back', () => {
    expect(escapeModulePath('github.com/BurntSushi/toml')).toBe('github.com/!burnt!sushi/toml');
    expect(escapeModulePath('github.com/Azure/azure-sdk-for-go')).toBe('github.com/!azure/azure-sdk-for-go');
    expect(unescapeModulePath('github.com/!burnt!sushi/toml')).toBe('github.com/BurntSushi/toml');
    expect(unescapeModulePath('github.com/Burnt/toml')).toBeNull();
    expect(unescapeModulePath('github.com/!/toml')).toBeNull();
    expect(unescapeModulePath('github.com/!1x/toml')).toBeNull();
    expect(moduleZipPath('github.com/BurntSushi/toml', 'v1.4.0')).toBe('/github.com/!burnt!sushi/toml/@v/v1.4.0.zip');
    expect(moduleZipPath('golang.org/toolchain', toolchainVersion('go1.26.8', 'linux-amd64'))).toBe(
      '/golang.org/toolchain/@v/v0.0.1-go1.26.8.linux-amd64.zip',
    );
  });

  it('takes module paths and versions of safe characters only', () => {
    for (const ok of ['github.com/BurntSushi/toml', 'golang.org/x/net', 'gopkg.in/yaml.v3', 'example.com/a~b/c_d'])
      expect(isModulePath(ok), ok).toBe(true);
    for (const bad of [
      '',
      'toml',
      '../x.com/y',
      'x.com/../y',
      'x.com//y',
      'x.com/y/',
      'x.com/y z',
      'x.com/.y',
      'x.com/!y',
    ])
      expect(isModulePath(bad), bad).toBe(false);
    for (const ok of [
      'v1.4.0',
      'v0.0.0-20240101120000-abcdef123456',
      'v2.0.0+incompatible',
      'v0.0.1-go1.26.8.linux-amd64',
    ])
      expect(isModuleVersion(ok), ok).toBe(true);
    for (const bad of ['', '1.4.0', 'v1/../x', 'v1 0', 'latest']) expect(isModuleVersion(bad), bad).toBe(false);
  });

  it('knows which Go releases have a toolchain module, and reads a go.mod toolchain line', () => {
    expect(hasToolchainModule('go1.26.8')).toBe(true);
    expect(hasToolchainModule('go1.21.0')).toBe(true);
    expect(hasToolchainModule('go1.23rc1')).toBe(true);
    expect(hasToolchainModule('go1.20.14')).toBe(false);
    expect(hasToolchainModule('go1.22')).toBe(false);
    expect(toolchainDirective('module x.com/y\n\ngo 1.22.0\n\ntoolchain go1.26.8 // pinned\n')).toBe('go1.26.8');
    expect(toolchainDirective('module x.com/y\n\ngo 1.22\n')).toBeNull();
  });
});

describe("a profile's file names", () => {
  it('every dependency frame of real profiles, in the module cache (escaped) and under -trimpath (as it is)', () => {
    const cache = frames(join(fixturesDir, 'goproxy', 'cpu.pb.gz')).filter((f) => f.fn.startsWith('github.com/'));
    const trim = frames(join(fixturesDir, 'goproxy', 'cpu-trimpath.pb.gz')).filter((f) =>
      f.fn.startsWith('github.com/'),
    );
    expect(cache.length).toBeGreaterThan(10);
    expect(trim.length).toBeGreaterThan(10);
    for (const { fn, file } of cache) {
      const m = /\/pkg\/mod\/github\.com\/!burnt!sushi\/toml@v1\.4\.0\/([a-z_]+\.go)$/.exec(file);
      expect(m, file).not.toBeNull();
      expect(foreignFile(file, fn), `${fn} ${file}`).toEqual({
        kind: 'module',
        file: { module: 'github.com/BurntSushi/toml', version: 'v1.4.0', path: m![1] },
      });
    }
    for (const { fn, file } of trim) {
      expect(file.startsWith('github.com/BurntSushi/toml@v1.4.0/'), file).toBe(true);
      expect(foreignFile(file, fn), `${fn} ${file}`).toEqual({
        kind: 'module',
        file: {
          module: 'github.com/BurntSushi/toml',
          version: 'v1.4.0',
          path: file.slice('github.com/BurntSushi/toml@v1.4.0/'.length),
        },
      });
    }
  });

  it('every standard-library frame of real profiles, under GOROOT and under -trimpath', () => {
    const std = (f: { fn: string }) =>
      !f.fn.startsWith('main.') && !f.fn.startsWith('github.com/') && !f.fn.startsWith('example.com/');
    for (const profile of [join('goproxy', 'cpu.pb.gz'), join('line-view', 'v1', 'cpu.pb.gz')]) {
      const abs = frames(join(fixturesDir, profile)).filter((f) => std(f) && f.file.startsWith('/'));
      expect(abs.length, profile).toBeGreaterThan(10);
      for (const { fn, file } of abs) {
        expect(file.startsWith('/usr/local/go/src/'), file).toBe(true);
        expect(foreignFile(file, fn), `${fn} ${file}`).toEqual({
          kind: 'std',
          path: file.slice('/usr/local/go/src/'.length),
        });
      }
    }
    for (const profile of [join('goproxy', 'cpu-trimpath.pb.gz'), join('line-view', 'v2', 'cpu.pb.gz')]) {
      const trim = frames(join(fixturesDir, profile)).filter((f) => std(f) && f.file !== '');
      expect(trim.length, profile).toBeGreaterThan(10);
      for (const { fn, file } of trim)
        expect(foreignFile(file, fn), `${fn} ${file}`).toEqual({ kind: 'std', path: file });
    }
    expect(foreignFile('/usr/local/go/src/fmt/print.go', 'fmt.(*pp).doPrintf')).toEqual({
      kind: 'std',
      path: 'fmt/print.go',
    });
    expect(foreignFile('fmt/print.go', 'fmt.Sprintf')).toEqual({ kind: 'std', path: 'fmt/print.go' });
    // A function of one package linked into another's file (sync's semaphore lives in runtime/sema.go).
    expect(foreignFile('/usr/local/go/src/runtime/sema.go', 'sync.runtime_Semacquire')).toEqual({
      kind: 'std',
      path: 'runtime/sema.go',
    });
    expect(foreignFile('$GOROOT/src/net/http/server.go', 'net/http.(*conn).serve')).toEqual({
      kind: 'std',
      path: 'net/http/server.go',
    });
  });

  it("is nothing for the stage's own code, vendored copies and paths that try to climb out", () => {
    expect(foreignFile('/tmp/stagediff-linedemo-v1/main.go', 'main.appendJSONString')).toBeNull();
    expect(foreignFile('example.com/linedemo/main.go', 'main.encode')).toBeNull();
    expect(foreignFile('/src/shop/internal/codec/json.go', 'example.com/shop/internal/codec.Append')).toBeNull();
    expect(foreignFile('/src/shop/vendor/github.com/x/y/z.go', 'github.com/x/y.Z')).toBeNull();
    expect(foreignFile('/root/go/pkg/mod/github.com/x/y@v1.0.0/../../../etc/z.go', 'github.com/x/y.Z')).toBeNull();
    expect(foreignFile('/usr/local/go/src/../../etc/passwd.go', 'fmt.X')).toBeNull();
    expect(foreignFile('/root/go/pkg/mod/github.com/x/y@latest/z.go', 'github.com/x/y.Z')).toBeNull();
  });
});
