/** Typed ingest errors (declared in model/errors.ts, beneath ingest and analysis alike). */
import type { IngestError } from '../model/errors.ts';

export { IngestError, type IngestErrorCode } from '../model/errors.ts';

/** One human line: "FILE: problem (line N)". */
export function describeIngestError(e: IngestError, fileName: string): string {
  const where = e.line !== undefined ? ` (line ${e.line})` : '';
  return `${fileName}: ${e.message}${where}`;
}
