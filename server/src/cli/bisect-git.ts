import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { UsageError } from './flags.ts';

/**
 * The git side of `stagediff bisect`: the user's repository is only ever read, checked out detached
 * (as `git bisect` itself does) and bisected; never committed to, pushed, or moved to another branch.
 */

export interface GitResult {
  status: number;
  stdout: string;
  stderr: string;
}

export function git(repo: string, args: string[]): GitResult {
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.error) throw new UsageError(`cannot run git: ${r.error.message}`);
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

function gitOk(repo: string, args: string[]): string {
  const r = git(repo, args);
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout.trim();
}

/** Where HEAD was when the bisect started: a branch (left checked out) or a detached commit. */
export interface StartPoint {
  branch: string | null;
  commit: string;
}

/**
 * Refuses what a bisect must not start on: not a work tree, uncommitted changes to tracked files, a
 * bisect already under way. Returns where HEAD is.
 */
export function preconditions(repo: string): StartPoint {
  const top = git(repo, ['rev-parse', '--show-toplevel']);
  if (top.status !== 0) throw new UsageError(`--repo ${repo}: not inside a git work tree`);
  const dirty = gitOk(repo, ['status', '--porcelain', '--untracked-files=no']);
  if (dirty)
    throw new UsageError(
      `the working tree has uncommitted changes (commit or stash them first):\n${dirty.split('\n').slice(0, 10).join('\n')}`,
    );
  const bisectStart = gitOk(repo, ['rev-parse', '--git-path', 'BISECT_START']);
  if (existsSync(isAbsolute(bisectStart) ? bisectStart : join(repo, bisectStart)))
    throw new UsageError('a git bisect is already under way in this repository (git bisect reset ends it)');
  const branch = git(repo, ['symbolic-ref', '-q', '--short', 'HEAD']);
  return { branch: branch.status === 0 ? branch.stdout.trim() : null, commit: gitOk(repo, ['rev-parse', 'HEAD']) };
}

/** The full id of a revision that names a commit; a usage error naming the flag otherwise. */
export function resolveCommit(repo: string, rev: string, flag: string): string {
  const r = git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]);
  if (r.status !== 0) throw new UsageError(`${flag} ${rev}: not a commit of this repository`);
  return r.stdout.trim();
}

export function isAncestor(repo: string, a: string, b: string): boolean {
  return git(repo, ['merge-base', '--is-ancestor', a, b]).status === 0;
}

/** Short id and subject line of a commit (the subject is the author's text: untrusted). */
export function describeCommit(repo: string, commit: string): { short: string; subject: string } {
  const out = gitOk(repo, ['log', '-1', '--format=%h%x00%s', commit]);
  const [short, subject] = out.split('\0');
  return { short: short!, subject: subject ?? '' };
}

export function parentOf(repo: string, commit: string): string | null {
  const r = git(repo, ['rev-parse', '--verify', '--quiet', `${commit}^1`]);
  return r.status === 0 ? r.stdout.trim() : null;
}

export function checkoutDetached(repo: string, commit: string): void {
  gitOk(repo, ['checkout', '-q', '--detach', commit]);
}

export function head(repo: string): string {
  return gitOk(repo, ['rev-parse', 'HEAD']);
}

/** What `git bisect good|bad|skip` said: the next commit to test (checked out), the culprit, or the candidates left when only skipped ones remain. */
export type BisectOutcome =
  | { kind: 'next'; commit: string }
  | { kind: 'found'; commit: string }
  | { kind: 'only-skipped'; candidates: string[] };

export function bisectStart(repo: string, bad: string, good: string): BisectOutcome {
  return outcome(repo, git(repo, ['bisect', 'start', bad, good]), ['bisect', 'start']);
}

export function bisectMark(repo: string, answer: 'good' | 'bad' | 'skip', commit: string): BisectOutcome {
  return outcome(repo, git(repo, ['bisect', answer, commit]), ['bisect', answer]);
}

function outcome(repo: string, r: GitResult, args: string[]): BisectOutcome {
  const text = `${r.stdout}\n${r.stderr}`;
  const found = /^([0-9a-f]{7,64}) is the first bad commit/m.exec(text);
  if (found) return { kind: 'found', commit: found[1]! };
  if (/only 'skip'ped commits left/.test(text)) {
    const candidates = [...text.matchAll(/^([0-9a-f]{40})$/gm)].map((m) => m[1]!);
    return { kind: 'only-skipped', candidates };
  }
  if (r.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${text.trim()}`);
  // git bisect has checked out the next commit to test (detached).
  return { kind: 'next', commit: head(repo) };
}

/**
 * Ends any bisect and puts HEAD back where it was: the branch it was on (its commit untouched), or the
 * detached commit. Returns a problem to report, or null.
 */
export function restore(repo: string, start: StartPoint): string | null {
  const bisectStartPath = git(repo, ['rev-parse', '--git-path', 'BISECT_START']).stdout.trim();
  const inBisect = existsSync(isAbsolute(bisectStartPath) ? bisectStartPath : join(repo, bisectStartPath));
  if (inBisect) git(repo, ['bisect', 'reset']);
  const back = start.branch
    ? git(repo, ['checkout', '-q', start.branch])
    : git(repo, ['checkout', '-q', '--detach', start.commit]);
  if (back.status !== 0) return `could not return to ${start.branch ?? start.commit}: ${back.stderr.trim()}`;
  const now = head(repo);
  if (now !== start.commit) return `HEAD is ${now}, not ${start.commit} where the bisect started`;
  return null;
}
