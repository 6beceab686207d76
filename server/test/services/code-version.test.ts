import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CODE_VERSION, derivingCode, sourceVersion } from '../../src/services/code-version.ts';
import { MODEL_VERSION } from '../../src/services/models.ts';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

describe('cached results carry a version derived from the code that made them', () => {
  it('the cache key version is the hash of the parsers, model and analysis', () => {
    expect(MODEL_VERSION).toBe(CODE_VERSION);
    expect(derivingCode).toContain(join(src, 'ingest'));
    expect(derivingCode).toContain(join(src, 'analysis'));
    expect(CODE_VERSION).toBe(sourceVersion(derivingCode, 'unused'));
  });

  it('changes when one byte of a parser changes, and only then', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-codever-'));
    cpSync(join(src, 'ingest'), join(dir, 'ingest'), { recursive: true });
    const roots = [join(dir, 'ingest')];
    const before = sourceVersion(roots, 'unused');
    expect(sourceVersion(roots, 'unused')).toBe(before);
    const wrk = join(dir, 'ingest', 'loadtest', 'wrk.ts');
    writeFileSync(wrk, `${'// a fix\n'}`, { flag: 'a' });
    expect(sourceVersion(roots, 'unused')).not.toBe(before);
  });

  it('hashes the bundle itself when the source folders are absent', () => {
    const dir = mkdtempSync(join(tmpdir(), 'stagediff-codever-'));
    const bundle = join(dir, 'bundle.js');
    writeFileSync(bundle, 'export const a = 1;\n');
    const v1 = sourceVersion([join(dir, 'missing')], bundle);
    writeFileSync(bundle, 'export const a = 2;\n');
    expect(sourceVersion([join(dir, 'missing')], bundle)).not.toBe(v1);
  });
});
