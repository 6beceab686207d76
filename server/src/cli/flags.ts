/**
 * What every command shares: its flags parsed with usage errors as such, and the two errors the
 * entry point (main.ts) reports in one line each.
 */
import { parseArgs } from 'node:util';

/** A problem with the command line or an input file: one line on stderr, no stack trace. */
export class UsageError extends Error {}

/** The file a command was working on, so errors can name it. */
export class FileError extends Error {
  constructor(
    readonly file: string,
    override readonly cause: unknown,
  ) {
    super(file);
  }
}

export interface Flags {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/** Parses `--name value` / `--flag` options; usage errors are reported as such. */
export function parseFlags(args: string[], spec: Record<string, 'string' | 'boolean' | 'strings'>): Flags {
  const options: Record<string, { type: 'string' | 'boolean'; multiple?: boolean }> = {};
  for (const [k, t] of Object.entries(spec))
    options[k] = t === 'strings' ? { type: 'string', multiple: true } : { type: t };
  try {
    const r = parseArgs({ args, options, allowPositionals: true, strict: true });
    return { values: r.values as Flags['values'], positionals: r.positionals };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}

export function stringFlag(f: Flags, name: string): string | undefined {
  const v = f.values[name];
  return typeof v === 'string' ? v : undefined;
}
