/** Recorded command lines: pasteable, and without the secrets a share link would expose. */
import { expect, it } from 'vitest';
import { redactHeaders, redactSecrets, shellJoin } from '../../src/cli/command-line.ts';

it('keeps credentials out of the recorded command lines', () => {
  expect(redactSecrets(['--stage', 's', '--token', 'abc', '--', 'wrk', '--token', 'x'])).toEqual([
    '--stage',
    's',
    '--token',
    '***',
    '--',
    'wrk',
    '--token',
    'x',
  ]);
  expect(redactSecrets(['--token=abc'])).toEqual(['--token=***']);
  const cmd = shellJoin(['wrk', '-H', 'Authorization: Bearer s3cret', '-H', 'Accept: */*', 'http://x/']);
  expect(redactHeaders(cmd)).toBe("wrk -H 'Authorization: ***' -H 'Accept: */*' http://x/");
  expect(redactHeaders("hey -H 'cookie: sid=1; a=2' http://x/")).toBe("hey -H 'cookie: ***' http://x/");
});
