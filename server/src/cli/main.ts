import { termLines } from '../api/untrusted-text.ts';
import { IngestError, describeIngestError } from '../ingest/errors.ts';
import { FileError, UsageError } from './flags.ts';

const USAGE = `usage:
  stagediff inspect FILE [--kind net|sync|syscall|sched] [--sample-type NAME] [--top N] [--granularity G] [--json] [--root 'CALLER;…;CALLEE' [--min-fraction F]] [FILTERS]
  stagediff diff BASE TARGET [--kind net|sync|syscall|sched] [--sample-type NAME] [--top N] [--granularity G] [--normalize] [--json] [FILTERS]
  stagediff upload --server URL [--comparison ID --token TOKEN] [--title T] --stage NAME [--note N] [--source ARCHIVE] FILE...
  stagediff capture --pprof URL --stage NAME [--note N] [--runs N] [--profiles cpu,heap,allocs,mutex,block,goroutine]
                   [--seconds S] [--warmup S] [--wait-quiet S] [--trace S [--force-trace]] [--metrics URL] [--source DIR|none]
                   [--binary PATH]
                   [--out DIR] [--server URL [--comparison ID --token T | --title T]]
                   (-- LOAD COMMAND... | --url URL [--connections C] [--duration S] [--rate R])
  stagediff import parca|pyroscope --url PROFILER_URL --query '{job="api"}' --from T --to T [--runs N]
                   [--requests-url PROMETHEUS_URL --requests-query 'http_requests_total{job="api"}']
                   --server URL [--comparison ID --token T | --title T] --stage NAME [--note N] [--json]
                   (the server fetches the window's scrapes, from hosts its PROFILER_HOSTS allows;
                   T: RFC 3339, 2026-11-29T04:03:27Z)
  stagediff report (--server URL --comparison ID | --out DIR...) [--base STAGE] [--target STAGE]
                   [--format markdown|json] [--top N] [--output FILE] [--image FILE.svg|.png]
  stagediff check (--server URL --comparison ID | --out DIR...) [--base STAGE] [--target STAGE]
                  --fail-on 'METRIC:+N%|-N%'... [--too-few-runs pass|fail] [--allow-different KEY]... [--json]
  stagediff bisect --good REV --bad REV --ready URL --load 'LOAD COMMAND' [--metric p99|rps|cpu-per-request] [--min-change PCT] [--max-spread PCT]
                   [--pprof URL [--warmup S] [--seconds S]] [--runs N] [--max-runs N] [--max-steps N] [--budget DURATION] [--ready-timeout S] [--repo DIR]
                   [--out DIR] [--server URL [--comparison ID --token T | --title T]] -- RECIPE...
                   (RECIPE builds and starts the service at each commit, e.g. sh -c 'go build -o /tmp/svc . && exec /tmp/svc')
  stagediff mcp (--server URL [--comparison ID...] | --out DIR...) [--token TOKEN]
                (an MCP server on stdio for coding agents: the verdicts, never a bare ratio)
  stagediff serve
FILTERS (profiles; Go regular expressions matched against function, file and mapping names, as
go tool pprof's): --focus RE --ignore RE --hide RE --show RE; and on labels, as pprof's -tagfocus…:
--tagfocus [KEY=]RANGE|RE,… --tagignore [KEY=]RANGE|RE,… --tagshow KEYRE --taghide KEYRE
G (rows: pprof's -functions, -lines or -files): functions (default), lines, files
ARCHIVE: a .tar.gz or .zip of the stage's Go sources (.go, .s, .c, .h, go.mod are kept), e.g. the
sources.tar.gz capture writes, or git archive -o src.tar.gz HEAD`;

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
    case 'import': {
      const { importCommand } = await import('./import.ts');
      return importCommand(rest);
    }
    case 'report': {
      const { reportCommand } = await import('./ci-commands.ts');
      return reportCommand(rest);
    }
    case 'check': {
      const { checkCommand } = await import('./ci-commands.ts');
      return checkCommand(rest);
    }
    case 'bisect': {
      const { bisectCommand } = await import('./bisect.ts');
      return bisectCommand(rest);
    }
    case 'mcp': {
      const { mcpCommand } = await import('./mcp.ts');
      return mcpCommand(rest);
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

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.exitCode = reportError(e);
  },
);

function reportError(e: unknown): number {
  // An error may carry a server's message or a file's text: printed without escape sequences.
  const say = (text: string) => process.stderr.write(termLines(text));
  if (e instanceof UsageError) {
    say(`stagediff: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  if (e instanceof FileError) {
    const c = e.cause;
    if (c instanceof IngestError) say(`stagediff: ${describeIngestError(c, e.file)}\n`);
    else if ((c as NodeJS.ErrnoException)?.code === 'ENOENT') say(`stagediff: ${e.file}: no such file\n`);
    else if ((c as NodeJS.ErrnoException)?.code === 'EISDIR') say(`stagediff: ${e.file}: is a directory\n`);
    else say(`stagediff: ${e.file}: ${(c as Error)?.message ?? String(c)}\n`);
    return 1;
  }
  say(`stagediff: ${(e as Error)?.message ?? String(e)}\n`);
  return 1;
}
