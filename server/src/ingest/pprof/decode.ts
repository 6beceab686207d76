import { IngestError } from '../errors.ts';
import type { Frame, Label, Profile, ValueType } from '../../model/profile.ts';
import { Wire, decodeUtf8 } from './wire.ts';

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

interface RawFunction {
  name: number;
  filename: number;
}
interface RawLocation {
  id: number | string;
  mappingId: number | string;
  /** [functionId, line] pairs, innermost first. */
  lines: (number | string)[];
}

/** Growable Uint32Array. */
class U32 {
  a: Uint32Array;
  n = 0;
  constructor(cap = 1024) {
    this.a = new Uint32Array(cap);
  }
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Uint32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  view(): Uint32Array {
    return this.a.slice(0, this.n);
  }
}

function malformed(message: string): never {
  throw new IngestError('invalid-reference', message);
}

/**
 * Decodes an uncompressed pprof protobuf into the canonical model.
 *
 * Two passes: the first walks the top-level fields, decoding the small tables (strings, functions,
 * locations, mappings) and noting where each sample lies; the second decodes samples, interning
 * stacks by the raw bytes of their location ids so each distinct stack is expanded once.
 *
 * Checks follow pprof's own: string 0 must be "", every string index in range, ids unique and
 * non-zero, every referenced location and function present, one value per sample type, and a
 * second time_nanos means two profiles were concatenated.
 */
export function decodeProfile(buf: Uint8Array, limits: DecodeLimits = defaultDecodeLimits): Profile {
  if (buf.length === 0) throw new IngestError('empty', 'empty profile: the file holds no data');

  const strings: string[] = [];
  const sampleTypesRaw: [number, number][] = [];
  let periodTypeRaw: [number, number] | null = null;
  const sampleSpans = new U32(4096);
  const functions = new Map<number | string, RawFunction>();
  let numFunctions = 0;
  const locations: RawLocation[] = [];
  const mappings = new Map<number | string, number>();
  let numMappings = 0;
  const comments: number[] = [];
  let dropFrames = 0;
  let keepFrames = 0;
  let timeNanos = 0;
  let durationNanos = 0;
  let period = 0;
  let defaultSampleType = 0;

  const w = new Wire(buf, 0, buf.length);
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
        const [s, e] = w.span();
        sampleSpans.push(s);
        sampleSpans.push(e);
        if (sampleSpans.n / 2 > limits.maxSamples) {
          throw new IngestError('too-large', `profile has more than ${limits.maxSamples} samples`);
        }
        break;
      }
      case 3: {
        expectLen(wt, 'mapping');
        const [id, filename] = readMapping(w);
        if (id === 0) malformed('found mapping with reserved id 0');
        if (mappings.has(id)) malformed(`multiple mappings with the same id ${id}`);
        mappings.set(id, filename);
        numMappings++;
        break;
      }
      case 4: {
        expectLen(wt, 'location');
        locations.push(readLocation(w));
        break;
      }
      case 5: {
        expectLen(wt, 'function');
        const [id, fn] = readFunction(w);
        if (id === 0) malformed('found function with reserved id 0');
        if (functions.has(id)) malformed(`multiple functions with the same id ${id}`);
        functions.set(id, fn);
        numFunctions++;
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

  const str = (i: number, what: string): string => {
    if (!(i >= 0 && i < strings.length)) malformed(`${what} refers to string ${i}, outside the string table (${strings.length} entries)`);
    return strings[i]!;
  };

  if (sampleTypesRaw.length === 0) {
    if (buf.length > 0 && strings.length === 0 && sampleSpans.n === 0 && locations.length === 0) {
      throw new IngestError('not-a-profile', 'not a pprof profile: no sample types, strings or samples');
    }
    malformed('missing sample type information');
  }
  const sampleTypes: ValueType[] = sampleTypesRaw.map(([t, u]) => ({ type: str(t, 'sample_type.type'), unit: str(u, 'sample_type.unit') }));
  const periodType = periodTypeRaw ? { type: str(periodTypeRaw[0], 'period_type.type'), unit: str(periodTypeRaw[1], 'period_type.unit') } : null;
  const defaultName = str(defaultSampleType, 'default_sample_type');
  const defaultType = defaultName !== '' && sampleTypes.some((t) => t.type === defaultName) ? defaultName : sampleTypes[sampleTypes.length - 1]!.type;

  // Frames: each location expands into its lines (innermost first); a location without lines is one
  // frame. A frame whose function has no name is named after its mapping's file, as pprof does.
  const frames: Frame[] = [];
  const locIndex = new Map<number | string, number>();
  const locFrameStart = new Uint32Array(locations.length + 1);
  const locFunctionNames: string[][] = [];
  locations.forEach((loc, li) => {
    if (loc.id === 0) malformed('found location with reserved id 0');
    if (locIndex.has(loc.id)) malformed(`multiple locations with the same id ${loc.id}`);
    locIndex.set(loc.id, li);
    locFrameStart[li] = frames.length;
    let mappingName: string | null = null;
    const mapFile = loc.mappingId !== 0 ? mappings.get(loc.mappingId) : undefined;
    if (mapFile !== undefined) mappingName = str(mapFile, 'mapping.filename');
    const fallback = mappingName ? `[${basename(mappingName)}]` : '<unknown>';
    const fnNames: string[] = [];
    if (loc.lines.length === 0) {
      frames.push({ name: fallback, file: '', line: 0 });
      fnNames.push('');
    }
    for (let i = 0; i < loc.lines.length; i += 2) {
      const fid = loc.lines[i]!;
      const fn = fid !== 0 ? functions.get(fid) : undefined;
      if (!fn) malformed(`location id ${loc.id} has a line with a missing function (id ${fid})`);
      const name = str(fn.name, 'function.name');
      frames.push({ name: name === '' ? fallback : name, file: str(fn.filename, 'function.filename'), line: loc.lines[i + 1] as number });
      fnNames.push(name);
    }
    locFunctionNames.push(fnNames);
  });
  locFrameStart[locations.length] = frames.length;

  // drop_frames / keep_frames: pprof prunes each location at the outermost matching line and cuts
  // every sample's stack beneath the outermost pruned location (see applyPrune).
  const prune = dropFrames !== 0 ? buildPrune(str(dropFrames, 'drop_frames'), keepFrames !== 0 ? str(keepFrames, 'keep_frames') : '', locFunctionNames, locFrameStart) : null;

  // Pass 2: samples.
  const numSamples = sampleSpans.n / 2;
  const spans = sampleSpans.a;
  const numTypes = sampleTypes.length;
  const values = sampleTypes.map(() => new Float64Array(numSamples));
  const absSums = new Float64Array(numTypes);
  const sampleStack = new Uint32Array(numSamples);
  const sampleLabelSet = new Uint32Array(numSamples);
  const stackIds = new Map<string, number>();
  const stackOffsets = new U32(4096);
  stackOffsets.push(0);
  const stackFrames = new U32(1 << 16);
  const labelSets: Label[][] = [[]];
  const labelSetIds = new Map<string, number>();
  const locScratch = new U32(256);
  const nodeBuf = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);

  for (let s = 0; s < numSamples; s++) {
    const sw = new Wire(buf, spans[2 * s]!, spans[2 * s + 1]!);
    let stackKey = '';
    let unpackedIds: (number | string)[] | null = null;
    let nvalues = 0;
    let labelKey = '';
    let labelSpans: number[] | null = null;
    while (!sw.done) {
      const tag = sw.u32();
      const field = tag >>> 3;
      const wt = tag & 7;
      if (field === 1) {
        if (wt === 2) {
          const [a, b] = sw.span();
          stackKey += nodeBuf.toString('latin1', a, b);
        } else if (wt === 0) {
          (unpackedIds ??= []).push(sw.id());
        } else sw.fail(`sample.location_id has wire type ${wt}`);
      } else if (field === 2) {
        if (wt === 2) {
          const [a, b] = sw.span();
          const vw = new Wire(buf, a, b);
          while (!vw.done) nvalues = storeValue(vw, values, absSums, s, nvalues);
        } else if (wt === 0) nvalues = storeValue(sw, values, absSums, s, nvalues);
        else sw.fail(`sample.value has wire type ${wt}`);
      } else if (field === 3) {
        if (wt !== 2) sw.fail(`sample.label has wire type ${wt}`);
        const [a, b] = sw.span();
        labelKey += nodeBuf.toString('latin1', a, b) + '\u0100';
        (labelSpans ??= []).push(a, b);
      } else sw.skip(wt);
    }
    if (nvalues !== numTypes) {
      throw new IngestError('value-count-mismatch', `sample ${s} has ${nvalues} values for ${numTypes} sample types`);
    }

    // Unpacked ids (legal, rare) get a key of their own that cannot collide with packed bytes,
    // which never contain chars above U+00FF.
    const packedKey = stackKey;
    if (unpackedIds) stackKey = `\u0100${unpackedIds.join(',')}\u0100${packedKey}`;
    let stackId = stackIds.get(stackKey);
    if (stackId === undefined) {
      // First time this stack is seen: resolve its locations and expand them into frames.
      locScratch.n = 0;
      if (unpackedIds) for (const id of unpackedIds) locScratch.push(resolveLoc(locIndex, id, s));
      if (packedKey.length > 0) decodePackedIds(packedKey, locIndex, locScratch, s);
      let from = 0;
      let to = locScratch.n;
      if (prune) [from, to] = applyPrune(prune, locScratch.a, to);
      stackId = stackOffsets.n - 1;
      let depth = 0;
      for (let i = from; i < to; i++) {
        const li = locScratch.a[i]!;
        const fs = prune ? prune.firstFrame[li]! : locFrameStart[li]!;
        const fe = locFrameStart[li + 1]!;
        for (let f = fs; f < fe; f++) stackFrames.push(f);
        depth += fe - fs;
      }
      if (depth > limits.maxStackDepth) throw new IngestError('too-large', `sample ${s} has a stack of ${depth} frames (limit ${limits.maxStackDepth})`);
      if (stackFrames.n > limits.maxStoredFrames) throw new IngestError('too-large', `profile stacks hold more than ${limits.maxStoredFrames} frames`);
      stackOffsets.push(stackFrames.n);
      stackIds.set(stackKey, stackId);
    }
    sampleStack[s] = stackId;

    if (labelSpans) {
      let id = labelSetIds.get(labelKey);
      if (id === undefined) {
        id = labelSets.length;
        labelSets.push(decodeLabels(buf, labelSpans, str));
        labelSetIds.set(labelKey, id);
      }
      sampleLabelSet[s] = id;
    }
  }

  for (let t = 0; t < numTypes; t++) {
    if (absSums[t]! > Number.MAX_SAFE_INTEGER) {
      throw new IngestError('value-out-of-range', `the ${sampleTypes[t]!.type} values add up beyond 2^53 and cannot be summed exactly`);
    }
  }

  return {
    format: 'pprof',
    sampleTypes,
    defaultSampleType: defaultType,
    periodType,
    period,
    timeNanos,
    durationNanos,
    comments: comments.map((c) => str(c, 'comment')),
    dropFrames: dropFrames !== 0 ? str(dropFrames, 'drop_frames') : '',
    keepFrames: keepFrames !== 0 ? str(keepFrames, 'keep_frames') : '',
    stats: { numSamples, numLocations: locations.length, numFunctions, numMappings },
    frames,
    stackOffsets: stackOffsets.view(),
    stackFrames: stackFrames.view(),
    sampleStack,
    values,
    sampleLabelSet,
    labelSets,
  };
}

function storeValue(w: Wire, values: Float64Array[], absSums: Float64Array, s: number, n: number): number {
  const v = w.i64();
  if (w.unsafe) throw new IngestError('value-out-of-range', `sample ${s} has value ${v}, beyond ±2^53: it cannot be shown exactly`);
  const col = values[n];
  if (col) {
    col[s] = v;
    absSums[n]! += Math.abs(v);
  }
  return n + 1;
}

function resolveLoc(locIndex: Map<number | string, number>, id: number | string, s: number): number {
  const li = locIndex.get(id);
  if (li === undefined) malformed(`sample ${s} refers to location id ${id}, which does not exist`);
  return li;
}

/** Decodes the packed location ids held (as latin1 bytes) in `key`. */
function decodePackedIds(key: string, locIndex: Map<number | string, number>, out: U32, s: number): void {
  const bytes = Buffer.from(key, 'latin1');
  const kw = new Wire(bytes, 0, bytes.length);
  while (!kw.done) out.push(resolveLoc(locIndex, kw.id(), s));
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

function readMapping(w: Wire): [number | string, number] {
  const [s, e] = w.span();
  const mw = new Wire(w.buf, s, e);
  let id: number | string = 0;
  let filename = 0;
  while (!mw.done) {
    const tag = mw.u32();
    const f = tag >>> 3;
    const wt = tag & 7;
    if (f === 1 && wt === 0) id = mw.id();
    else if (f === 5 && wt === 0) filename = mw.i64();
    else mw.skip(wt);
  }
  return [id, filename];
}

function readFunction(w: Wire): [number | string, RawFunction] {
  const [s, e] = w.span();
  const fw = new Wire(w.buf, s, e);
  let id: number | string = 0;
  const fn: RawFunction = { name: 0, filename: 0 };
  while (!fw.done) {
    const tag = fw.u32();
    const f = tag >>> 3;
    const wt = tag & 7;
    if (f === 1 && wt === 0) id = fw.id();
    else if (f === 2 && wt === 0) fn.name = fw.i64();
    else if (f === 4 && wt === 0) fn.filename = fw.i64();
    else fw.skip(wt);
  }
  return [id, fn];
}

function readLocation(w: Wire): RawLocation {
  const [s, e] = w.span();
  const lw = new Wire(w.buf, s, e);
  const loc: RawLocation = { id: 0, mappingId: 0, lines: [] };
  while (!lw.done) {
    const tag = lw.u32();
    const f = tag >>> 3;
    const wt = tag & 7;
    if (f === 1 && wt === 0) loc.id = lw.id();
    else if (f === 2 && wt === 0) loc.mappingId = lw.id();
    else if (f === 4 && wt === 2) {
      const [ls, le] = lw.span();
      const xw = new Wire(w.buf, ls, le);
      let fid: number | string = 0;
      let line = 0;
      while (!xw.done) {
        const t = xw.u32();
        if (t >>> 3 === 1 && (t & 7) === 0) fid = xw.id();
        else if (t >>> 3 === 2 && (t & 7) === 0) line = xw.i64();
        else xw.skip(t & 7);
      }
      loc.lines.push(fid, line);
    } else lw.skip(wt);
  }
  return loc;
}

function decodeLabels(buf: Uint8Array, spans: number[], str: (i: number, what: string) => string): Label[] {
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

/**
 * pprof's drop_frames rule: in each location, find the outermost line whose function matches
 * ^(drop)$ and not ^(keep)$; the lines from it inward are removed (all of them: the location is
 * dropped), and samples are cut beneath it.
 */
function buildPrune(drop: string, keep: string, fnNames: string[][], locFrameStart: Uint32Array): Prune {
  let dropRx: RegExp;
  let keepRx: RegExp | null = null;
  try {
    dropRx = new RegExp(`^(${drop})$`);
    if (keep !== '') keepRx = new RegExp(`^(${keep})$`);
  } catch {
    throw new IngestError('malformed', `drop_frames/keep_frames is not a valid regular expression: ${drop}`);
  }
  const n = fnNames.length;
  const p: Prune = { drop: new Uint8Array(n), beneath: new Uint8Array(n), firstFrame: Uint32Array.from(locFrameStart.subarray(0, n)) };
  for (let li = 0; li < n; li++) {
    const names = fnNames[li]!;
    let i = names.length - 1;
    for (; i >= 0; i--) {
      const name = names[i]!;
      if (name !== '' && dropRx.test(name) && !(keepRx && keepRx.test(name))) break;
    }
    if (i >= 0) {
      p.beneath[li] = 1;
      if (i === names.length - 1) p.drop[li] = 1;
      else p.firstFrame[li] = locFrameStart[li]! + i + 1;
    }
  }
  return p;
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
