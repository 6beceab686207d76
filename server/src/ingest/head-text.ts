/**
 * A file's head as UTF-8 text, decoded once. Detection hands the same head (64 KiB) to every
 * importer's detector, and most of them read it as text; decoding it per detector cost more than
 * the rest of detection together (a gzip'd profile's head is binary, and UTF-8 decoding of
 * invalid bytes is slow), so the text is kept per head buffer.
 */
const decoded = new WeakMap<Uint8Array, string>();

/** The first `max` bytes of `head` (all of them by default) decoded as UTF-8, as Buffer#toString does. */
export function headUtf8(head: Buffer, max = Number.POSITIVE_INFINITY): string {
  if (head.length > max) return head.toString('utf8', 0, max);
  let text = decoded.get(head);
  if (text === undefined) {
    text = head.toString('utf8');
    decoded.set(head, text);
  }
  return text;
}
