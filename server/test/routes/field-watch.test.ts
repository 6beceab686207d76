import { describe, expect, it } from 'vitest';
import { type FieldTooLarge, FieldWatch, multipartBoundary } from '../../src/routes/field-watch.ts';

const B = 'XyZ123boundary';

function body(parts: { name: string; filename?: string; value: Buffer }[]): Buffer {
  const out: Buffer[] = [Buffer.from('preamble\r\n')];
  for (const p of parts) {
    out.push(
      Buffer.from(
        `--${B}\r\nContent-Disposition: form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}\r\n\r\n`,
      ),
      p.value,
      Buffer.from('\r\n'),
    );
  }
  out.push(Buffer.from(`--${B}--\r\nepilogue`));
  return Buffer.concat(out);
}

/** Feeds `data` in chunks of the given sizes (cycled); the field name it tripped on, or null. */
async function watch(data: Buffer, limit: number, sizes: number[]): Promise<string | null> {
  const w = new FieldWatch(B, limit);
  let tripped: string | null = null;
  w.tripped.catch((e: FieldTooLarge) => {
    tripped = e.field;
  });
  for (let off = 0, i = 0; off < data.length; i++) {
    const n = sizes[i % sizes.length]!;
    w.observe(data.subarray(off, off + n));
    off += n;
  }
  await new Promise((r) => setImmediate(r));
  return tripped;
}

describe('the multipart field watch', () => {
  const big = Buffer.alloc(5000, 'a');
  const withDelimiterLookalikes = Buffer.from(`a\r\n--${B.slice(0, 5)} and \r\n-- not it `.repeat(20));

  it('says nothing of files of any size nor of fields within the bound, however the body is cut', async () => {
    const data = body([
      { name: 'file', filename: 'cpu.pb.gz', value: big },
      { name: 'note', value: Buffer.alloc(100, 'n') },
      { name: 'odd', value: withDelimiterLookalikes },
      { name: 'file', filename: 'x', value: big },
    ]);
    for (const sizes of [[1], [7, 3], [64], [1000], [data.length]])
      expect(await watch(data, withDelimiterLookalikes.length, sizes)).toBeNull();
  });

  it('names the text field that passes the bound, at the byte that passes it', async () => {
    const data = body([
      { name: 'file', filename: 'a.txt', value: big },
      { name: 'comment', value: big },
    ]);
    for (const sizes of [[1], [13], [512], [data.length]]) expect(await watch(data, 4999, sizes)).toBe('comment');
    expect(await watch(data, 5000, [64])).toBeNull();
    // Tripped before the field's end arrives: its first 5,000 bytes suffice for a bound of 4,900.
    const head = data.subarray(0, data.indexOf(big, data.indexOf('comment')) + 5000);
    expect(await watch(head, 4900, [97])).toBe('comment');
  });

  it('reads the boundary from the content type', () => {
    expect(multipartBoundary(`multipart/form-data; boundary=${B}`)).toBe(B);
    expect(multipartBoundary('multipart/form-data; boundary="a b"; x=1')).toBe('a b');
    expect(multipartBoundary('application/json')).toBeNull();
  });
});
