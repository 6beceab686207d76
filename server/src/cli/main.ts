import { parseArgs } from 'node:util';
import { IngestError, describeIngestError } from '../ingest/errors.ts';

const USAGE = `usage:
  stagediff inspect FILE [--sample-type NAME] [--top N] [--json] [--root 'CALLER;…;CALLEE' [--min-fraction F]] [FILTERS]
  stagediff diff BASE TARGET [--sample-type NAME] [--top N] [--normalize] [--json] [FILTERS]
  stagediff upload --server URL [--comparison ID --token TOKEN] [--title T] --stage NAME [--note N] FILE...
  stagediff capture --pprof URL --stage NAME [--note N] [--runs N] [--profiles cpu,heap,allocs,mutex,block,goroutine]
                   [--seconds S] [--warmup S] [--wait-quiet S] [--out DIR] [--server URL [--comparison ID --token T | --title T]]
                   (-- LOAD COMMAND... | --url URL [--connections C] [--duration S] [--rate R])
  stagediff report (--server URL --comparison ID | --out DIR...) [--base STAGE] [--target STAGE]
                   [--format markdown|json] [--top N] [--output FILE] [--image FILE.svg|.png]
  stagediff check (--server URL --comparison ID | --out DIR...) [--base STAGE] [--target STAGE]
                  --fail-on 'METRIC:+N%|-N%'... [--too-few-runs pass|fail] [--json]
  stagediff serve
FILTERS (profiles; Go regular expressions matched against function, file and mapping names, as
go tool pprof's): --focus RE --ignore RE --hide RE --show RE`;

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

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    // Each command loads its own modules, so `--help` and a usage error start in a few milliseconds.
    case 'inspect': {
      const { inspectCommand } = await import('./inspect.ts');
      return inspectCommand(rest);
    }
    case 'diff': {
      const { diffCommand } = await import('./diff.ts');
      return diffCommand(rest);
    }
    case 'serve': {
      const { serveCommand } = await import('./serve.ts');
      return serveCommand(rest);
    }
    case 'capture': {
      const { captureCommand } = await import('./capture.ts');
      return captureCommand(rest);
    }
    case 'upload': {
      const { uploadCommand } = await import('./upload.ts');
      return uploadCommand(rest);
    }
    case 'report': {
      const { reportCommand } = await import('./ci-commands.ts');
      return reportCommand(rest);
    }
    case 'check': {
      const { checkCommand } = await import('./ci-commands.ts');
      return checkCommand(rest);
    }
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(`${USAGE}\n`);
      return cmd === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command "${cmd}"`);
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.exitCode = reportError(e);
  },
);

function reportError(e: unknown): number {
  if (e instanceof UsageError) {
    process.stderr.write(`stagediff: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (e instanceof FileError) {
    const c = e.cause;
    if (c instanceof IngestError) process.stderr.write(`stagediff: ${describeIngestError(c, e.file)}\n`);
    else if ((c as NodeJS.ErrnoException)?.code === 'ENOENT')
      process.stderr.write(`stagediff: ${e.file}: no such file\n`);
    else if ((c as NodeJS.ErrnoException)?.code === 'EISDIR')
      process.stderr.write(`stagediff: ${e.file}: is a directory\n`);
    else process.stderr.write(`stagediff: ${e.file}: ${(c as Error)?.message ?? String(c)}\n`);
    return 1;
  }
  process.stderr.write(`stagediff: ${(e as Error)?.message ?? String(e)}\n`);
  return 1;
}
