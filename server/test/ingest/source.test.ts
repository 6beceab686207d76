import { describe, expect, it } from 'vitest';
import { IngestError } from '../../src/ingest/errors.ts';
import { type ByteSource, lineBatches, lineSpans, lines } from '../../src/ingest/source.ts';

/** A source that hands out `bytes` in pieces of the given sizes (the last size repeats). */
function chunked(bytes: Buffer, sizes: number[]): ByteSource {
  return (async function* () {
    let pos = 0;
    let k = 0;
    while (pos < bytes.length) {
      const n = sizes[Math.min(k++, sizes.length - 1)]!;
      // a fresh copy each time, and the previous one scribbled over, as a buffer-reusing source would
      yield Buffer.from(bytes.subarray(pos, pos + n));
      pos += n;
    }
  })();
}

async function spanLines(src: ByteSource, max?: number): Promise<{ text: string; line: number }[]> {
  const out: { text: string; line: number }[] = [];
  for await (const b of lineSpans(src, max)) {
    for (let i = 0; i < b.count; i++)
      out.push({ text: b.buf.toString('utf8', b.start[i], b.end[i]), line: b.firstLine + i });
  }
  return out;
}

async function stringLines(src: ByteSource): Promise<string[]> {
  const out: string[] = [];
  for await (const l of lines(src)) out.push(l);
  return out;
}

async function batchLines(src: ByteSource): Promise<string[]> {
  const out: string[] = [];
  for await (const b of lineBatches(src)) out.push(...b);
  return out;
}

/** What the old TextDecoder-based splitter returned (the reference behaviour). */
function reference(bytes: Buffer): string[] {
  const text = new TextDecoder('utf-8').decode(bytes);
  const out = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (text.endsWith('\n') || text === '') out.pop();
  return out;
}

const CASES: Record<string, string> = {
  LF: 'a,b\n1,2\n3,4\n',
  CRLF: 'a,b\r\n1,2\r\n3,4\r\n',
  'no trailing newline': 'a\nb\nlast',
  'no trailing newline, CR at the end': 'a\r\nb\r',
  'blank lines': '\n\nx\n\r\n\ny',
  'lone CR inside a line': 'a\rb\nc\r\r\nd',
  'BOM then text': '\uFEFFhead\nrow\n',
  'BOM only': '\uFEFF',
  empty: '',
  'multi-byte UTF-8': 'Ünïcødé → 漢字 🙂\nsecond 🙂🙂\r\nthird é',
};

describe('lineSpans / lines / lineBatches', () => {
  for (const [name, text] of Object.entries(CASES)) {
    const bytes = Buffer.from(text, 'utf8');
    it(`${name}: same lines whole and cut at every chunk size`, async () => {
      const want = reference(bytes);
      for (const size of [1, 2, 3, 5, 7, 64, 1 << 20]) {
        const got = await spanLines(chunked(bytes, [size]));
        expect(
          got.map((g) => g.text),
          `chunk ${size}`,
        ).toEqual(want);
        expect(got.map((g) => g.line)).toEqual(want.map((_, i) => i + 1));
        expect(await stringLines(chunked(bytes, [size])), `lines(), chunk ${size}`).toEqual(want);
        expect(await batchLines(chunked(bytes, [size])), `lineBatches(), chunk ${size}`).toEqual(want);
      }
    });
  }

  it('keeps a multi-byte character cut by a chunk boundary whole', async () => {
    const bytes = Buffer.from('x€y\nz€\n', 'utf8'); // € is 3 bytes: cut it after its first and second byte
    for (const first of [2, 3]) {
      expect((await spanLines(chunked(bytes, [first, 1, 100]))).map((l) => l.text)).toEqual(['x€y', 'z€']);
      expect(await stringLines(chunked(bytes, [first, 1, 100]))).toEqual(['x€y', 'z€']);
    }
  });

  it('joins lines that span several chunks, with line numbers', async () => {
    const long = 'L'.repeat(5000);
    const bytes = Buffer.from(`h\n${long}\r\nshort\n${long}`, 'utf8');
    const got = await spanLines(chunked(bytes, [3, 999]));
    expect(got).toEqual([
      { text: 'h', line: 1 },
      { text: long, line: 2 },
      { text: 'short', line: 3 },
      { text: long, line: 4 },
    ]);
  });

  it('handles many lines per chunk (batch arrays grow)', async () => {
    const rows = Array.from({ length: 50_000 }, (_, i) => `${i},${i * 2}`);
    const bytes = Buffer.from(`${rows.join('\n')}\n`);
    const got = await spanLines(chunked(bytes, [1 << 20]));
    expect(got.length).toBe(rows.length);
    expect(got[49_999]).toEqual({ text: '49999,99998', line: 50_000 });
    expect(await batchLines(chunked(bytes, [4096]))).toEqual(rows);
  });

  it('refuses an over-long line as too-large, wherever it ends', async () => {
    const long = 'x'.repeat(100);
    for (const text of [`ok\n${long}\nok\n`, `ok\n${long}`, `${long}\n`]) {
      for (const size of [7, 1000]) {
        const err = await spanLines(chunked(Buffer.from(text), [size]), 64).catch((e: unknown) => e);
        expect(err, `${JSON.stringify(text.slice(0, 5))} / ${size}`).toBeInstanceOf(IngestError);
        expect((err as IngestError).code).toBe('too-large');
      }
    }
    // exactly at the limit is fine (the terminator does not count)
    expect((await spanLines(chunked(Buffer.from(`${'y'.repeat(64)}\r\n`), [5]), 64)).length).toBe(1);
    const viaLines = await stringLines(chunked(Buffer.from(`a\n${'z'.repeat(200)}`), [10])).catch((e: unknown) => e);
    expect(viaLines).toEqual(['a', 'z'.repeat(200)]); // the default limit is 16 MiB
  });
});
