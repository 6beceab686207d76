import { parse as parseCsv } from 'csv-parse/sync';
import { IngestError } from '../errors.ts';
import { lineBatches, type ByteSource } from '../source.ts';

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
        pending += '\n' + line;
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
