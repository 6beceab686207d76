import type { Frame, Label, Profile } from './profile.ts';

/**
 * The compact derived form of a profile: the model with samples of the same stack and label set
 * summed into one (every view — flat, cum, call tree, diff, filters — is a sum over samples, so it
 * is unchanged), and a binary encoding of it that decodes without parsing. A big profile is parsed
 * once at upload; later views, in any worker or replica, read this form from the store's cache.
 * `stats` keeps the source's own counts (numSamples is the file's, not the aggregate's).
 */

/**
 * Sums samples that share a stack and a label set. Returns the same profile when nothing merges.
 * The first sample of each (stack, label set) keeps its place, in the order of first appearance.
 */
export function aggregateSamples(p: Profile): Profile {
  const n = p.sampleStack.length;
  const stacks = p.sampleStack;
  const sets = p.sampleLabelSet;
  // slotOf[s] = the aggregate sample s is added to. (stack, label set) pairs are found through an
  // open-addressing table of typed arrays, so a profile of millions of samples allocates no objects.
  const slotOf = new Int32Array(n);
  let size = 1024;
  while (size < n * 2) size *= 2;
  const mask = size - 1;
  const table = new Int32Array(size);
  let firsts = new Int32Array(Math.min(n, 1024));
  let k = 0;
  for (let s = 0; s < n; s++) {
    const st = stacks[s]!;
    const ls = sets[s]!;
    let h = Math.imul(st ^ Math.imul(ls, 0x9e3779b1), 0x85ebca6b);
    h ^= h >>> 13;
    let slot = h & mask;
    for (;;) {
      const x = table[slot]!;
      if (x === 0) {
        if (k === firsts.length) {
          const g = new Int32Array(Math.min(n, firsts.length * 2));
          g.set(firsts);
          firsts = g;
        }
        firsts[k] = s;
        table[slot] = ++k;
        slotOf[s] = k - 1;
        break;
      }
      const f = firsts[x - 1]!;
      if (stacks[f] === st && sets[f] === ls) {
        slotOf[s] = x - 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
  }
  if (k === n) return p;
  const sampleStack = new Uint32Array(k);
  const sampleLabelSet = new Uint32Array(k);
  for (let i = 0; i < k; i++) {
    sampleStack[i] = stacks[firsts[i]!]!;
    sampleLabelSet[i] = sets[firsts[i]!]!;
  }
  const values = p.values.map((col) => {
    const out = new Float64Array(k);
    for (let s = 0; s < n; s++) {
      const i = slotOf[s]!;
      out[i] = out[i]! + col[s]!;
    }
    return out;
  });
  return { ...p, sampleStack, sampleLabelSet, values };
}

// "SDP2": frames may carry a full name (an "SDP1" entry, from before pprof's short names, is stale)
const MAGIC = 0x32504453;

type Header = Omit<Profile, 'frames' | 'stackOffsets' | 'stackFrames' | 'sampleStack' | 'values' | 'sampleLabelSet'> & {
  /**
   * name, file, line, then — when any is present — the mapping's file (null: none), the stand-in marker,
   * the function's start line and the inlined mark (null or 0 for absent), and the full name when the
   * frame has one.
   */
  frames: (
    | [string, string, number]
    | [string, string, number, string | null, Frame['standIn'] | null, number, 0 | 1]
    | [string, string, number, string | null, Frame['standIn'] | null, number, 0 | 1, string]
  )[];
  lengths: { stackOffsets: number; stackFrames: number; samples: number };
};

/** Encodes a profile: a JSON header (metadata, frames, label sets) then its typed arrays. */
export function encodeProfile(p: Profile): Buffer {
  const { frames, stackOffsets, stackFrames, sampleStack, values, sampleLabelSet, ...rest } = p;
  const header: Header = {
    ...rest,
    frames: frames.map((f) =>
      f.fullName !== undefined
        ? [
            f.name,
            f.file,
            f.line,
            f.mapping ?? null,
            f.standIn ?? null,
            f.startLine ?? 0,
            f.inlined ? 1 : 0,
            f.fullName,
          ]
        : f.mapping === undefined && f.standIn === undefined && f.startLine === undefined && !f.inlined
          ? [f.name, f.file, f.line]
          : [f.name, f.file, f.line, f.mapping ?? null, f.standIn ?? null, f.startLine ?? 0, f.inlined ? 1 : 0],
    ),
    lengths: { stackOffsets: stackOffsets.length, stackFrames: stackFrames.length, samples: sampleStack.length },
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const pad = (8 - ((8 + json.length) % 8)) % 8;
  const head = Buffer.alloc(8);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(json.length, 4);
  const parts: Uint8Array[] = [head, json, Buffer.alloc(pad)];
  // Float64 columns first, so every array starts aligned to its element size.
  for (const v of values) parts.push(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
  for (const a of [stackOffsets, stackFrames, sampleStack, sampleLabelSet])
    parts.push(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  return Buffer.concat(parts);
}

/** Decodes `encodeProfile`'s output; null when the bytes are not that encoding (a stale or foreign entry). */
export function decodeProfile(buf: Uint8Array): Profile | null {
  if (buf.byteLength < 8) return null;
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (view.readUInt32LE(0) !== MAGIC) return null;
  const jsonLen = view.readUInt32LE(4);
  const header = JSON.parse(view.subarray(8, 8 + jsonLen).toString('utf8')) as Header;
  let off = 8 + jsonLen;
  off += (8 - (off % 8)) % 8;
  if (off > view.length) return null;
  // Views into the buffer where it is aligned for the element size (a big profile then needs no
  // second copy of its arrays), copies where it is not.
  const take = <T>(make: (b: ArrayBuffer, at: number, n: number) => T, n: number, size: number): T | null => {
    if (off + n * size > view.length) return null;
    const at = view.byteOffset + off;
    off += n * size;
    if (at % size === 0) return make(view.buffer as ArrayBuffer, at, n);
    const copy = new ArrayBuffer(n * size);
    new Uint8Array(copy).set(view.subarray(off - n * size, off));
    return make(copy, 0, n);
  };
  const { lengths, frames, ...rest } = header;
  const f64 = (b: ArrayBuffer, at: number, n: number) => new Float64Array(b, at, n);
  const u32 = (b: ArrayBuffer, at: number, n: number) => new Uint32Array(b, at, n);
  const values = header.sampleTypes.map(() => take(f64, lengths.samples, 8));
  const stackOffsets = take(u32, lengths.stackOffsets, 4);
  const stackFrames = take(u32, lengths.stackFrames, 4);
  const sampleStack = take(u32, lengths.samples, 4);
  const sampleLabelSet = take(u32, lengths.samples, 4);
  if (off !== view.length || !stackOffsets || !stackFrames || !sampleStack || !sampleLabelSet) return null;
  if (values.some((v) => v === null)) return null;
  return {
    ...(rest as Omit<Header, 'lengths' | 'frames'>),
    labelSets: rest.labelSets as Label[][],
    frames: frames.map(([name, file, line, mapping, standIn, startLine, inlined, fullName]): Frame => {
      const f: Frame = { name, file, line };
      if (fullName !== undefined) f.fullName = fullName;
      if (mapping !== undefined && mapping !== null) f.mapping = mapping;
      if (standIn !== undefined && standIn !== null) f.standIn = standIn;
      if (startLine) f.startLine = startLine;
      if (inlined) f.inlined = true;
      return f;
    }),
    stackOffsets,
    stackFrames,
    sampleStack,
    values: values as Float64Array[],
    sampleLabelSet,
  };
}
