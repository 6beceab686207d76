import { IngestError } from '../errors.ts';
import type { Frame, Label, Profile, ValueType } from '../../model/profile.ts';
import { type GoRegexp, GoRegexpError, compileGoRegexp } from '../../analysis/go-regexp.ts';
import { Wire, decodeUtf8 } from './wire.ts';
import { exactSums } from '../../model/exact-sums.ts';
import { pprofShortName } from '../../analysis/short-names.ts';

/** Explicit limits on what one profile may hold. The decompressed-size cap bounds the rest. */
export interface DecodeLimits {
  maxSamples: number;
  /** Most frames in one sample's stack once inlined lines are expanded. */
  maxStackDepth: number;
  /** Most frames stored over all distinct stacks. */
  maxStoredFrames: number;
}

export const defaultDecodeLimits: DecodeLimits = {
  maxSamples: 20_000_000,
  maxStackDepth: 100_000,
  maxStoredFrames: 200_000_000,
};

/** Growable Uint32Array. */
class U32 {
  a: Uint32Array;
  n = 0;
  constructor(cap = 1024) {
    this.a = new Uint32Array(cap);
  }
  push(v: number): void {
    if (this.n === this.a.length) this.grow(this.n + 1);
    this.a[this.n++] = v;
  }
  grow(min: number): void {
    const b = new Uint32Array(Math.max(min, this.a.length * 2));
    b.set(this.a);
    this.a = b;
  }
}

/** Growable byte buffer. */
class Bytes {
  a: Uint8Array;
  n = 0;
  constructor(cap = 256) {
    this.a = new Uint8Array(cap);
  }
  private ensure(extra: number): void {
    if (this.n + extra <= this.a.length) return;
    const b = new Uint8Array(Math.max(this.n + extra, this.a.length * 2));
    b.set(this.a.subarray(0, this.n));
    this.a = b;
  }
  append(src: Uint8Array, start: number, end: number): void {
    const len = end - start;
    this.ensure(len);
    // Keys are short: a plain loop beats creating a subarray view for set().
    if (len < 256) {
      const a = this.a;
      let n = this.n;
      for (let i = start; i < end; i++) a[n++] = src[i]!;
    } else this.a.set(src.subarray(start, end), this.n);
    this.n += len;
  }
  /** Appends a length as 4 little-endian bytes (a separator that cannot be confused with data). */
  appendLength(len: number): void {
    this.ensure(4);
    const a = this.a;
    a[this.n] = len & 0xff;
    a[this.n + 1] = (len >>> 8) & 0xff;
    a[this.n + 2] = (len >>> 16) & 0xff;
    a[this.n + 3] = len >>> 24;
    this.n += 4;
  }
}

/**
 * Interns byte strings: each distinct key gets a dense id, in order of first appearance. Keys are
 * hashed and compared as bytes where they lie, so interning a million sample stacks allocates
 * nothing per sample. A key found in `base` (the profile buffer, alive for the whole decode) is kept
 * by reference; keys from elsewhere are copied into a pool.
 */
class ByteInterner {
  /** Open addressing, two ints per slot: [hash, id + 1] (0 = empty), so a probe touches one cache line. */
  private table: Int32Array;
  private mask: number;
  /** Per id: key start, in `base` if ≥ 0, else at -(start + 1) in the pool. */
  private offs: Int32Array = new Int32Array(1024);
  private lens = new U32(1024);
  private pool = new Bytes(1024);
  count = 0;
  /** Whether the last `intern` call added a new key. */
  added = false;

  constructor(
    private readonly base: Uint8Array,
    expected = 1024,
  ) {
    let slots = 1024;
    while (slots < expected * 2) slots *= 2;
    this.table = new Int32Array(slots * 2);
    this.mask = slots - 1;
  }

  intern(src: Uint8Array, start: number, end: number): number {
    const len = end - start;
    // FNV-style, four bytes per multiply (keys are packed varints, a few dozen bytes), then a final mix.
    let h = 0x811c9dc5 ^ len;
    let i = start;
    for (; i + 4 <= end; i += 4)
      h = Math.imul(h ^ (src[i]! | (src[i + 1]! << 8) | (src[i + 2]! << 16) | (src[i + 3]! << 24)), 0x01000193);
    for (; i < end; i++) h = Math.imul(h ^ src[i]!, 0x01000193);
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h |= 0;
    const { table, mask } = this;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const idp1 = table[2 * slot + 1]!;
      if (idp1 === 0) break;
      if (table[2 * slot] === h && this.lens.a[idp1 - 1] === len && this.equals(idp1 - 1, src, start, len)) {
        this.added = false;
        return idp1 - 1;
      }
    }
    const id = this.count++;
    this.lens.push(len);
    if (id === this.offs.length) {
      const o = new Int32Array(id * 2);
      o.set(this.offs);
      this.offs = o;
    }
    if (src === this.base) this.offs[id] = start;
    else {
      this.offs[id] = -(this.pool.n + 1);
      this.pool.append(src, start, end);
    }
    if (this.count * 2 > this.mask + 1) this.rehash();
    this.place(id, h);
    this.added = true;
    return id;
  }

  /** The buffer holding key `id` (see keyStart / keyLength). */
  keyBuffer(id: number): Uint8Array {
    return this.offs[id]! >= 0 ? this.base : this.pool.a;
  }

  keyStart(id: number): number {
    const o = this.offs[id]!;
    return o >= 0 ? o : -o - 1;
  }

  keyLength(id: number): number {
    return this.lens.a[id]!;
  }

  private equals(id: number, src: Uint8Array, start: number, len: number): boolean {
    const o = this.offs[id]!;
    const kb = o >= 0 ? this.base : this.pool.a;
    const ks = o >= 0 ? o : -o - 1;
    if (kb === src && ks === start) return true;
    for (let i = 0; i < len; i++) if (kb[ks + i] !== src[start + i]) return false;
    return true;
  }

  private place(id: number, h: number): void {
    const { table, mask } = this;
    let slot = h & mask;
    while (table[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
    table[2 * slot] = h;
    table[2 * slot + 1] = id + 1;
  }

  private rehash(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2);
    this.mask = old.length - 1;
    for (let slot = 0; slot < old.length; slot += 2)
      if (old[slot + 1] !== 0) this.place(old[slot + 1]! - 1, old[slot]!);
  }
}

/**
 * Maps a table's uint64 ids to their indices. Go numbers ids 1..n, so a dense array answers in one
 * load; sparse or huge ids (legal) fall back to a Map.
 */
class IdIndex {
  private dense: Int32Array | null = null;
  private map: Map<number | string, number> | null = null;

  constructor(ids: (number | string)[], what: string) {
    let max = 0;
    let allSmall = true;
    for (const id of ids) {
      if (typeof id !== 'number' || id > 0x7fffffff) allSmall = false;
      else if (id > max) max = id;
    }
    if (allSmall && max <= ids.length * 4 + 1024) {
      const dense = new Int32Array(max + 1).fill(-1);
      ids.forEach((id, i) => {
        if (id === 0) malformed(`found ${what} with reserved id 0`);
        if (dense[id as number]! >= 0) malformed(`multiple ${what}s with the same id ${id}`);
        dense[id as number] = i;
      });
      this.dense = dense;
    } else {
      const map = new Map<number | string, number>();
      ids.forEach((id, i) => {
        if (id === 0) malformed(`found ${what} with reserved id 0`);
        if (map.has(id)) malformed(`multiple ${what}s with the same id ${id}`);
        map.set(id, i);
      });
      this.map = map;
    }
  }

  /** The dense table (dense[id] = index, -1 = none) when ids allow one, else null. */
  get table(): Int32Array | null {
    return this.dense;
  }

  /** Index of `id`, or -1. */
  get(id: number | string): number {
    const d = this.dense;
    if (d !== null) return typeof id === 'number' && id < d.length ? d[id]! : -1;
    return this.map!.get(id) ?? -1;
  }
}

function malformed(message: string): never {
  throw new IngestError('invalid-reference', message);
}

/**
 * Decodes an uncompressed pprof protobuf into the canonical model.
 *
 * Pass 1 walks the top-level fields, decoding the small tables (strings, functions, locations,
 * mappings) and counting samples, so every per-sample array is allocated once at its final size.
 * Pass 2 walks the samples: each sample's packed location ids are interned by their raw bytes (a
 * million samples usually share far fewer stacks), values and label sets are stored. Last, each
 * distinct stack is expanded into frames, twice over its ids: once to size stackFrames exactly
 * (and check the limits before allocating), once to fill it.
 *
 * Checks follow pprof's own: string 0 must be "", every string index in range, ids unique and
 * non-zero, every referenced location and function present, one value per sample type, and a
 * second time_nanos means two profiles were concatenated.
 */
export function decodeProfile(input: Uint8Array, limits: DecodeLimits = defaultDecodeLimits): Profile {
  if (input.length === 0) throw new IngestError('empty', 'empty profile: the file holds no data');
  // A plain Uint8Array view even when handed a Buffer: the hot loops then see one kind of byte array
  // (the scratch buffers are Uint8Arrays too) and their element loads stay monomorphic.
  const buf =
    input.constructor === Uint8Array ? input : new Uint8Array(input.buffer, input.byteOffset, input.byteLength);

  const strings: string[] = [];
  const sampleTypesRaw: [number, number][] = [];
  let periodTypeRaw: [number, number] | null = null;
  let numSamples = 0;
  const fnIds: (number | string)[] = [];
  const fnName: number[] = [];
  const fnFile: number[] = [];
  const fnSystem: number[] = [];
  const fnStart: number[] = [];
  const locIds: (number | string)[] = [];
  const locMapping: (number | string)[] = [];
  /** Location i has lines lineFn/lineNo[locLineStart[i] .. locLineStart[i + 1]), innermost first. */
  const locLineStart: number[] = [];
  const lineFn: (number | string)[] = [];
  const lineNo: number[] = [];
  const mappingIds: (number | string)[] = [];
  const mappingFile: number[] = [];
  const comments: number[] = [];
  let dropFrames = 0;
  let keepFrames = 0;
  let timeNanos = 0;
  let timeNanosExact = '0';
  let durationNanos = 0;
  let period = 0;
  let defaultSampleType = 0;

  const w = new Wire(buf, 0, buf.length);
  const sub = new Wire(buf, 0, 0);
  const line4 = new Wire(buf, 0, 0);
  // Metadata integers. Timestamps in Unix nanoseconds exceed 2^53 by nature; they are kept to
  // float precision (sub-microsecond), which no view needs more exactly. String indices beyond
  // 2^53 cannot be in range and fail the range check later.
  const int64Field = (wt: number, what: string): number => {
    if (wt !== 0) w.fail(`field ${what} has wire type ${wt}, expected varint`);
    return w.i64();
  };
  const expectLen = (wt: number, what: string): void => {
    if (wt !== 2) w.fail(`field ${what} has wire type ${wt}, expected a length-delimited message`);
  };

  while (!w.done) {
    const tag = w.u32();
    const field = tag >>> 3;
    const wt = tag & 7;
    if (field === 0) w.fail('field number 0');
    switch (field) {
      case 1: {
        expectLen(wt, 'sample_type');
        sampleTypesRaw.push(readValueType(w));
        break;
      }
      case 2: {
        expectLen(wt, 'sample');
        w.pos = w.enter();
        if (++numSamples > limits.maxSamples) {
          throw new IngestError('too-large', `profile has more than ${limits.maxSamples} samples`);
        }
        break;
      }
      case 3: {
        expectLen(wt, 'mapping');
        const [s, e] = w.span();
        sub.reset(buf, s, e);
        let id: number | string = 0;
        let filename = 0;
        while (!sub.done) {
          const t = sub.u32();
          const f = t >>> 3;
          if (f === 1 && (t & 7) === 0) id = sub.id();
          else if (f === 5 && (t & 7) === 0) filename = sub.i64();
          else sub.skip(t & 7);
        }
        mappingIds.push(id);
        mappingFile.push(filename);
        break;
      }
      case 4: {
        expectLen(wt, 'location');
        const [s, e] = w.span();
        sub.reset(buf, s, e);
        let id: number | string = 0;
        let mappingId: number | string = 0;
        locLineStart.push(lineFn.length);
        while (!sub.done) {
          const t = sub.u32();
          const f = t >>> 3;
          const twt = t & 7;
          if (f === 1 && twt === 0) id = sub.id();
          else if (f === 2 && twt === 0) mappingId = sub.id();
          else if (f === 4 && twt === 2) {
            const [ls, le] = sub.span();
            const xw = line4.reset(buf, ls, le);
            let fid: number | string = 0;
            let line = 0;
            while (!xw.done) {
              const lt = xw.u32();
              if (lt >>> 3 === 1 && (lt & 7) === 0) fid = xw.id();
              else if (lt >>> 3 === 2 && (lt & 7) === 0) line = xw.i64();
              else xw.skip(lt & 7);
            }
            lineFn.push(fid);
            lineNo.push(line);
          } else sub.skip(twt);
        }
        locIds.push(id);
        locMapping.push(mappingId);
        break;
      }
      case 5: {
        expectLen(wt, 'function');
        const [s, e] = w.span();
        sub.reset(buf, s, e);
        let id: number | string = 0;
        let name = 0;
        let systemName = 0;
        let filename = 0;
        let startLine = 0;
        while (!sub.done) {
          const t = sub.u32();
          const f = t >>> 3;
          const twt = t & 7;
          if (f === 1 && twt === 0) id = sub.id();
          else if (f === 2 && twt === 0) name = sub.i64();
          else if (f === 3 && twt === 0) systemName = sub.i64();
          else if (f === 4 && twt === 0) filename = sub.i64();
          else if (f === 5 && twt === 0) startLine = sub.i64();
          else sub.skip(twt);
        }
        fnIds.push(id);
        fnName.push(name);
        fnFile.push(filename);
        fnSystem.push(systemName);
        fnStart.push(startLine);
        break;
      }
      case 6: {
        expectLen(wt, 'string_table');
        strings.push(w.string());
        if (strings.length === 1 && strings[0] !== '') malformed('string_table[0] must be the empty string');
        break;
      }
      case 7:
        dropFrames = int64Field(wt, 'drop_frames');
        break;
      case 8:
        keepFrames = int64Field(wt, 'keep_frames');
        break;
      case 9: {
        const t = int64Field(wt, 'time_nanos');
        if (timeNanos !== 0) {
          throw new IngestError('concatenated', 'concatenated profiles detected: the file holds more than one profile');
        }
        timeNanos = t;
        // Unix time in ns is past 2^53 (about 1.8e18): the number is rounded, the decimal is exact
        timeNanosExact = w.lastI64Decimal();
        break;
      }
      case 10:
        durationNanos = int64Field(wt, 'duration_nanos');
        break;
      case 11:
        expectLen(wt, 'period_type');
        periodTypeRaw = readValueType(w);
        break;
      case 12:
        period = int64Field(wt, 'period');
        break;
      case 13:
        if (wt === 2) {
          const [a, e] = w.span();
          const pw = new Wire(buf, a, e);
          while (!pw.done) comments.push(pw.i64());
        } else comments.push(int64Field(wt, 'comment'));
        break;
      case 14:
        defaultSampleType = int64Field(wt, 'default_sample_type');
        break;
      default:
        w.skip(wt);
    }
  }
  locLineStart.push(lineFn.length);

  const str = (i: number, what: string): string => {
    if (!(i >= 0 && i < strings.length))
      malformed(`${what} refers to string ${i}, outside the string table (${strings.length} entries)`);
    return strings[i]!;
  };

  if (sampleTypesRaw.length === 0) {
    if (buf.length > 0 && strings.length === 0 && numSamples === 0 && locIds.length === 0) {
      throw new IngestError('not-a-profile', 'not a pprof profile: no sample types, strings or samples');
    }
    malformed('missing sample type information');
  }
  const sampleTypes: ValueType[] = sampleTypesRaw.map(([t, u]) => ({
    type: str(t, 'sample_type.type'),
    unit: str(u, 'sample_type.unit'),
  }));
  const periodType = periodTypeRaw
    ? { type: str(periodTypeRaw[0], 'period_type.type'), unit: str(periodTypeRaw[1], 'period_type.unit') }
    : null;
  const defaultName = str(defaultSampleType, 'default_sample_type');
  const defaultType =
    defaultName !== '' && sampleTypes.some((t) => t.type === defaultName)
      ? defaultName
      : sampleTypes[sampleTypes.length - 1]!.type;

  const mappingIndex = new IdIndex(mappingIds, 'mapping');
  const functionIndex = new IdIndex(fnIds, 'function');
  const numLocations = locIds.length;
  const locIndex = new IdIndex(locIds, 'location');

  // Frames: each location expands into its lines (innermost first); a location without lines is one
  // frame. A frame whose function has no name is named after its mapping's file, as pprof does.
  const frames: Frame[] = [];
  const locFrameStart = new Uint32Array(numLocations + 1);
  // Per location, its lines' function names: only drop_frames needs them.
  const locFunctionNames: string[][] | null = dropFrames !== 0 ? [] : null;
  for (let li = 0; li < numLocations; li++) {
    locFrameStart[li] = frames.length;
    // `go tool pprof` gives a profile without any mapping one nameless mapping that every location
    // belongs to; filters see it (an expression matching "" matches every location).
    let mappingName: string | null = mappingIds.length === 0 ? '' : null;
    const mi = locMapping[li] !== 0 ? mappingIndex.get(locMapping[li]!) : -1;
    if (mi >= 0) mappingName = str(mappingFile[mi]!, 'mapping.filename');
    const fallback = mappingName ? `[${basename(mappingName)}]` : '<unknown>';
    const fnNames: string[] | null = locFunctionNames ? [] : null;
    const from = locLineStart[li]!;
    const to = locLineStart[li + 1]!;
    if (from === to) {
      const frame: Frame = { name: fallback, file: '', line: 0, standIn: 'no-function' };
      if (mappingName !== null) frame.mapping = mappingName;
      frames.push(frame);
      fnNames?.push('');
    }
    for (let i = from; i < to; i++) {
      const fid = lineFn[i]!;
      const fi = fid !== 0 ? functionIndex.get(fid) : -1;
      if (fi < 0) malformed(`location id ${locIds[li]} has a line with a missing function (id ${fid})`);
      const name = str(fnName[fi]!, 'function.name');
      // pprof's default name (short-names.ts); the name as written stays beside it for hover and exports
      const shown = pprofShortName(name, str(fnSystem[fi]!, 'function.system_name'));
      const frame: Frame = {
        name: name === '' ? fallback : shown,
        file: str(fnFile[fi]!, 'function.filename'),
        line: lineNo[i]!,
      };
      if (shown !== name) frame.fullName = name;
      if (mappingName !== null) frame.mapping = mappingName;
      if (name === '') frame.standIn = 'no-name';
      const start = fnStart[fi]!;
      if (start > 0 && Number.isSafeInteger(start)) frame.startLine = start;
      if (i < to - 1) frame.inlined = true;
      frames.push(frame);
      // pprof prunes after it has shortened the names (fetch.go: Symbolize, then RemoveUninteresting)
      fnNames?.push(shown);
    }
    if (fnNames) locFunctionNames!.push(fnNames);
  }
  locFrameStart[numLocations] = frames.length;

  // drop_frames / keep_frames: pprof prunes each location at the outermost matching line and cuts
  // every sample's stack beneath the outermost pruned location (see applyPrune).
  const prune =
    dropFrames !== 0
      ? buildPrune(
          str(dropFrames, 'drop_frames'),
          keepFrames !== 0 ? str(keepFrames, 'keep_frames') : '',
          locFunctionNames!,
          locFrameStart,
        )
      : null;

  // Pass 2: samples.
  const numTypes = sampleTypes.length;
  const values = sampleTypes.map(() => new Float64Array(numSamples));
  const absSums = new Float64Array(numTypes);
  const sampleStack = new Uint32Array(numSamples);
  const sampleLabelSet = new Uint32Array(numSamples);
  const stacks = new ByteInterner(buf, Math.min(numSamples, 1 << 16));
  const labelSetKeys = new ByteInterner(buf);
  const labelSets: Label[][] = [[]];
  // Stack keys that are not one packed field (unpacked ids, legal but rare) are assembled here from
  // the ids' own varint bytes: the same bytes the packed form would hold, so both intern alike.
  const keyScratch = new Bytes(256);
  const labelScratch = new Bytes(256);
  const labelSpans = new U32(16);
  const sw: Wire = new Wire(buf, 0, 0);
  const vw = new Wire(buf, 0, 0);

  w.reset(buf, 0, buf.length);
  let s = 0;
  while (!w.done) {
    const tag = w.u32();
    if (tag !== 0x12) {
      w.skip(tag & 7);
      continue;
    }
    const se = w.enter();
    sw.reset(buf, w.pos, se);
    w.pos = se;
    let keyStart = -1;
    let keyEnd = -1;
    let scratchKey = false;
    let nvalues = 0;
    labelSpans.n = 0;
    while (!sw.done) {
      const t = sw.u32();
      const field = t >>> 3;
      const wt = t & 7;
      if (field === 1) {
        let a: number;
        let b: number;
        if (wt === 2) {
          b = sw.enter();
          a = sw.pos;
          sw.pos = b;
        } else if (wt === 0) {
          a = sw.pos;
          sw.id();
          b = sw.pos;
        } else sw.fail(`sample.location_id has wire type ${wt}`);
        if (keyStart < 0 && wt === 2) {
          keyStart = a;
          keyEnd = b;
        } else {
          if (!scratchKey) {
            scratchKey = true;
            keyScratch.n = 0;
            if (keyStart >= 0) keyScratch.append(buf, keyStart, keyEnd);
          }
          keyScratch.append(buf, a, b);
        }
      } else if (field === 2) {
        if (wt === 2) {
          const b = sw.enter();
          vw.reset(buf, sw.pos, b);
          sw.pos = b;
          while (!vw.done) nvalues = storeValue(vw, values, absSums, s, nvalues);
        } else if (wt === 0) nvalues = storeValue(sw, values, absSums, s, nvalues);
        else sw.fail(`sample.value has wire type ${wt}`);
      } else if (field === 3) {
        if (wt !== 2) sw.fail(`sample.label has wire type ${wt}`);
        const b = sw.enter();
        labelSpans.push(sw.pos);
        labelSpans.push(b);
        sw.pos = b;
      } else sw.skip(wt);
    }
    if (nvalues !== numTypes) {
      throw new IngestError('value-count-mismatch', `sample ${s} has ${nvalues} values for ${numTypes} sample types`);
    }
    sampleStack[s] = scratchKey
      ? stacks.intern(keyScratch.a, 0, keyScratch.n)
      : keyStart >= 0
        ? stacks.intern(buf, keyStart, keyEnd)
        : stacks.intern(buf, 0, 0);

    if (labelSpans.n > 0) {
      labelScratch.n = 0;
      for (let i = 0; i < labelSpans.n; i += 2) {
        labelScratch.appendLength(labelSpans.a[i + 1]! - labelSpans.a[i]!);
        labelScratch.append(buf, labelSpans.a[i]!, labelSpans.a[i + 1]!);
      }
      const id = labelSetKeys.intern(labelScratch.a, 0, labelScratch.n) + 1;
      if (labelSetKeys.added) labelSets.push(decodeLabels(buf, labelSpans.a.subarray(0, labelSpans.n), str));
      sampleLabelSet[s] = id;
    }
    s++;
  }

  // Values past 2^53 are read when a double holds them exactly; a type whose values could add up
  // to a sum a double rounds is refused (see exactSums: the bound is 2^53 times their common
  // power-of-two factor, 2^60 ns for CPU values in 10 ms periods).
  for (let t = 0; t < numTypes; t++) {
    if (absSums[t]! > Number.MAX_SAFE_INTEGER && !exactSums(values[t]!)) {
      throw new IngestError(
        'value-out-of-range',
        `the ${sampleTypes[t]!.type} values add up to more than a double holds exactly (2^53 times the largest power of two dividing them all), so their totals cannot be exact`,
      );
    }
  }

  // Expand each distinct stack into frames: first count (and check limits), then fill.
  const numStacks = stacks.count;
  const stackOffsets = new Uint32Array(numStacks + 1);
  const locScratch = new U32(256);
  const kw = new Wire(buf, 0, 0);
  // Fills locScratch with stack st's location indices; sets [from, to) to the part pruning keeps.
  let from = 0;
  let to = 0;
  const dense = locIndex.table;
  const stackLocations = (st: number): void => {
    const kb = stacks.keyBuffer(st);
    const ks = stacks.keyStart(st);
    const ke = ks + stacks.keyLength(st);
    locScratch.n = 0;
    // Fast path: ids below 2^28 against the dense table, varints decoded inline. Anything else
    // (bigger ids, a truncated varint, an unknown id) restarts the stack on the general path, which
    // also words the error.
    if (dense !== null && decodeSmallIds(kb, ks, ke, dense, locScratch)) {
      from = 0;
      to = locScratch.n;
    } else {
      kw.reset(kb, ks, ke);
      locScratch.n = 0;
      while (!kw.done) {
        const id = kw.id();
        const li = locIndex.get(id);
        if (li < 0) malformed(`sample ${sampleStack.indexOf(st)} refers to location id ${id}, which does not exist`);
        locScratch.push(li);
      }
      from = 0;
      to = locScratch.n;
    }
    if (prune) [from, to] = applyPrune(prune, locScratch.a, to);
  };
  // First frame kept of each location: all of them unless drop_frames cut some.
  const firstFrame = prune ? prune.firstFrame : locFrameStart;
  let stored = 0;
  for (let st = 0; st < numStacks; st++) {
    stackLocations(st);
    let depth = 0;
    for (let i = from; i < to; i++) {
      const li = locScratch.a[i]!;
      depth += locFrameStart[li + 1]! - firstFrame[li]!;
    }
    if (depth > limits.maxStackDepth)
      throw new IngestError(
        'too-large',
        `sample ${sampleStack.indexOf(st)} has a stack of ${depth} frames (limit ${limits.maxStackDepth})`,
      );
    stored += depth;
    if (stored > limits.maxStoredFrames)
      throw new IngestError('too-large', `profile stacks hold more than ${limits.maxStoredFrames} frames`);
    stackOffsets[st + 1] = stored;
  }
  const stackFrames = new Uint32Array(stored);
  let k = 0;
  for (let st = 0; st < numStacks; st++) {
    stackLocations(st);
    for (let i = from; i < to; i++) {
      const li = locScratch.a[i]!;
      const fe = locFrameStart[li + 1]!;
      for (let f = firstFrame[li]!; f < fe; f++) stackFrames[k++] = f;
    }
  }

  return {
    format: 'pprof',
    sampleTypes,
    defaultSampleType: defaultType,
    periodType,
    period,
    timeNanos,
    timeNanosExact,
    durationNanos,
    comments: comments.map((c) => str(c, 'comment')),
    dropFrames: dropFrames !== 0 ? str(dropFrames, 'drop_frames') : '',
    keepFrames: keepFrames !== 0 ? str(keepFrames, 'keep_frames') : '',
    stats: { numSamples, numLocations, numFunctions: fnIds.length, numMappings: mappingIds.length },
    frames,
    stackOffsets,
    stackFrames,
    sampleStack,
    values,
    sampleLabelSet,
    labelSets,
  };
}

/**
 * Decodes packed location ids that are all below 2^28 and all present in `dense`, appending their
 * indices to `out`. Returns false (having appended some) when it meets anything else.
 */
function decodeSmallIds(kb: Uint8Array, p: number, end: number, dense: Int32Array, out: U32): boolean {
  while (p < end) {
    let c = kb[p++]!;
    let id = c & 0x7f;
    let shift = 7;
    while (c & 0x80) {
      if (p >= end || shift > 21) return false;
      c = kb[p++]!;
      id |= (c & 0x7f) << shift;
      shift += 7;
    }
    const li = id < dense.length ? dense[id]! : -1;
    if (li < 0) return false;
    out.push(li);
  }
  return true;
}

function storeValue(w: Wire, values: Float64Array[], absSums: Float64Array, s: number, n: number): number {
  const v = w.i64();
  // Past ±2^53 a double holds only some integers (2^60 yes, 2^60 + 1 no): keep those it holds.
  if (w.unsafe && BigInt(v) !== BigInt(w.lastI64Decimal()))
    throw new IngestError(
      'value-out-of-range',
      `sample ${s} has value ${w.lastI64Decimal()}, past ±2^53 and not a number a double holds exactly, so it cannot be shown exactly`,
    );
  const col = values[n];
  if (col) {
    col[s] = v;
    absSums[n]! += Math.abs(v);
  }
  return n + 1;
}

function readValueType(w: Wire): [number, number] {
  const [s, e] = w.span();
  const vw = new Wire(w.buf, s, e);
  let type = 0;
  let unit = 0;
  while (!vw.done) {
    const tag = vw.u32();
    const f = tag >>> 3;
    if ((f === 1 || f === 2) && (tag & 7) === 0) {
      const v = vw.i64();
      if (f === 1) type = v;
      else unit = v;
    } else vw.skip(tag & 7);
  }
  return [type, unit];
}

function decodeLabels(buf: Uint8Array, spans: ArrayLike<number>, str: (i: number, what: string) => string): Label[] {
  const out: Label[] = [];
  for (let i = 0; i < spans.length; i += 2) {
    const lw = new Wire(buf, spans[i]!, spans[i + 1]!);
    let key = 0;
    let sv = 0;
    let num = 0;
    let numUnit = 0;
    let hasNum = false;
    while (!lw.done) {
      const tag = lw.u32();
      const f = tag >>> 3;
      const wt = tag & 7;
      if (wt !== 0 || f < 1 || f > 4) {
        lw.skip(wt);
        continue;
      }
      const v = lw.i64();
      if (f === 1) key = v;
      else if (f === 2) sv = v;
      else if (f === 3) {
        num = v;
        hasNum = true;
      } else numUnit = v;
    }
    const label: Label = { key: str(key, 'label.key') };
    if (sv !== 0) label.str = str(sv, 'label.str');
    else if (hasNum) {
      label.num = num;
      const u = str(numUnit, 'label.num_unit');
      if (u !== '') label.numUnit = u;
    } else label.str = '';
    out.push(label);
  }
  return out;
}

function basename(path: string): string {
  const i = path.lastIndexOf('/');
  return i >= 0 ? path.slice(i + 1) : path;
}

interface Prune {
  /** Per location: whole location dropped. */
  drop: Uint8Array;
  /** Per location: the stack is cut beneath it. */
  beneath: Uint8Array;
  /** Per location: first frame kept (lines innermost of the match are removed). */
  firstFrame: Uint32Array;
}

/** Longest drop_frames/keep_frames a profile may carry, in characters (Go sets none). */
const MAX_PRUNE_PATTERN_LENGTH = 65_536;

/**
 * pprof's drop_frames rule: in each location, find the outermost line whose function name
 * (simplified, see simplifyFunctionName) matches ^(drop)$ and not ^(keep)$; the lines from it inward
 * are removed (all of them: the location is dropped), and samples are cut beneath it. The
 * expressions come from the file, so they run on the linear-time Go engine, once per distinct name.
 */
function buildPrune(drop: string, keep: string, fnNames: string[][], locFrameStart: Uint32Array): Prune | null {
  const compile = (what: string, src: string): GoRegexp | null => {
    try {
      return compileGoRegexp(`^(${src})$`, { maxLength: MAX_PRUNE_PATTERN_LENGTH });
    } catch (e) {
      if (!(e instanceof GoRegexpError)) throw e;
      // pprof ignores an expression Go cannot compile (the profile is shown unpruned); one Go
      // accepts but that is beyond our size limit cannot be applied faithfully, so it is refused.
      if (e.tooComplex) throw new IngestError('too-large', `${what} ${e.message}`);
      return null;
    }
  };
  const dropRx = compile('drop_frames', drop);
  const keepRx = keep !== '' ? compile('keep_frames', keep) : null;
  if (!dropRx || (keep !== '' && !keepRx)) return null;
  const verdicts = new Map<string, boolean>();
  const prunesFrom = (name: string): boolean => {
    let v = verdicts.get(name);
    if (v === undefined) {
      const simple = simplifyFunctionName(name);
      v = dropRx.test(simple) && !keepRx?.test(simple);
      verdicts.set(name, v);
    }
    return v;
  };
  const n = fnNames.length;
  const p: Prune = {
    drop: new Uint8Array(n),
    beneath: new Uint8Array(n),
    firstFrame: Uint32Array.from(locFrameStart.subarray(0, n)),
  };
  for (let li = 0; li < n; li++) {
    const names = fnNames[li]!;
    let i = names.length - 1;
    for (; i >= 0; i--) {
      const name = names[i]!;
      if (name !== '' && prunesFrom(name)) break;
    }
    if (i >= 0) {
      p.beneath[li] = 1;
      if (i === names.length - 1) p.drop[li] = 1;
      else p.firstFrame[li] = locFrameStart[li]! + i + 1;
    }
  }
  return p;
}

/**
 * The name drop_frames is matched against, as pprof simplifies it: a leading "." (PPC64 ELFv1) is
 * dropped, and the name is cut at its first "(" that does not belong to "(anonymous namespace)" or
 * "operator()" — so C++ argument lists go, and so does everything from Go's "(*T)" on.
 */
export function simplifyFunctionName(name: string): string {
  const s = name.startsWith('.') ? name.slice(1) : name;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 0x28 /* ( */) {
      if (s.startsWith('(anonymous namespace)', i)) i += '(anonymous namespace)'.length - 1;
      else return s.slice(0, i);
    } else if (c === 0x6f /* o */ && s.startsWith('operator()', i)) i += 'operator()'.length - 1;
  }
  return s;
}

/** Returns the [from, to) range of a leaf-first location list that survives pruning. */
function applyPrune(p: Prune, locs: Uint32Array, n: number): [number, number] {
  let foundUser = false;
  for (let i = n - 1; i >= 0; i--) {
    const li = locs[i]!;
    if (!p.drop[li] && !p.beneath[li]) {
      foundUser = true;
      continue;
    }
    if (!foundUser) continue;
    if (p.drop[li]) return [i + 1, n];
    return [i, n];
  }
  return [0, n];
}

export { decodeUtf8 };
