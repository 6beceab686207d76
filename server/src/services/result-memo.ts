/**
 * What one entry costs beyond its bytes: the Map slot, the Buffer object and its ArrayBuffer's
 * bookkeeping (measured with --expose-gc on Node 24: ~200 bytes for small entries; rounded up).
 */
const ENTRY_OVERHEAD = 256;

/**
 * The most recently served derived results, in memory, by exact key (comparison, revision, model
 * version, request). A key holds the comparison's revision, so an entry can never be stale: after a
 * change the key itself changes. Each replica keeps its own; the shared store cache stays the
 * source for every replica.
 *
 * Bounded by the memory it really holds (RESULT_MEMO_MAX_BYTES): each entry counts its bytes, its key
 * (two bytes a character) and a fixed overhead, and a value that is a view into a larger allocation
 * (a slice of Node's Buffer pool, a chunk of a worker's message) is copied into its own, so the
 * allocation behind it is not kept alive unseen.
 */
export class ResultMemo {
  private readonly entries = new Map<string, Buffer>();
  private held = 0;

  constructor(readonly maxBytes = 64 * 1024 * 1024) {}

  /** Bytes the entries hold (values, keys, overhead). */
  get bytes(): number {
    return this.held;
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Buffer | undefined {
    const v = this.entries.get(key);
    if (v) {
      this.entries.delete(key);
      this.entries.set(key, v);
    }
    return v;
  }

  set(key: string, value: Buffer): void {
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.held -= cost(key, old);
    }
    if (cost(key, value) > this.maxBytes / 4) return;
    const own = value.byteLength === value.buffer.byteLength ? value : ownCopy(value);
    this.entries.set(key, own);
    this.held += cost(key, own);
    for (const [k, v] of this.entries) {
      if (this.held <= this.maxBytes) break;
      this.entries.delete(k);
      this.held -= cost(k, v);
    }
  }
}

function cost(key: string, value: Buffer): number {
  return value.byteLength + key.length * 2 + ENTRY_OVERHEAD;
}

/** A copy in an allocation of its own (Buffer.from would take small ones from the shared pool again). */
function ownCopy(value: Buffer): Buffer {
  const own = Buffer.allocUnsafeSlow(value.byteLength);
  value.copy(own);
  return own;
}
