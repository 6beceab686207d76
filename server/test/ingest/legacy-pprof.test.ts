/**
 * Pre-protobuf profile layouts from real tools (a gperftools CPU profile, the Go runtime's
 * debug=1 texts): recognised by content and refused with what they are and how to convert them.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ingest } from '../../src/ingest/detect.ts';
import { legacyKind } from '../../src/ingest/legacy-pprof.ts';
import { fixturesDir } from '../helpers/paths.ts';

const file = (f: string) => readFileSync(`${fixturesDir}profiles/legacy/${f}`);

describe('legacy pprof layouts', () => {
  const cases: [string, string, RegExp][] = [
    ['gperftools-cpu.prof', 'cpu-binary', /legacy binary CPU profile.*go tool pprof -proto BINARY FILE/],
    ['heap-debug1.txt', 'heap-text', /legacy text heap profile.*go tool pprof -proto FILE > FILE\.pb\.gz/],
    ['mutex-debug1.txt', 'contention-text', /mutex\/block profile/],
    ['goroutine-debug1.txt', 'count-text', /goroutine\/threadcreate profile/],
    // google/pprof's own test data (profile/testdata), each converted by `go tool pprof -proto FILE`
    [
      'google-pprof/java.heap',
      'heap-text',
      /legacy text heap profile.*Java heapz.*go tool pprof -proto FILE > FILE\.pb\.gz/,
    ],
    [
      'google-pprof/java.cpu',
      'java-cpu-binary',
      /legacy binary Java CPU profile.*go tool pprof -proto FILE > FILE\.pb\.gz/,
    ],
    ['google-pprof/java.contention', 'contention-text', /contentionz.*go tool pprof -proto FILE > FILE\.pb\.gz/],
    ['google-pprof/cppbench.contention', 'contention-text', /contentionz.*go tool pprof -proto FILE > FILE\.pb\.gz/],
    [
      'google-pprof/cppbench.thread',
      'thread-text',
      /thread profile \(threadz\).*go tool pprof -proto FILE > FILE\.pb\.gz/,
    ],
  ];
  for (const [f, kind, msg] of cases) {
    it(f, async () => {
      expect(legacyKind(file(f))).toBe(kind);
      await expect(ingest({ name: 'upload', bytes: file(f) })).rejects.toMatchObject({
        code: 'unsupported',
        message: expect.stringMatching(msg),
      });
    });
  }
});
