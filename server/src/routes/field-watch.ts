/** Bytes of part headers the watch reads before leaving the part to the parser's own bound. */
const MAX_PART_HEADER_BYTES = 16 * 1024;

/**
 * Watches a multipart body as it arrives, beside the parser, for a text field (a part without a file
 * name) growing past `maxFieldBytes`. The parser only says a field was too long once the whole field
 * has gone through it; the watch says so as the bytes past the bound arrive (give or take a boundary's
 * length, which it keeps back until it knows whether they start one), so the request can be
 * answered (413 naming the field) and its connection closed without reading the rest.
 */
export class FieldWatch {
  private readonly delimiter: Buffer;
  /** Bytes not yet decided on: a possible start of the delimiter, or part headers still arriving. */
  private rest: Buffer = Buffer.from('\r\n');
  private state: 'preamble' | 'headers' | 'body' | 'done' = 'preamble';
  /** The text field being read (its name), or null in a file part. */
  private field: string | null = null;
  private size = 0;
  private fail: ((name: string) => void) | null = null;
  /** Rejects with the field's name when a text field passes the bound. */
  readonly tripped: Promise<never>;

  constructor(
    boundary: string,
    private readonly maxFieldBytes: number,
  ) {
    // The first boundary has no line break before it: `rest` starts with one for it.
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
    this.tripped = new Promise<never>((_, reject) => {
      this.fail = (name) => reject(new FieldTooLarge(name));
    });
    this.tripped.catch(() => undefined);
  }

  /** Takes the next chunk of the body (a 'data' listener beside the parser's pipe). */
  observe = (chunk: Buffer): void => {
    if (this.state === 'done') return;
    const data = this.rest.length > 0 ? Buffer.concat([this.rest, chunk]) : chunk;
    this.rest = Buffer.alloc(0);
    let pos = 0;
    while (!this.finished) {
      if (this.state === 'headers') {
        if (data.length - pos >= 2 && data[pos] === 0x2d && data[pos + 1] === 0x2d) {
          this.state = 'done'; // the closing delimiter
          return;
        }
        const end = data.indexOf('\r\n\r\n', pos, 'latin1');
        if (end < 0) {
          if (data.length - pos > MAX_PART_HEADER_BYTES) this.state = 'done';
          else this.rest = Buffer.from(data.subarray(pos));
          return;
        }
        this.startPart(data.toString('latin1', pos, end));
        pos = end + 4;
        this.state = 'body';
        continue;
      }
      const i = data.indexOf(this.delimiter, pos);
      if (i < 0) {
        // Keep what could be the start of a delimiter split across chunks.
        const keep = Math.min(this.delimiter.length - 1, data.length - pos);
        this.count(data.length - keep - pos);
        this.rest = Buffer.from(data.subarray(data.length - keep));
        return;
      }
      this.count(i - pos);
      pos = i + this.delimiter.length;
      this.state = 'headers';
    }
  };

  private get finished(): boolean {
    return this.state === 'done';
  }

  private startPart(head: string): void {
    const disposition = /content-disposition:([^\r\n]*)/i.exec(head)?.[1] ?? '';
    const file = /\bfilename\*?=/i.test(disposition);
    this.field = file
      ? null
      : (/\bname="([^"]*)"/i.exec(disposition)?.[1] ?? /\bname=([^;\s]*)/i.exec(disposition)?.[1] ?? '');
    this.size = 0;
  }

  private count(n: number): void {
    if (this.state !== 'body' || this.field === null || n <= 0) return;
    this.size += n;
    if (this.size > this.maxFieldBytes) {
      this.state = 'done';
      this.fail?.(this.field);
    }
  }
}

/** A text field past MAX_FORM_FIELD_BYTES, by name. */
export class FieldTooLarge extends Error {
  constructor(readonly field: string) {
    super(`form field ${field} is too large`);
  }
}

/** The boundary of a multipart/form-data content type, or null. */
export function multipartBoundary(contentType: string | undefined): string | null {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  return m ? (m[1] ?? m[2] ?? null) : null;
}
