import type { Frame, Label, Profile } from '../../model/profile.ts';

/**
 * Writes a profile as pprof's profile.proto (uncompressed; gzip it for a `.pb.gz`), so that
 * `go tool pprof` reads what stagediff computed on (a stage's profiles merged, a diff of two stages).
 *
 * What the model keeps is what pprof's reports read: each location's lines (inlined frames first,
 * as the model keeps them together), its functions' names, files and start lines, the mapping's
 * file, the samples' values and labels, the sample types, period, time and duration, comments.
 * Addresses are not kept, so every location has address 0 and pprof tells locations apart by their
 * lines. Mappings are declared symbolized (pprof needs no binary). drop_frames and keep_frames were
 * applied when the profile was read, so they are not written again.
 */
export function encodePprof(p: Profile, opts: { defaultSampleType?: string } = {}): Uint8Array {
  const strings = new Map<string, number>([['', 0]]);
  const str = (s: string): number => {
    let i = strings.get(s);
    if (i === undefined) {
      i = strings.size;
      strings.set(s, i);
    }
    return i;
  };
  const out = new Writer(1 << 16);

  for (const t of p.sampleTypes) out.message(1, (m) => m.int(1, str(t.type)).int(2, str(t.unit)));

  // Mappings by file, functions by (name, file, start line), locations by content.
  const mappings = new Map<string, number>();
  const mappingOf = (f: Frame): number => {
    if (!f.mapping) return 0;
    let id = mappings.get(f.mapping);
    if (id === undefined) {
      id = mappings.size + 1;
      mappings.set(f.mapping, id);
    }
    return id;
  };
  const functions = new Map<string, number>();
  const fnRecords: [id: number, name: number, file: number, start: number][] = [];
  const functionOf = (f: Frame): number => {
    // the name as the source wrote it: pprof shortens it again on reading (system_name repeats it)
    const name = f.standIn === 'no-name' ? '' : (f.fullName ?? f.name);
    const key = `${name}\0${f.file}\0${f.startLine ?? 0}`;
    let id = functions.get(key);
    if (id === undefined) {
      id = functions.size + 1;
      functions.set(key, id);
      fnRecords.push([id, str(name), str(f.file), f.startLine ?? 0]);
    }
    return id;
  };
  const locations = new Map<string, number>();
  const locRecords: [id: number, mapping: number, lines: [fn: number, line: number][]][] = [];
  /** A location of frames first..last (consecutive frame ids, innermost first). */
  const locationOf = (first: number, last: number): number => {
    const head = p.frames[first]!;
    const mapping = mappingOf(head);
    const lines: [number, number][] = [];
    if (head.standIn !== 'no-function')
      for (let f = first; f <= last; f++) lines.push([functionOf(p.frames[f]!), p.frames[f]!.line]);
    const key = `${mapping}|${lines.map((l) => `${l[0]}:${l[1]}`).join(',')}`;
    let id = locations.get(key);
    if (id === undefined) {
      id = locations.size + 1;
      locations.set(key, id);
      locRecords.push([id, mapping, lines]);
    }
    return id;
  };

  // Each stack as location ids: a frame marked inlined shares its location with the next frame id
  // when that frame follows it in the stack.
  const stackLocs: number[][] = [];
  for (let s = 0; s + 1 < p.stackOffsets.length; s++) {
    const from = p.stackOffsets[s]!;
    const to = p.stackOffsets[s + 1]!;
    const ids: number[] = [];
    for (let j = from; j < to; ) {
      const first = p.stackFrames[j]!;
      let last = first;
      j++;
      while (j < to && p.frames[last]!.inlined && p.stackFrames[j] === last + 1) {
        last++;
        j++;
      }
      ids.push(locationOf(first, last));
    }
    stackLocs.push(ids);
  }

  const labelSets: Label[][] = p.labelSets;
  for (let s = 0; s < p.sampleStack.length; s++) {
    const locs = stackLocs[p.sampleStack[s]!]!;
    out.message(2, (m) => {
      m.packed(1, locs);
      m.packedSigned(
        2,
        p.values.map((col) => col[s]!),
      );
      for (const l of labelSets[p.sampleLabelSet[s]!]!)
        m.message(3, (lm) => {
          lm.int(1, str(l.key));
          if (l.num !== undefined) {
            lm.signed(3, l.num);
            if (l.numUnit) lm.int(4, str(l.numUnit));
          } else lm.int(2, str(l.str ?? ''));
        });
    });
  }
  for (const [file, id] of mappings)
    out.message(3, (m) => m.int(1, id).int(5, str(file)).bool(7).bool(8).bool(9).bool(10));
  for (const [id, mapping, lines] of locRecords)
    out.message(4, (m) => {
      m.int(1, id);
      if (mapping) m.int(2, mapping);
      for (const [fn, line] of lines) m.message(4, (lm) => lm.int(1, fn).signed(2, line));
    });
  for (const [id, name, file, start] of fnRecords)
    out.message(5, (m) => m.int(1, id).int(2, name).int(3, name).int(4, file).signed(5, start));
  if (p.periodType) {
    const pt = p.periodType;
    out.message(11, (m) => m.int(1, str(pt.type)).int(2, str(pt.unit)));
  }
  out.signed(12, p.period);
  for (const c of p.comments) out.int(13, str(c));
  const def = opts.defaultSampleType ?? p.defaultSampleType;
  if (def) out.int(14, str(def));
  if (p.timeNanosExact !== undefined) out.bigSigned(9, BigInt(p.timeNanosExact));
  else out.signed(9, p.timeNanos);
  out.signed(10, p.durationNanos);
  // The string table last: every string above is in it by now.
  for (const s of strings.keys()) out.bytes(6, Buffer.from(s, 'utf8'));
  return out.finish();
}

/** A protobuf writer: varints, length-delimited fields, packed repeated integers. */
class Writer {
  private buf: Uint8Array;
  private n = 0;

  constructor(size = 64) {
    this.buf = new Uint8Array(size);
  }

  private room(k: number) {
    if (this.n + k <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.n + k) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
  }

  /** A non-negative integer below 2^53, or a negative one (written as 64-bit two's complement). */
  varint(v: number): this {
    if (v < 0) return this.bigVarint(BigInt.asUintN(64, BigInt(Math.round(v))));
    if (!Number.isSafeInteger(v)) return this.bigVarint(BigInt(Math.round(v)));
    this.room(10);
    while (v >= 0x80) {
      this.buf[this.n++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.n++] = v;
    return this;
  }

  private bigVarint(v: bigint): this {
    this.room(10);
    let x = BigInt.asUintN(64, v);
    while (x >= 0x80n) {
      this.buf[this.n++] = Number(x & 0x7fn) | 0x80;
      x >>= 7n;
    }
    this.buf[this.n++] = Number(x);
    return this;
  }

  private tag(field: number, wireType: number) {
    this.varint(field * 8 + wireType);
  }

  /** An unsigned field, left out when zero (proto3's default). */
  int(field: number, v: number): this {
    if (v === 0) return this;
    this.tag(field, 0);
    return this.varint(v);
  }

  /** An int64 field, left out when zero. */
  signed(field: number, v: number): this {
    if (v === 0) return this;
    this.tag(field, 0);
    return this.varint(v);
  }

  bigSigned(field: number, v: bigint): this {
    if (v === 0n) return this;
    this.tag(field, 0);
    return this.bigVarint(v);
  }

  bool(field: number): this {
    this.tag(field, 0);
    return this.varint(1);
  }

  bytes(field: number, b: Uint8Array): this {
    this.tag(field, 2);
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
    return this;
  }

  message(field: number, write: (w: Writer) => void): this {
    const w = new Writer();
    write(w);
    return this.bytes(field, w.finish());
  }

  packed(field: number, vs: readonly number[]): this {
    if (vs.length === 0) return this;
    const w = new Writer();
    for (const v of vs) w.varint(v);
    return this.bytes(field, w.finish());
  }

  /** Packed int64 values: always written, zeros included (a sample has one value per type). */
  packedSigned(field: number, vs: readonly number[]): this {
    const w = new Writer();
    for (const v of vs) w.varint(v);
    return this.bytes(field, w.finish());
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
}
