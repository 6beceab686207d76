import { spawn, spawnSync } from 'node:child_process';
import { repoRoot } from './paths.ts';

/** The `stagediff` command of this checkout, run as a user runs it: a child process. */
export const stagediffBin = `${repoRoot}server/bin/stagediff.mjs`;

/**
 * Runs the CLI without blocking this process: a test whose server lives in this process must keep
 * answering while the command talks to it.
 */
export function runCli(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [stagediffBin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** Runs the CLI to completion from the repository root (a minute at most). */
export function runCliSync(...args: string[]) {
  return spawnSync(process.execPath, [stagediffBin, ...args], { cwd: repoRoot, encoding: 'utf8', timeout: 60_000 });
}
