/**
 * Gives the PostgreSQL suites a real server when the caller did not: if STAGEDIFF_TEST_DATABASE_URL
 * is unset and Debian's PostgreSQL server binaries are installed, a throwaway cluster is started
 * for this run (scripts/pg-test-cluster.sh) and destroyed afterwards. Without the binaries the
 * PostgreSQL suites skip with a loud message.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

function havePostgres(): boolean {
  const base = '/usr/lib/postgresql';
  return existsSync(base) && readdirSync(base).some((v) => existsSync(`${base}/${v}/bin/initdb`));
}

export default function setup(): (() => void) | undefined {
  if (process.env.STAGEDIFF_TEST_DATABASE_URL || !havePostgres()) return;
  const env = { ...process.env, PG_TEST_DIR: `${process.env.TMPDIR ?? '/tmp'}/stagediff-vitest-pg-${process.pid}` };
  try {
    const out = execFileSync(`${root}scripts/pg-test-cluster.sh`, ['start'], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const line = out.split('\n').find((l) => l.startsWith('DATABASE_URL='));
    if (!line) return;
    process.env.STAGEDIFF_TEST_DATABASE_URL = line.slice('DATABASE_URL='.length);
    console.log(`test PostgreSQL: ${process.env.STAGEDIFF_TEST_DATABASE_URL}`);
  } catch (e) {
    console.warn(`could not start a test PostgreSQL (${(e as Error).message}); its suites will skip`);
    return;
  }
  return () => {
    try {
      execFileSync(`${root}scripts/pg-test-cluster.sh`, ['destroy'], { env, stdio: 'ignore' });
    } catch {
      // best effort
    }
  };
}
