import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Spool } from '../../src/services/spool.ts';

const host =
  hostname()
    .replace(/[^A-Za-z0-9-]/g, '-')
    .slice(0, 63) || 'host';

describe('the upload spool at start-up', () => {
  it("removes a file of this host's process that is gone, keeps a live one's and another host's recent one", async () => {
    const spool = new Spool(mkdtempSync(join(tmpdir(), 'stagediff-spool-')));
    // A pid that certainly ended: a process that ran and exited.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    const file = (name: string) => join(spool.dir, name);
    const names = {
      gone: `${host}.${dead}.aa11.upload`,
      goneOldStyle: `${dead}.bb22.upload`,
      live: `${host}.${process.ppid}.cc33.upload`,
      mine: `${host}.${process.pid}.dd44.upload`,
      otherHostRecent: `otherhost.12345.ee55.upload`,
      otherHostOld: `otherhost.12345.ff66.upload`,
    };
    for (const n of Object.values(names)) writeFileSync(file(n), 'partial');
    const old = new Date(Date.now() - 2 * 3600_000);
    utimesSync(file(names.otherHostOld), old, old);
    expect(spool.sweepAbandoned()).toBe(3);
    expect(Object.fromEntries(Object.entries(names).map(([k, n]) => [k, existsSync(file(n))]))).toEqual({
      gone: false,
      goneOldStyle: false,
      live: true,
      mine: true,
      otherHostRecent: true,
      otherHostOld: false,
    });
  });

  it('names its files after this host and process', async () => {
    const spool = new Spool(mkdtempSync(join(tmpdir(), 'stagediff-spool-')));
    const s = await spool.write(
      (async function* () {
        yield Buffer.from('bytes');
      })(),
      100,
    );
    expect(s.path).toContain(`${host}.${process.pid}.`);
    await spool.discard(s);
  });
});
