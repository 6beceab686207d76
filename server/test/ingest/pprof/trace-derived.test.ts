/**
 * The four profiles `go tool trace -pprof=net|sync|syscall|sched` derived from one real execution
 * trace (fixtures/profiles/trace): each recognised as trace-derived and given its kind, by its name
 * when the name says and else by where its goroutines waited; totals equal go tool pprof's.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { describeProfile } from '../../../src/analysis/sample-types.ts';
import { ingest } from '../../../src/ingest/detect.ts';
import type { Profile } from '../../../src/model/profile.ts';
import { fixturesDir } from '../../helpers/paths.ts';

const dir = `${fixturesDir}profiles/trace/`;

async function read(file: string, name: string): Promise<Profile> {
  const parsed = await ingest({ name, bytes: readFileSync(dir + file) });
  if (parsed.kind !== 'profile') throw new Error(`${file} read as ${parsed.kind}`);
  return parsed.profile;
}

describe('trace-derived pprof profiles', () => {
  for (const k of ['net', 'sync', 'syscall', 'sched'] as const) {
    it(`go tool trace -pprof=${k}`, async () => {
      // by content alone (a name that says nothing), then by a name that says
      for (const name of ['upload', `${k}.pprof`, `trace-${k}.pb.gz`]) {
        const p = await read(`${k}.pprof`, name);
        expect(p.kind, name).toBe(`trace-${k}`);
        expect(describeProfile(p).kind, name).toBe(`trace-${k}`);
        expect(p.comments.at(-1)).toMatch(new RegExp(`go tool trace -pprof=${k}\\)`));
        // the trace's span is not in the profile: no duration is made up
        expect(p.durationNanos).toBe(0);
      }
      const p = await read(`${k}.pprof`, 'upload');
      const d = p.sampleTypes.findIndex((t) => t.type === 'delay');
      const total = p.values[d]!.reduce((a, b) => a + b, 0);
      const top = readFileSync(`${dir}${k}.pprof-top.txt`, 'utf8');
      expect(`of ${total}ns total`).toBe(/of (\d+ns) total/.exec(top)![0]);
    });
  }

  it('a mutex profile from the runtime keeps its own kind', async () => {
    const parsed = await ingest({
      name: 'upload',
      bytes: readFileSync(`${fixturesDir}demo/baseline/run-1/mutex.pb.gz`),
    });
    if (parsed.kind !== 'profile') throw new Error('not a profile');
    expect(parsed.profile.kind).toBeUndefined();
    expect(describeProfile(parsed.profile).kind).toBe('mutex');
  });
});
