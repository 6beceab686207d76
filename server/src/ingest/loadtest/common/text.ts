/**
 * Reading an importer's input as text: whole small reports, the head a detector sees, a peek
 * that keeps a stream readable, JSON with typed errors, and byte spans decoded once per change.
 * Text is UTF-8; a leading byte-order mark is dropped everywhere except in the byte-level readers.
 */
import { IngestError } from '../../errors.ts';
import { readAllBytes, type ByteSource } from '../../source.ts';
import { headUtf8 } from '../../head-text.ts';
import { MAX_RUNS_PER_FILE } from '../types.ts';

/** Max bytes a whole-file reader accepts (reports are a few KiB; this only guards misuse). */
export const TEXT_REPORT_LIMIT = 64 * 1024 * 1024;

function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function decode(buf: Buffer): string {
  return stripBom(buf.toString('utf8'));
}

/**
 * Reads a whole text report (wrk, hey summary, ab, bombardier, autocannon). Refuses only a file of
 * zero bytes ("<what>: the file is empty"); a blank file is left to the parser to judge.
 */
export async function readText(src: ByteSource, what: string): Promise<string> {
  const buf = await readAllBytes(src, TEXT_REPORT_LIMIT);
  if (buf.length === 0) throw new IngestError('empty', `${what}: the file is empty`);
  return decode(buf);
}

/** Reads a whole report (vegeta, k6, Locust, JMeter, ghz), refusing a file that is blank. */
export async function readNonBlankText(src: ByteSource): Promise<string> {
  const text = decode(await readAllBytes(src, TEXT_REPORT_LIMIT));
  if (text.trim() === '') throw new IngestError('empty', 'the file is empty');
  return text;
}

/** Head bytes as text for detectors (a multi-byte character cut at the end does not matter). */
export function headText(head: Buffer): string {
  return stripBom(headUtf8(head));
}

/** True when the name hint mentions the tool (used only to break ties, never alone). */
export function nameHints(fileName: string | undefined, re: RegExp): boolean {
  if (!fileName) return false;
  const base = fileName.split(/[\\/]/).pop() ?? fileName;
  return re.test(base) || re.test(fileName);
}

/**
 * Looks at the first chunk of a source without consuming it: returns its start as text (up to
 * `bytes`) and a source that replays that chunk and then the rest, so a CSV can still be streamed
 * after an importer chose between its tool's outputs.
 */
export async function peekSource(
  src: ByteSource,
  what: string,
  bytes = 4096,
): Promise<{ head: string; src: ByteSource }> {
  const it = src[Symbol.asyncIterator]();
  let first = await it.next();
  while (!first.done && first.value.length === 0) first = await it.next();
  if (first.done) throw new IngestError('empty', `${what}: the file is empty`);
  const chunk = first.value;
  const replay: ByteSource = {
    async *[Symbol.asyncIterator]() {
      yield chunk;
      for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
    },
  };
  const head = decode(Buffer.from(chunk.buffer, chunk.byteOffset, Math.min(chunk.length, bytes)));
  return { head, src: replay };
}

/** JSON.parse that reports a typed 'malformed' error naming `what` and, when known, the line. */
export function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const pos = /position (\d+)/.exec(msg);
    const line = pos ? text.slice(0, Number(pos[1])).split('\n').length : undefined;
    throw new IngestError('malformed', `${what} is not valid JSON: ${msg}`, line);
  }
}

/** A plain JSON object (not null, not an array). */
export function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Decodes byte spans to strings, remembering the last one: a field that repeats from row to row
 * (a status "200", a scenario, a URL) is then compared byte by byte instead of decoded again.
 */
export class SpanText {
  private bytes = new Uint8Array(64);
  private len = -1;
  private text = '';
  get(b: Buffer, s: number, e: number): string {
    const n = e - s;
    if (n === this.len) {
      const k = this.bytes;
      let same = true;
      for (let j = 0; j < n; j++) {
        if (b[s + j] !== k[j]) {
          same = false;
          break;
        }
      }
      if (same) return this.text;
    }
    this.text = b.toString('utf8', s, e);
    if (n > this.bytes.length) this.bytes = new Uint8Array(n * 2);
    this.bytes.set(b.subarray(s, e));
    this.len = n;
    return this.text;
  }
}

/**
 * Refuses a report that holds several runs (outputs appended with `>>`, a CI log of a loop):
 * `marker` matches a line each run prints exactly once. Reading one of them, or mixing figures of
 * several, would be wrong; the error names the lines so the user can split the file.
 */
export function refuseSeveralRuns(text: string, marker: RegExp, what: string): void {
  const re = new RegExp(marker.source, `${marker.flags.replace(/[gm]/g, '')}gm`);
  const at: number[] = [];
  for (const m of text.matchAll(re)) at.push(m.index);
  if (at.length < 2) return;
  // the lines of the first ten only: counting from the start for each of thousands would be quadratic
  const lineOf = (i: number) => text.slice(0, i).split('\n').length;
  const lines = at.slice(0, 10).map(lineOf);
  // a file too large to be split into its runs (over SEVERAL_RUNS_SCAN_BYTES) with more runs than are
  // read from one file: refused like a smaller one, naming the limit
  if (at.length > MAX_RUNS_PER_FILE)
    throw new IngestError(
      'too-large',
      `the file holds ${at.length} ${what} runs, more than the ${MAX_RUNS_PER_FILE} read from one file: split it`,
      lines[1],
    );
  throw new IngestError(
    'concatenated',
    `the file holds ${at.length} ${what} runs (lines ${lines.slice(0, 10).join(', ')}${at.length > 10 ? ', …' : ''}): upload each run as its own file`,
    lines[1],
  );
}

/** Longest line taken for a shell prompt or a command line (a report's own lines may be megabytes). */
const MAX_PROMPT_LINE = 1000;

/** A shell prompt before a command: `user@host:~/dir$`, `$`, `PS C:\>`, `❯`, `➜  repo git:(main)`. */
const PROMPT_PREFIX = /(?:^|\s)(?:[\w.-]+@[\w.-]+(?::[^\s$#%]*)?\s*[$#%]|PS [^>]*>|[$#%>❯➜])$/;

/**
 * The command line that started `tool`, where a paste keeps it (a shell prompt line, or the command
 * alone on a line, above the output): from the tool's name to the end of the line; null when none.
 */
export function commandLineOf(text: string, tool: string): string | null {
  const at = new RegExp(`(?:^|[\\s/])${tool}(?=\\s|$)`);
  for (const raw of text.split(/\r?\n/, 50)) {
    if (raw.length > MAX_PROMPT_LINE) continue;
    const m = at.exec(raw);
    if (!m) continue;
    const start = m.index + (m[0].length - tool.length);
    // what stands before the tool: nothing, a prompt, or the directory of the binary (./dist/ghz)
    const before = raw.slice(0, start).trim();
    const prefix = before.replace(/\S*\/$/, '').trim();
    if (prefix === '' || PROMPT_PREFIX.test(prefix) || /^[❯➜$#%>]/.test(prefix)) return raw.slice(start).trim();
  }
  return null;
}

/** A line a user's shell shows before a command: `$ hey …`, `user@host:~/dir$ wrk …`, `PS C:\> ab …`, `> k6 run …`. */
const PROMPT = /^\s*(?:[\w.-]+@[\w.-]+(?::[^\s$#%]*)?\s*[$#%]|PS [^>]*>|[$#%>❯➜])\s*\S/;

/** A shell prompt line, with or without a command after it (`user@host:~$`, `$ `, `PS C:\\>`, `❯`). */
const PROMPT_LINE = /^\s*(?:[\w.-]+@[\w.-]+(?::[^\s$#%]*)?\s*[$#%]|PS [^>]*>|[$#%>❯➜])(?:\s.*)?$/;

const isPromptLine = (line: string) => line.length <= MAX_PROMPT_LINE && PROMPT_LINE.test(line);

/** The text without the shell prompt lines (and blank lines) that close a terminal paste. */
export function withoutTrailingPrompt(text: string): string {
  const lines = text.split('\n');
  let end = lines.length;
  while (end > 0 && (lines[end - 1]!.trim() === '' || isPromptLine(lines[end - 1]!.replace(/\r$/, '')))) end--;
  return end === lines.length ? text : `${lines.slice(0, end).join('\n')}\n`;
}

/** One run's part of a report that holds several. `line` is 1-based, where the part starts in the file. */
export interface RunText {
  text: string;
  line: number;
}

/**
 * Splits a report of several runs (outputs appended with `>>`, a terminal log of a loop) at the lines
 * each run opens with (`start`), in the file's order. A run's part begins at its opening line, or at
 * the shell prompt and blank lines just above it (the command that started it belongs to it); what
 * comes before the first opening line belongs to the first run. One part when `start` matches once
 * or never.
 */
export function splitRuns(text: string, start: RegExp): RunText[] {
  const re = new RegExp(start.source, `${start.flags.replace(/[gm]/g, '')}gm`);
  const starts: number[] = [];
  for (const m of text.matchAll(re)) {
    // the line holding the match
    const at = text.lastIndexOf('\n', m.index - 1) + 1;
    if (starts.at(-1) !== at) starts.push(at);
  }
  if (starts.length < 2) return [{ text, line: 1 }];
  const cuts = starts.map((at, i) => {
    if (i === 0) return 0;
    // move up over a prompt line and blank lines above the opening line, not into the run before
    let cut = at;
    for (;;) {
      const prevEnd = cut - 1;
      if (prevEnd <= starts[i - 1]!) break;
      const prevStart = text.lastIndexOf('\n', prevEnd - 1) + 1;
      const prev = text.slice(prevStart, prevEnd);
      if (prev.trim() !== '' && !(prev.length <= MAX_PROMPT_LINE && PROMPT.test(prev))) break;
      cut = prevStart;
    }
    return cut;
  });
  // each part's first line, counting the newlines between one cut and the next (once over the text)
  const parts: RunText[] = [];
  let line = 1;
  let counted = 0;
  for (const [i, from] of cuts.entries()) {
    for (let at = text.indexOf('\n', counted); at !== -1 && at < from; at = text.indexOf('\n', at + 1)) line++;
    counted = from;
    parts.push({ text: text.slice(from, cuts[i + 1] ?? text.length), line });
  }
  return parts;
}
