import type { Frame, Label, Profile } from './profile.ts';

/**
 * The compact derived form of a profile: the model with samples of the same stack and label set
 * summed into one (every view — flat, cum, call tree, diff, filters — is a sum over samples, so it
 * is unchanged), and a binary encoding of it that decodes without parsing. A big profile is parsed
 * once at upload; later views, in any worker or replica, read this form from the store's cache.
 * `stats` keeps the source's own counts (numSamples is the file's, not the aggregate's).
 */

/** Sums samples that share a stack and a label set. Returns the same profile when nothing merges. */
export function aggregateSamples(p: Profile): Profile {
  const n = p.sampleStack.length;
  const numLabelSets = p.labelSets.length;
  const slot = new Map<number, number>();
  const first = new Int32Array(n);
  let k = 0;
  for (let s = 0; s < n; s++) {
    const key = p.sampleStack[s]! * numLabelSets + p.sampleLabelSet[s]!;
    let i = slot.get(key);
    if (i === undefined) {
      i = k++;
      slot.set(key, i);
    }
    first[s] = i;
  }
  if (k === n) return p;
  const sampleStack = new Uint32Array(k);
  const sampleLabelSet = new Uint32Array(k);
  const values = p.values.map(() => new Float64Array(k));
  for (let s = 0; s < n; s++) {
    const i = first[s]!;
    sampleStack[i] = p.sampleStack[s]!;
    sampleLabelSet[i] = p.sampleLabelSet[s]!;
    for (let t = 0; t < values.length; t++) values[t]![i] = values[t]![i]! + p.values[t]![s]!;
  }
  return { ...p, sampleStack, sampleLabelSet, values };
}

const MAGIC = 0x31504453; // "SDP1"

type Header = Omit<Profile, 'frames' | 'stackOffsets' | 'stackFrames' | 'sampleStack' | 'values' | 'sampleLabelSet'> & {
  frames: [string, string, number][];
  lengths: { stackOffsets: number; stackFrames: number; samples: number };
};

/** Encodes a profile: a JSON header (metadata, frames, label sets) then its typed arrays. */
export function encodeProfile(p: Profile): Buffer {
  const { frames, stackOffsets, stackFrames, sampleStack, values, sampleLabelSet, ...rest } = p;
  const header: Header = {
    ...rest,
    frames: frames.map((f) => [f.name, f.file, f.line]),
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
  // Copies: the arrays own aligned memory whatever the source buffer's alignment.
  const take = <T>(make: (b: ArrayBuffer) => T, n: number, size: number): T => {
    const bytes = view.subarray(off, off + n * size);
    off += n * size;
    const copy = new ArrayBuffer(n * size);
    new Uint8Array(copy).set(bytes);
    return make(copy);
  };
  const { lengths, frames, ...rest } = header;
  const values = header.sampleTypes.map(() => take((b) => new Float64Array(b), lengths.samples, 8));
  const stackOffsets = take((b) => new Uint32Array(b), lengths.stackOffsets, 4);
  const stackFrames = take((b) => new Uint32Array(b), lengths.stackFrames, 4);
  const sampleStack = take((b) => new Uint32Array(b), lengths.samples, 4);
  const sampleLabelSet = take((b) => new Uint32Array(b), lengths.samples, 4);
  if (off !== view.length) return null;
  return {
    ...(rest as Omit<Header, 'lengths' | 'frames'>),
    labelSets: rest.labelSets as Label[][],
    frames: frames.map(([name, file, line]): Frame => ({ name, file, line })),
    stackOffsets,
    stackFrames,
    sampleStack,
    values,
    sampleLabelSet,
  };
}
