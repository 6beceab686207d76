/**
 * The strongest suites need real tools: a Go toolchain (live `go tool pprof`), a PostgreSQL server
 * (the store contract on PostgreSQL, two replicas), an S3 server (versitygw: the store contract with
 * blobs in a bucket) and Chromium (the UI end to end). On a developer machine without them those
 * suites skip with a loud warning; in CI (.ci/run installs them all) a missing one fails here, so a
 * green CI never hides a skipped suite.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findGo, fixturesDir, inCi } from './helpers/paths.ts';
import { findVersitygw } from './store/s3-server.ts';

describe.runIf(inCi)('CI has every tool the strongest suites need', () => {
  it('a Go toolchain', () => {
    expect(findGo(), 'no go binary: the live go tool pprof comparison would skip').not.toBeNull();
  });
  it('a PostgreSQL for the store contract and the replica tests', () => {
    expect(process.env.STAGEDIFF_TEST_DATABASE_URL, 'STAGEDIFF_TEST_DATABASE_URL is not set').toBeTruthy();
  });
  it('an S3 server (versitygw) for the store contract with blobs in a bucket', () => {
    expect(findVersitygw(), 'no versitygw: the S3 store suites would skip').not.toBeNull();
  });
  it('Chromium for the UI end-to-end tests', () => {
    expect(existsSync('/usr/bin/chromium')).toBe(true);
  });
  it('the demo comparison fixtures', () => {
    expect(existsSync(`${fixturesDir}demo/manifest.json`)).toBe(true);
  });
});
