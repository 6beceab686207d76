/**
 * CSV input of the per-request importers (k6, vegeta, JMeter, Locust): records as strings for small
 * files, and `forEachCsvRow` for million-row logs, whose fields stay byte spans until a figure
 * needs one decoded. Lines and fields are 1-based in errors, as a user counts them.
 */
import { parse as parseCsv } from 'csv-parse/sync';
import { IngestError } from '../../errors.ts';
import { lineBatches, lineSpans, type ByteSource } from '../../source.ts';
import { SpanText } from './text.ts';

/** One CSV record and the 1-based line it starts on. */
export interface CsvRecord {
  fields: string[];
  line: number;
}

/**
 * Streams the records of a CSV file, one array per input chunk (memory bounded by the chunk and
 * the longest record).
 * A line without any quote character is split on commas directly — that is the hot path of
 * million-row logs and is exactly what a CSV parser would return for it. Any record that holds a
 * quote (quoted commas, doubled quotes, fields spanning several lines, as JMeter's failure
 * messages do) is gathered until its quotes balance and handed to csv-parse.
 * Blank lines are skipped.
 */
export async function* csvRecordBatches(src: ByteSource): AsyncGenerator<CsvRecord[]> {
  let lineNo = 0;
  let pending: string | null = null;
  let pendingStart = 0;
  let quotes = 0;
  for await (const batch of lineBatches(src)) {
    const out: CsvRecord[] = [];
    for (const raw of batch) {
      lineNo++;
      const line = lineNo === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
      if (pending === null) {
        if (line.indexOf('"') < 0) {
          if (line.length === 0) continue;
          out.push({ fields: line.split(','), line: lineNo });
          continue;
        }
        pending = line;
        pendingStart = lineNo;
        quotes = countQuotes(line);
      } else {
        pending += `\n${line}`;
        quotes += countQuotes(line);
      }
      if (quotes % 2 === 0) {
        out.push({ fields: parseOne(pending, pendingStart), line: pendingStart });
        pending = null;
      }
    }
    if (out.length > 0) yield out;
  }
  if (pending !== null) {
    throw new IngestError('malformed', 'a quoted CSV field is never closed', pendingStart);
  }
}

/**
 * One CSV record as `forEachCsvRow` hands it out, reused from record to record. A record without
 * any quote character (the hot path of million-row logs) stays in the input's bytes and is split
 * on commas lazily, only as far as the fields asked for: field i is `buf[start[i], end[i])` once
 * `has(i)` returned true. Reading a number or comparing a name then costs no string, and a row
 * skipped after its first field is never split further. A record with quotes went through
 * csv-parse (see `csvRecordBatches`) and its fields are in `fields`. The accessors work the same
 * on both.
 */
export class CsvRow {
  buf: Buffer = Buffer.alloc(0);
  start = new Int32Array(32);
  end = new Int32Array(32);
  /** 1-based line the record starts on */
  line = 0;
  /** the decoded fields when the record held quotes, else null */
  fields: string[] | null = null;
  private lineEnd = 0;
  private n = 0; // fields split so far
  private next = 0; // where the next field starts
  private complete = false; // the whole line is split

  /** @internal starts a quote-free record on buf[s, e) */
  reset(buf: Buffer, s: number, e: number, line: number): void {
    this.buf = buf;
    this.lineEnd = e;
    this.next = s;
    this.n = 0;
    this.complete = false;
    this.fields = null;
    this.line = line;
  }

  /** @internal a record parsed by csv-parse */
  setFields(fields: string[], line: number): void {
    this.fields = fields;
    this.line = line;
  }

  private split(upTo: number): void {
    const b = this.buf;
    const le = this.lineEnd;
    let p = this.next;
    let n = this.n;
    while (n <= upTo) {
      let i = p;
      while (i < le && b[i] !== 44) i++;
      if (n === this.start.length) {
        const ns = new Int32Array(n * 2);
        ns.set(this.start);
        this.start = ns;
        const ne = new Int32Array(n * 2);
        ne.set(this.end);
        this.end = ne;
      }
      this.start[n] = p;
      this.end[n] = i;
      n++;
      if (i === le) {
        this.complete = true;
        break;
      }
      p = i + 1;
    }
    this.n = n;
    this.next = p;
  }

  /** True when the record has a field i (for a quote-free record, its span is then in start/end). */
  has(i: number): boolean {
    if (i < 0) return false;
    if (this.fields !== null) return i < this.fields.length;
    if (i >= this.n && !this.complete) this.split(i);
    return i < this.n;
  }

  /** Number of fields. */
  get count(): number {
    if (this.fields !== null) return this.fields.length;
    if (!this.complete) this.split(0x7fffffff);
    return this.n;
  }

  /** Field i as a string (undefined past the last field), like `CsvRecord.fields[i]`. */
  text(i: number): string | undefined {
    if (this.fields !== null) return this.fields[i];
    if (!this.has(i)) return undefined;
    return this.buf.toString('utf8', this.start[i], this.end[i]);
  }

  /** True when field i exists and is empty. */
  isEmpty(i: number): boolean {
    if (this.fields !== null) return this.fields[i] === '';
    return this.has(i) && this.start[i] === this.end[i];
  }

  /**
   * Field i when it is a plain unsigned decimal ("42", "2.097462") of at most 15 digits, read
   * from the bytes and correctly rounded (one division of exact integers), so it equals
   * Number(text); NaN for anything else (empty, signs, exponents, spaces, a quoted record), and
   * the caller then decides on the text itself.
   */
  decimal(i: number): number {
    if (this.fields !== null || !this.has(i)) return NaN;
    const b = this.buf;
    const e = this.end[i]!;
    let p = this.start[i]!;
    let m = 0;
    let digits = 0;
    let scale = 1;
    for (; p < e; p++) {
      const c = b[p]! - 48;
      if (c < 0 || c > 9) break;
      m = m * 10 + c;
      digits++;
    }
    if (p < e && b[p] === 46) {
      for (p++; p < e; p++) {
        const c = b[p]! - 48;
        if (c < 0 || c > 9) return NaN;
        m = m * 10 + c;
        scale *= 10;
        digits++;
      }
    }
    if (p !== e || digits === 0 || digits > 15) return NaN;
    return scale === 1 ? m : m / scale;
  }

  /** True when field i is all ASCII digits (at least one). */
  isDigits(i: number): boolean {
    if (this.fields !== null) return i < this.fields.length && /^\d+$/.test(this.fields[i]!);
    if (!this.has(i)) return false;
    const b = this.buf;
    const e = this.end[i]!;
    let p = this.start[i]!;
    if (p === e) return false;
    for (; p < e; p++) if (b[p]! < 48 || b[p]! > 57) return false;
    return true;
  }

  /** True when field i is exactly `str`, whose bytes (ASCII) are `k` (from `asciiBytes`). */
  equals(i: number, k: Uint8Array, str: string): boolean {
    if (this.fields !== null) return this.fields[i] === str;
    if (!this.has(i)) return false;
    const s = this.start[i]!;
    if (this.end[i]! - s !== k.length) return false;
    const b = this.buf;
    for (let j = 0; j < k.length; j++) if (b[s + j] !== k[j]) return false;
    return true;
  }

  /**
   * For a quote-free record: true when field i holds exactly the bytes `k` (used to skip decoding a
   * field that repeats from row to row). Always false for a record parsed from quotes.
   */
  sameBytes(i: number, k: Uint8Array | null): boolean {
    if (k === null || this.fields !== null || !this.has(i)) return false;
    const s = this.start[i]!;
    if (this.end[i]! - s !== k.length) return false;
    const b = this.buf;
    for (let j = 0; j < k.length; j++) if (b[s + j] !== k[j]) return false;
    return true;
  }

  /** A copy of field i's bytes (quote-free records), or null. */
  copyBytes(i: number): Uint8Array | null {
    if (this.fields !== null || !this.has(i)) return null;
    return Uint8Array.prototype.slice.call(this.buf, this.start[i]!, this.end[i]!);
  }

  /** All fields as strings (for a header line, or an error message). */
  all(): string[] {
    if (this.fields !== null) return this.fields;
    const out: string[] = [];
    for (let i = 0; i < this.count; i++) out.push(this.buf.toString('utf8', this.start[i], this.end[i]));
    return out;
  }
}

/**
 * Calls `fn` for each record of a CSV file, exactly the records `csvRecordBatches` yields (same
 * line numbers, same blank-line skipping, same quote handling through csv-parse, same errors), but
 * read from the raw bytes: a record without quotes is split on comma bytes in place (a comma or
 * quote byte never occurs inside a multi-byte UTF-8 character) and nothing is decoded unless `fn`
 * asks. Quotes are found with one native search per chunk rather than a look at every byte.
 * The row object is reused: copy what must outlive the call.
 */
export async function forEachCsvRow(src: ByteSource, fn: (row: CsvRow) => void): Promise<void> {
  const row = new CsvRow();
  let pending: string | null = null;
  let pendingStart = 0;
  let quotes = 0;
  for await (const batch of lineSpans(src)) {
    const buf = batch.buf;
    let nextQuote = -1; // position of the next quote byte at or after the current line, once known
    for (let k = 0; k < batch.count; k++) {
      const ls = batch.start[k]!;
      const le = batch.end[k]!;
      const lineNo = batch.firstLine + k;
      if (pending === null) {
        if (le === ls) continue;
        if (nextQuote < ls) {
          nextQuote = buf.indexOf(34, ls);
          if (nextQuote < 0) nextQuote = buf.length;
        }
        if (nextQuote >= le) {
          row.reset(buf, ls, le, lineNo);
          fn(row);
          continue;
        }
        const line = buf.toString('utf8', ls, le);
        pending = line;
        pendingStart = lineNo;
        quotes = countQuotes(line);
      } else {
        const line = buf.toString('utf8', ls, le);
        pending += `\n${line}`;
        quotes += countQuotes(line);
      }
      if (quotes % 2 === 0) {
        row.setFields(parseOne(pending, pendingStart), pendingStart);
        pending = null;
        fn(row);
      }
    }
  }
  if (pending !== null) {
    throw new IngestError('malformed', 'a quoted CSV field is never closed', pendingStart);
  }
}

/** `row.text(i)` through a `SpanText`: a field that repeats from row to row is decoded once. */
export class FieldText {
  private cache = new SpanText();
  get(row: CsvRow, i: number): string | undefined {
    if (row.fields !== null || !row.has(i)) return row.text(i);
    return this.cache.get(row.buf, row.start[i]!, row.end[i]!);
  }
}

/** The bytes of an ASCII name, for `CsvRow.equals`. */
export function asciiBytes(name: string): Uint8Array {
  return Buffer.from(name, 'latin1');
}

/** Record by record (see `csvRecordBatches`). */
export async function* csvRecords(src: ByteSource): AsyncGenerator<CsvRecord> {
  for await (const batch of csvRecordBatches(src)) yield* batch;
}

function countQuotes(s: string): number {
  let n = 0;
  let i = s.indexOf('"');
  while (i >= 0) {
    n++;
    i = s.indexOf('"', i + 1);
  }
  return n;
}

function parseOne(text: string, line: number): string[] {
  let rows: string[][];
  try {
    rows = parseCsv(text, { relax_column_count: true, relax_quotes: false }) as string[][];
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    throw new IngestError('malformed', `bad CSV record: ${msg}`, line);
  }
  if (rows.length !== 1) throw new IngestError('malformed', 'bad CSV record (quotes do not pair up)', line);
  return rows[0]!;
}

/** Splits a small in-memory CSV text into records (for summary files read whole). */
export function csvText(text: string): CsvRecord[] {
  let rows: string[][];
  try {
    rows = parseCsv(text, { relax_column_count: true, skip_empty_lines: true, bom: true }) as string[][];
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const m = /line (\d+)/i.exec(msg);
    throw new IngestError('malformed', `bad CSV: ${msg}`, m ? Number(m[1]) : undefined);
  }
  // csv-parse does not report line numbers per record without `info`; approximate with the index
  return rows.map((fields, i) => ({ fields, line: i + 1 }));
}
