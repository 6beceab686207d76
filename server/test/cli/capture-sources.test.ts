/**
 * capture --source on real CPU profiles of fixtures/line-view: v1 built in place (absolute paths in
 * its profile), v2 built with -trimpath (module paths). The module's files the profiles name are kept
 * byte for byte, with go.mod, the commit and the dirty flag, in an archive the server reads back.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { collectSources, findModuleRoot, profileFrames, sourcesArchive } from '../../src/cli/capture-sources.ts';
import { SOURCE_LIMITS } from '../../src/config.ts';
import { readSourceArchive } from '../../src/sources/archive.ts';
import { SourceIndex } from '../../src/sources/match.ts';
import { fixturesDir } from '../helpers/paths.ts';

const lineView = join(fixturesDir, 'line-view');
const tmp = mkdtempSync(join(tmpdir(), 'stagediff-capture-sources-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('capture --source on real profiles', () => {
  for (const [v, form, prefix] of [
    ['v1', 'absolute build paths', '/tmp/stagediff-linedemo-v1/'],
    ['v2', '-trimpath module paths', 'example.com/linedemo/'],
  ] as const) {
    it(`keeps the module files the profile names (${v}: ${form})`, async () => {
      const frames = profileFrames([join(lineView, v, 'cpu.pb.gz')]);
      const own = frames.filter((f) => f.name.startsWith('main.'));
      expect(own.length).toBeGreaterThan(2);
      for (const f of own) expect(f.file).toBe(`${prefix}main.go`);
      const root = findModuleRoot(join(lineView, v))!;
      expect(root).toBe(join(lineView, v));
      const c = collectSources(root, frames, SOURCE_LIMITS);
      expect(c.modulePath).toBe('example.com/linedemo');
      expect([...c.files.keys()].sort()).toEqual(['go.mod', 'main.go']);
      expect(c.files.get('main.go')!.equals(readFileSync(join(root, 'main.go')))).toBe(true);
      expect(c.revision).toBe(execFileSync('git', ['-C', root, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim());
      expect(typeof c.dirty).toBe('boolean');

      const file = join(tmp, `${v}.tar.gz`);
      writeFileSync(file, sourcesArchive(c));
      const back = await readSourceArchive(`${v}.tar.gz`, file, SOURCE_LIMITS);
      expect(back).toMatchObject({ modulePath: 'example.com/linedemo', revision: c.revision, dirty: c.dirty });
      expect(back.files.get('main.go')!.equals(c.files.get('main.go')!)).toBe(true);
    });
  }

  it('matches the longest module-relative suffix, and never a standard-library file by its base name', () => {
    const idx = new SourceIndex(['server.go', 'internal/http/server.go', 'main.go']);
    expect(idx.match('/home/ci/shop/internal/http/server.go')).toBe('internal/http/server.go');
    expect(idx.match('example.com/shop/server.go')).toBe('server.go');
    expect(idx.match('/home/ci/shop/xserver.go')).toBeNull();
    // net/http's frames are not the module's, whatever their file is called.
    const frames = profileFrames([join(lineView, 'v1', 'cpu.pb.gz')]);
    const stdlib = frames.filter((f) => f.file.endsWith('/main.go') && !f.name.startsWith('main.'));
    const c = collectSources(
      join(lineView, 'v1'),
      [...stdlib, { name: 'fmt.Sprintf', file: '/usr/local/go/src/main.go' }],
      SOURCE_LIMITS,
    );
    expect([...c.files.keys()]).toEqual(['go.mod']);
  });
});
