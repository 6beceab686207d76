/**
 * Typed errors of bad input. Every parser reports bad input through `IngestError`, never through a bare
 * exception, so the CLI can print one line and the API can answer with a 4xx naming the file; analysis
 * raises it too for inputs that cannot be combined (profiles of different sample types). Declared here,
 * below both ingest and analysis, so neither imports the other for it.
 */
export type IngestErrorCode =
  | 'empty'
  | 'corrupt-gzip'
  | 'too-large'
  | 'not-a-profile'
  | 'invalid-reference'
  | 'value-count-mismatch'
  | 'value-out-of-range'
  | 'concatenated'
  | 'unsupported'
  | 'no-run'
  | 'malformed';

export class IngestError extends Error {
  readonly code: IngestErrorCode;
  /** 1-based line number in the input, when the problem has one. */
  readonly line: number | undefined;
  constructor(code: IngestErrorCode, message: string, line?: number) {
    super(message);
    this.name = 'IngestError';
    this.code = code;
    this.line = line;
  }
}
