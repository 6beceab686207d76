/**
 * How the server logs. On a terminal a person reads it: one line per event, the time, the message and
 * a few fields. Anywhere else (a container, a file, a log collector) each line is pino's JSON. Either
 * way, one line per request, written once it is answered; health checks and metric scrapes at debug.
 */
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify';

/** LOG_FORMAT: `json`, `pretty` (lines for a person), or `auto` (pretty on a terminal, else JSON). */
export type LogFormat = 'auto' | 'json' | 'pretty';
export const LOG_FORMATS: readonly LogFormat[] = ['auto', 'json', 'pretty'];

/** Where the log goes: stdout unless told otherwise (tests). */
export interface LogSink {
  write: (chunk: string) => unknown;
  isTTY?: boolean;
}

/** Whether lines for a person are written: asked for, or `auto` on a terminal. */
export function prettyLogs(format: LogFormat, sink: LogSink = process.stdout): boolean {
  return format === 'pretty' || (format === 'auto' && sink.isTTY === true);
}

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
/** Fields every pino record has (or Fastify adds), and a request line's own (its message says them), left out of a person's line. */
const QUIET = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'reqId', 'v', 'request']);

function clock(ms: unknown): string {
  const d = typeof ms === 'number' ? new Date(ms) : new Date();
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

function fieldText(v: unknown): string {
  if (typeof v === 'string') return /[\s"=]/.test(v) || v === '' ? JSON.stringify(v) : v;
  return JSON.stringify(v);
}

/**
 * One pino JSON record as a person's line: `12:03:04 GET /c/demo 200 3.1 ms`, a level word only when it
 * is not info, the remaining fields as key=value, and an error's stack on the lines below.
 */
export function prettyLine(json: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith('\n') ? json : `${json}\n`;
  }
  const level = typeof rec.level === 'number' ? rec.level : 30;
  const parts = [clock(rec.time)];
  if (level !== 30) parts.push(LEVELS[level] ?? `LEVEL${level}`);
  parts.push(typeof rec.msg === 'string' ? rec.msg : '');
  let stack = '';
  for (const [k, v] of Object.entries(rec)) {
    if (QUIET.has(k) || v === undefined) continue;
    if (k === 'err' && v && typeof v === 'object') {
      const e = v as { message?: unknown; stack?: unknown };
      if (typeof e.stack === 'string') stack = `\n${e.stack.replace(/^/gm, '    ')}`;
      else parts.push(`err=${fieldText(e.message ?? v)}`);
      continue;
    }
    parts.push(`${k}=${fieldText(v)}`);
  }
  return `${parts.filter(Boolean).join(' ')}${stack}\n`;
}

/** The destination pino writes to: JSON lines as they are, or each turned into a person's line. */
export function logStream(format: LogFormat, sink: LogSink = process.stdout): LogSink {
  if (!prettyLogs(format, sink)) return sink;
  return {
    write: (chunk: string) => {
      for (const line of chunk.split('\n')) if (line) sink.write(prettyLine(line));
      return true;
    },
  };
}

/** Requests logged at debug: what a load balancer or Prometheus asks every few seconds. */
const ROUTINE = new Set(['/healthz', '/metrics']);

/**
 * Fastify's request logging, one line per request once it is answered — method, path, status and time
 * taken — instead of its "incoming request" and "request completed" pair. A request that failed after
 * its answer began (the error Fastify hands over) is that one line at error level.
 */
export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, req: FastifyRequest, reply: FastifyReply): void {
    const path = req.url.split('?')[0] ?? req.url;
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    const fields = { request: { method: req.method, url: req.url, status: reply.statusCode, ms } };
    const msg = `${req.method} ${req.url} ${reply.statusCode} ${ms} ms`;
    if (error) reply.log.error({ ...fields, err: error }, msg);
    else if (ROUTINE.has(path)) reply.log.debug(fields, msg);
    else reply.log.info(fields, msg);
  }
}

/**
 * The line a person reads when the server is up: where it is, and the demo's address when it has one.
 * `address` is each address Fastify listens on; the first gets the whole sentence, any other (all
 * interfaces: HOST=0.0.0.0) is named after it.
 */
export function listeningText(demoPath: string | null): (address: string) => string {
  let first = true;
  return (address: string) => {
    if (!first) return `stagediff is also at ${address}`;
    first = false;
    return `stagediff is running at ${address}${demoPath ? ` — the demo: ${address}${demoPath}` : ''} (Ctrl-C stops it)`;
  };
}
