/**
 * OpenTelemetry profiles (OTLP `profiles/v1development`, protocol releases 1.10 and 1.11) as
 * stagediff profiles: an `ExportProfilesServiceRequest` or `ProfilesData` in protobuf (plain or
 * gzip'd), or the same in OTLP JSON (one payload, or one per line as the Collector's file exporter
 * writes them). A protobuf payload of release 1.7, the layout async-profiler 4.2 writes, is read too:
 * release-1-7.ts turns it into the 1.10 objects first.
 *
 * OTLP carries one sample type per Profile; pprof, and stagediff, one profile with several. The
 * Profiles that share a resource, a start time and a duration are regrouped into one profile with a
 * sample type per Profile (cpu's `samples` and `cpu`, heap's four, …); samples with the same stack,
 * attributes and link become one sample with a value per type. Attributes become labels (so tag
 * filters work), a sample's link becomes `trace_id`/`span_id` labels, and resource, scope and profile
 * attributes become the profile's comments.
 *
 * The regrouped profile is written as a pprof protobuf and read by the pprof reader, so an OTLP
 * profile obeys every rule and limit a pprof one does (frame names, inlining, exact sums) and its
 * figures equal `go tool pprof`'s on the profile it came from.
 */
import protobuf from 'protobufjs';
import type { Profile } from '../../model/profile.ts';
import { IngestError } from '../errors.ts';
import { type ContainerLimits, defaultContainerLimits, isGzip, unwrap } from '../pprof/container.ts';
import { type DecodeLimits, decodeProfile, defaultDecodeLimits } from '../pprof/decode.ts';
import { detectRelease17, readRelease17 } from './release-1-7.ts';
import {
  type Int64,
  type OtlpAnyValue,
  type OtlpDictionary,
  type OtlpKeyValue,
  type OtlpProfile,
  type OtlpProfilesData,
  profilesDataType,
} from './schema.ts';

export type OtlpLimits = ContainerLimits & DecodeLimits;

export const defaultOtlpLimits: OtlpLimits = { ...defaultContainerLimits, ...defaultDecodeLimits };

/**
 * An OTLP payload is decoded into objects whole (about 16 bytes of heap per byte of protobuf) before
 * it is regrouped, where a pprof file is read in place: so the largest payload read, once inflated,
 * is a sixteenth of MAX_DECOMPRESSED_BYTES (32 MiB by default).
 */
export const OTLP_SHARE_OF_DECOMPRESSED = 16;

const SUPPORTED =
  'OTLP profiles of protocol release 1.10 or 1.11 (profiles/v1development), and protobuf of release 1.7 (as async-profiler 4.2 writes it)';

/**
 * Confidence that a file is an OTLP profiles payload, from its first bytes (inflated when gzip'd):
 * JSON naming `resourceProfiles` early, or a protobuf that opens with a dictionary (field 2, as the
 * Collector writes it) or with a resource-profiles message whose own first field is a message — a
 * pprof profile opens with field 1 too, but its ValueType starts with a varint (and no pprof writer
 * puts a sample before the sample types). Content decides, over a file name saying `.pb.gz`.
 */
export function detect(head: Uint8Array): number {
  const text = jsonStart(head);
  if (text !== null) return /"resource_?[pP]rofiles"\s*:/.test(text) ? 0.97 : 0;
  if (head.length < 3) return 0;
  if (head[0] === 0x12) return 0.97;
  if (head[0] === 0x0a) {
    let p = 1;
    while (p < head.length && p < 6 && head[p]! & 0x80) p++;
    const inner = head[p + 1];
    if (inner === 0x0a || inner === 0x12 || inner === 0x1a) return 0.97;
  }
  return 0;
}

/** The head as text when it opens (after white space) a JSON object, else null. */
function jsonStart(head: Uint8Array): string | null {
  let i = 0;
  while (i < head.length && (head[i] === 0x20 || head[i] === 0x0a || head[i] === 0x0d || head[i] === 0x09)) i++;
  if (head[i] !== 0x7b) return null;
  return Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString('utf8');
}

/** Reads an OTLP profiles file (see the module comment) into one profile, or throws IngestError. */
export function parseOtlp(bytes: Uint8Array, limits: Partial<OtlpLimits> = {}): Profile {
  const l = { ...defaultOtlpLimits, ...limits };
  const cap = Math.floor(l.maxDecompressedBytes / OTLP_SHARE_OF_DECOMPRESSED);
  const tooLarge = () =>
    new IngestError(
      'too-large',
      `the OTLP payload is over ${cap} bytes once inflated, the limit for OTLP (MAX_DECOMPRESSED_BYTES / ${OTLP_SHARE_OF_DECOMPRESSED}: it is decoded whole); export a shorter window`,
    );
  let raw: Uint8Array;
  try {
    raw = unwrap(bytes, { maxInputBytes: l.maxInputBytes, maxDecompressedBytes: cap });
  } catch (e) {
    if (e instanceof IngestError && e.code === 'too-large' && /decompressed/.test(e.message)) throw tooLarge();
    throw e;
  }
  if (raw.length > cap) throw tooLarge();
  const payloads =
    jsonStart(raw.subarray(0, 64)) !== null ? fromJson(raw) : [fromProtobuf(raw, l.maxDecompressedBytes)];
  const groups: Group[] = [];
  payloads.forEach((data, i) => {
    checkIndices(data, payloads.length > 1 ? `payload ${i + 1}: ` : '');
    appendGroups(data, groups);
  });
  if (groups.length === 0) throw new IngestError('empty', 'the OTLP payload holds no profile');
  if (groups.length > 1) {
    const list = groups
      .slice(0, 4)
      .map((g) => `${g.resourceText || 'no resource attributes'}, ${g.time}+${g.duration} ns: ${g.typeNames()}`)
      .join('; ');
    throw new IngestError(
      'unsupported',
      `the OTLP payload holds ${groups.length} profiles that do not share one resource, start time and duration (${list}${
        groups.length > 4 ? '; …' : ''
      }); stagediff reads one per file: export one resource and one window per file`,
    );
  }
  const pprof = groups[0]!.toPprof(l.maxDecompressedBytes);
  let profile: Profile;
  try {
    profile = decodeProfile(pprof, l);
  } catch (e) {
    if (e instanceof IngestError) throw e;
    throw new IngestError('malformed', `not a valid OTLP profile: ${(e as Error).message}`);
  }
  return { ...profile, format: 'otlp' };
}

function fromProtobuf(raw: Uint8Array, maxDecompressedBytes: number): OtlpProfilesData {
  const release = detectRelease17(raw);
  if (release === '1.7') return readRelease17(raw, maxDecompressedBytes);
  if (release === 'older') {
    throw new IngestError(
      'unsupported',
      `this looks like an OTLP profiles payload of protocol release 1.6 or earlier (its tables are inside each Profile, with no dictionary); stagediff reads ${SUPPORTED}`,
    );
  }
  try {
    return profilesDataType().decode(raw) as unknown as OtlpProfilesData;
  } catch (e) {
    throw new IngestError('malformed', `not a valid OTLP profiles protobuf: ${(e as Error).message}`);
  }
}

/** Field names of earlier drafts of the signal, by where they sit, and the release that last had them. */
const OLD_PROFILE_FIELDS = ['sample', 'locationIndices', 'locationTable', 'stringTable', 'commentStrindices'];

function fromJson(raw: Uint8Array): OtlpProfilesData[] {
  const text = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('utf8');
  const lines = text.split('\n').filter((s) => s.trim() !== '');
  const chunks = lines.length > 1 && lines.every((s) => s.trimStart().startsWith('{')) ? lines : [text];
  return chunks.map((chunk, i) => {
    const where = chunks.length > 1 ? `line ${i + 1}: ` : '';
    let obj: unknown;
    try {
      obj = JSON.parse(chunk);
    } catch (e) {
      throw new IngestError('malformed', `${where}not valid JSON: ${(e as Error).message}`);
    }
    if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
      throw new IngestError('malformed', `${where}an OTLP payload is a JSON object`);
    }
    checkJsonFields(obj as Record<string, unknown>, where);
    try {
      return profilesDataType().fromObject(obj) as unknown as OtlpProfilesData;
    } catch (e) {
      throw new IngestError('malformed', `${where}not a valid OTLP profiles payload: ${(e as Error).message}`);
    }
  });
}

/**
 * Refuses the JSON of earlier drafts by their field names, and turns OTLP JSON's hex identifiers
 * (trace, span and profile ids) into the base64 protobufjs reads bytes from.
 */
function checkJsonFields(obj: Record<string, unknown>, where: string): void {
  const resources = Array.isArray(obj.resourceProfiles) ? obj.resourceProfiles : [];
  for (const rp of resources as Record<string, unknown>[]) {
    const scopes = Array.isArray(rp?.scopeProfiles) ? rp.scopeProfiles : [];
    for (const sp of scopes as Record<string, unknown>[]) {
      const profiles = Array.isArray(sp?.profiles) ? sp.profiles : [];
      for (const p of profiles as Record<string, unknown>[]) {
        if (typeof p !== 'object' || p === null) continue;
        const old = OLD_PROFILE_FIELDS.find((f) => f in p);
        if (old) {
          throw new IngestError(
            'unsupported',
            `${where}this OTLP profiles payload is of an earlier draft of the signal (its Profile has \`${old}\`, a field releases before 1.9 had); stagediff reads ${SUPPORTED}`,
          );
        }
        if (typeof p.profileId === 'string') p.profileId = hexToBase64(p.profileId);
      }
    }
  }
  const dict = obj.dictionary as Record<string, unknown> | undefined;
  const links = dict && Array.isArray(dict.linkTable) ? dict.linkTable : [];
  for (const link of links as Record<string, unknown>[]) {
    if (typeof link !== 'object' || link === null) continue;
    if (typeof link.traceId === 'string') link.traceId = hexToBase64(link.traceId);
    if (typeof link.spanId === 'string') link.spanId = hexToBase64(link.spanId);
  }
}

function hexToBase64(s: string): string {
  return /^([0-9a-fA-F]{2})*$/.test(s) ? Buffer.from(s, 'hex').toString('base64') : s;
}

/**
 * Every index a payload holds must point into its table. Releases 1.8 and 1.9 numbered the Sample's
 * fields differently (values were field 2, where attribute indices are now), so such a payload reads
 * as samples whose "attributes" point far past the table: it is named as what it likely is.
 */
function checkIndices(data: OtlpProfilesData, where: string): void {
  const d = data.dictionary ?? {};
  const n = {
    strings: d.stringTable?.length ?? 0,
    stacks: d.stackTable?.length ?? 0,
    locations: d.locationTable?.length ?? 0,
    functions: d.functionTable?.length ?? 0,
    mappings: d.mappingTable?.length ?? 0,
    attributes: d.attributeTable?.length ?? 0,
    links: d.linkTable?.length ?? 0,
  };
  const bad = (what: string, i: number, size: number): never => {
    throw new IngestError(
      'malformed',
      `${where}${capitalise(what)} index ${i} points past its table (${size} entries): not an OTLP profiles payload stagediff can read (it reads ${SUPPORTED})`,
    );
  };
  const check = (what: string, i: number | undefined, size: number) => {
    if (i !== undefined && (i < 0 || i >= size) && !(i === 0 && size === 0)) bad(what, i, size);
  };
  /** A sample's indices past their tables: the signature of releases 1.8/1.9's Sample (values in field 2). */
  const sampleCheck = (what: string, i: number | undefined, size: number) => {
    if (i === undefined || (i >= 0 && i < size) || (i === 0 && size === 0)) return;
    throw new IngestError(
      'unsupported',
      `${where}a sample's ${what} index ${i} points past its table (${size} entries): this looks like an OTLP profiles payload of protocol release 1.8 or 1.9, which numbered the Sample's fields differently (values were field 2); stagediff reads ${SUPPORTED}`,
    );
  };
  for (const s of d.stackTable ?? [])
    for (const i of s.locationIndices ?? []) check("a stack's location", i, n.locations);
  for (const loc of d.locationTable ?? []) {
    check("a location's mapping", loc.mappingIndex, n.mappings);
    for (const line of loc.lines ?? []) check("a line's function", line.functionIndex, n.functions);
  }
  for (const f of d.functionTable ?? []) {
    check('a string', f.nameStrindex, n.strings);
    check('a string', f.systemNameStrindex, n.strings);
    check('a string', f.filenameStrindex, n.strings);
  }
  for (const m of d.mappingTable ?? []) check('a string', m.filenameStrindex, n.strings);
  for (const a of d.attributeTable ?? []) {
    check('a string', a.keyStrindex, n.strings);
    check('a string', a.unitStrindex, n.strings);
    check('a string', a.value?.stringValueStrindex, n.strings);
  }
  for (const rp of data.resourceProfiles ?? []) {
    for (const sp of rp.scopeProfiles ?? []) {
      for (const p of sp.profiles ?? []) {
        check('a string', p.sampleType?.typeStrindex, n.strings);
        check('a string', p.sampleType?.unitStrindex, n.strings);
        check('a string', p.periodType?.typeStrindex, n.strings);
        check('a string', p.periodType?.unitStrindex, n.strings);
        for (const i of p.attributeIndices ?? []) check("a profile's attribute", i, n.attributes);
        for (const s of p.samples ?? []) {
          for (const i of s.attributeIndices ?? []) sampleCheck('attribute', i, n.attributes);
          sampleCheck('stack', s.stackIndex, n.stacks);
          sampleCheck('link', s.linkIndex, n.links);
          const v = s.values?.length ?? 0;
          const t = s.timestampsUnixNano?.length ?? 0;
          if (v > 0 && t > 0 && v !== t) {
            throw new IngestError(
              'malformed',
              `${where}a sample has ${v} values and ${t} timestamps: the format wants one value per timestamp`,
            );
          }
        }
      }
    }
  }
}

const big = (v: Int64 | undefined): bigint => (v === undefined ? 0n : BigInt(v.toString()));
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** One regrouped profile: the OTLP Profiles of one resource, start time and duration. */
class Group {
  readonly members: { profile: OtlpProfile; scope: string }[] = [];
  constructor(
    readonly dict: OtlpDictionary,
    readonly resourceText: string,
    readonly resourceAttributes: string[],
    readonly time: bigint,
    readonly duration: bigint,
  ) {}

  private str(i: number | undefined): string {
    return (i !== undefined && this.dict.stringTable?.[i]) || '';
  }

  typeNames(): string {
    return this.members
      .map((m) => `${this.str(m.profile.sampleType?.typeStrindex)}/${this.str(m.profile.sampleType?.unitStrindex)}`)
      .join(', ');
  }

  /**
   * The group as one pprof protobuf (uncompressed). Every sample writes its stack's location ids, and
   * samples of one stack with other attributes are other samples: a payload can make that N × L from
   * N samples and one stack of L, so the ids written are held to MAX_DECOMPRESSED_BYTES (at least a
   * byte each), the size any pprof file is held to, before any is written.
   */
  toPprof(maxDecompressedBytes: number): Uint8Array {
    const d = this.dict;
    const strings: string[] = [''];
    const stringIds = new Map<string, number>([['', 0]]);
    const s = (text: string): number => {
      let id = stringIds.get(text);
      if (id === undefined) {
        id = strings.length;
        strings.push(text);
        stringIds.set(text, id);
      }
      return id;
    };
    const ds = (i: number | undefined) => s(this.str(i));

    // Sample types in the order the Profiles come; two Profiles of one type add into one column.
    const typeIds = new Map<string, number>();
    const types: [string, string][] = [];
    const column = this.members.map((m) => {
      const t = this.str(m.profile.sampleType?.typeStrindex);
      const u = this.str(m.profile.sampleType?.unitStrindex);
      const key = `${t}\u0000${u}`;
      let c = typeIds.get(key);
      if (c === undefined) {
        c = types.length;
        types.push([t, u]);
        typeIds.set(key, c);
      }
      return c;
    });

    // Samples with one identity (stack, attributes, link) across the Profiles become one sample.
    const samples = new Map<string, { stack: number; attrs: number[]; link: number; values: bigint[] }>();
    this.members.forEach((m, mi) => {
      for (const smp of m.profile.samples ?? []) {
        const attrs = [...(smp.attributeIndices ?? [])].sort((a, b) => a - b);
        const stack = smp.stackIndex ?? 0;
        const link = smp.linkIndex ?? 0;
        const key = `${stack}|${attrs.join(',')}|${link}`;
        let entry = samples.get(key);
        if (!entry) {
          entry = { stack, attrs, link, values: types.map(() => 0n) };
          samples.set(key, entry);
        }
        let v = 0n;
        if (smp.values && smp.values.length > 0) for (const x of smp.values) v += big(x);
        else v = BigInt(smp.timestampsUnixNano?.length ?? 0);
        const c = column[mi]!;
        const sum = entry.values[c]! + v;
        if (sum < INT64_MIN || sum > INT64_MAX) {
          throw new IngestError('value-out-of-range', `a sample's ${types[c]![0]} values add up past a 64-bit integer`);
        }
        entry.values[c] = sum;
      }
    });

    const w = protobuf.Writer.create();
    // protobufjs writes a 64-bit integer given as decimal text exactly (through its Long).
    const long = (v: bigint) => v.toString();
    const message = (field: number, body: (x: protobuf.Writer) => void) => {
      w.uint32((field << 3) | 2).fork();
      body(w);
      w.ldelim();
    };
    const names = distinctTypeNames(types);
    for (const [c, [, u]] of types.entries()) {
      message(1, (x) => {
        x.uint32(8).int64(s(names[c]!));
        x.uint32(16).int64(s(u));
      });
    }

    let refs = 0;
    for (const smp of samples.values()) {
      refs += d.stackTable?.[smp.stack]?.locationIndices?.length ?? 0;
      if (refs > maxDecompressedBytes) {
        throw new IngestError(
          'too-large',
          `the OTLP payload's ${samples.size} samples reach more than ${maxDecompressedBytes} locations in all, over MAX_DECOMPRESSED_BYTES for the profile they make (every sample lists its stack); export a shorter window or fewer attributes per sample`,
        );
      }
    }

    // Locations are given ids from 1 (pprof's 0 is "none"); only those a sample reaches are written.
    const usedLocations = new Set<number>();
    for (const smp of samples.values()) {
      for (const li of d.stackTable?.[smp.stack]?.locationIndices ?? []) usedLocations.add(li);
    }
    for (const smp of samples.values()) {
      message(2, (x) => {
        const locs = d.stackTable?.[smp.stack]?.locationIndices ?? [];
        // packed into one byte run: one writer operation per sample, not one per location
        if (locs.length > 0) x.uint32(10).bytes(packedIds(locs));
        x.uint32(18).fork();
        for (const v of smp.values) x.int64(long(v));
        x.ldelim();
        for (const ai of smp.attrs) {
          const a = d.attributeTable?.[ai];
          if (!a) continue;
          const key = this.str(a.keyStrindex);
          const label = labelValue(a.value, (i) => this.str(i));
          if (label === null) continue;
          x.uint32(26).fork();
          x.uint32(8).int64(s(key));
          if (typeof label === 'bigint') {
            x.uint32(24).int64(long(label));
            const unit = this.str(a.unitStrindex);
            if (unit) x.uint32(32).int64(s(unit));
          } else {
            x.uint32(16).int64(s(label));
          }
          x.ldelim();
        }
        const link = smp.link > 0 ? d.linkTable?.[smp.link] : undefined;
        if (link) {
          for (const [key, bytes] of [
            ['trace_id', link.traceId],
            ['span_id', link.spanId],
          ] as const) {
            if (!bytes || bytes.length === 0) continue;
            x.uint32(26).fork();
            x.uint32(8).int64(s(key));
            x.uint32(16).int64(s(Buffer.from(bytes).toString('hex')));
            x.ldelim();
          }
        }
      });
    }

    const usedFunctions = new Set<number>();
    const usedMappings = new Set<number>();
    for (const li of usedLocations) {
      const loc = d.locationTable?.[li];
      if (!loc) continue;
      if (loc.mappingIndex) usedMappings.add(loc.mappingIndex);
      for (const line of loc.lines ?? []) if (line.functionIndex) usedFunctions.add(line.functionIndex);
    }
    for (const mi of [...usedMappings].sort((a, b) => a - b)) {
      const m = d.mappingTable![mi]!;
      message(3, (x) => {
        x.uint32(8).uint64(mi);
        x.uint32(16).uint64(long(big(m.memoryStart)));
        x.uint32(24).uint64(long(big(m.memoryLimit)));
        x.uint32(32).uint64(long(big(m.fileOffset)));
        x.uint32(40).int64(ds(m.filenameStrindex));
      });
    }
    for (const li of [...usedLocations].sort((a, b) => a - b)) {
      const loc = d.locationTable?.[li] ?? {};
      message(4, (x) => {
        x.uint32(8).uint64(li + 1);
        if (loc.mappingIndex) x.uint32(16).uint64(loc.mappingIndex);
        x.uint32(24).uint64(long(big(loc.address)));
        for (const line of loc.lines ?? []) {
          x.uint32(34).fork();
          if (line.functionIndex) x.uint32(8).uint64(line.functionIndex);
          x.uint32(16).int64(long(big(line.line)));
          if (line.column) x.uint32(24).int64(long(big(line.column)));
          x.ldelim();
        }
      });
    }
    for (const fi of [...usedFunctions].sort((a, b) => a - b)) {
      const f = d.functionTable![fi]!;
      message(5, (x) => {
        x.uint32(8).uint64(fi);
        x.uint32(16).int64(ds(f.nameStrindex));
        x.uint32(24).int64(ds(f.systemNameStrindex));
        x.uint32(32).int64(ds(f.filenameStrindex));
        x.uint32(40).int64(long(big(f.startLine)));
      });
    }

    const first = this.members[0]!.profile;
    const withPeriod = this.members.find((m) => m.profile.periodType)?.profile ?? first;
    const comments = [...this.resourceAttributes];
    for (const scope of new Set(this.members.map((m) => m.scope))) if (scope) comments.push(`scope: ${scope}`);
    for (const m of this.members) {
      for (const ai of m.profile.attributeIndices ?? []) {
        const a = d.attributeTable?.[ai];
        const v = a ? labelValue(a.value, (i) => this.str(i)) : null;
        if (a && v !== null) comments.push(`${this.str(a.keyStrindex)}=${v}`);
      }
    }
    const commentIds = comments.map(s);
    const periodType = withPeriod.periodType;
    const ptType = periodType ? ds(periodType.typeStrindex) : 0;
    const ptUnit = periodType ? ds(periodType.unitStrindex) : 0;
    const defaultType = s(names[names.length - 1] ?? '');

    if (this.time) w.uint32(72).int64(long(this.time));
    if (this.duration) w.uint32(80).int64(long(this.duration));
    if (periodType) {
      message(11, (x) => {
        x.uint32(8).int64(ptType);
        x.uint32(16).int64(ptUnit);
      });
    }
    const period = big(withPeriod.period);
    if (period) w.uint32(96).int64(long(period));
    for (const c of commentIds) w.uint32(104).int64(c);
    w.uint32(112).int64(defaultType);
    // The string table goes last, once every string is interned: pprof readers resolve indices
    // after reading the whole message, so the order of fields does not matter to them.
    for (const text of strings) w.uint32(50).string(text);
    return w.finish();
  }
}

/** Location indices as pprof location ids (index + 1), in protobuf's packed varint encoding. */
function packedIds(indices: ArrayLike<number>): Uint8Array {
  let size = 0;
  for (let i = 0; i < indices.length; i++) {
    let v = indices[i]! + 1;
    do {
      size++;
      v = Math.floor(v / 128);
    } while (v > 0);
  }
  const out = new Uint8Array(size);
  let p = 0;
  for (let i = 0; i < indices.length; i++) {
    let v = indices[i]! + 1;
    while (v >= 128) {
      out[p++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    out[p++] = v;
  }
  return out;
}

/**
 * The names the sample types get. pprof, and stagediff, tell sample types apart by name; OTLP by name
 * and unit, and async-profiler names both of a profile's types by its event (`cpu`/`count` and
 * `cpu`/`nanoseconds`; `perf_events`/`count` and `perf_events`/`ns`; `noop`/`count` and `noop`/`total`).
 * Where a name is shared, its one type counted in `count` is named `samples` (pprof's name for the
 * count of a sampled profile) and keeps the unit; any type still sharing a name is named `NAME_UNIT`.
 */
export function distinctTypeNames(types: readonly (readonly [string, string])[]): string[] {
  const tally = (names: readonly string[]) => {
    const m = new Map<string, number>();
    for (const n of names) m.set(n, (m.get(n) ?? 0) + 1);
    return m;
  };
  const byName = tally(types.map(([t]) => t));
  const counts = tally(types.filter(([, u]) => u === 'count').map(([t]) => t));
  const names = types.map(([t, u]) =>
    byName.get(t)! > 1 && u === 'count' && counts.get(t) === 1 && !byName.has('samples') ? 'samples' : t,
  );
  const again = tally(names);
  return names.map((n, i) => (again.get(n)! > 1 ? `${n}_${types[i]![1]}` : n));
}

/** An attribute's value as a label: a string, an integer (a numeric label), or null when empty. */
function labelValue(v: OtlpAnyValue | undefined, str: (i: number) => string): string | bigint | null {
  if (!v) return null;
  if (v.stringValue !== undefined && v.stringValue !== '') return v.stringValue;
  if (v.stringValueStrindex !== undefined && v.stringValueStrindex !== 0) return str(v.stringValueStrindex);
  if (v.intValue !== undefined && v.intValue !== null) return big(v.intValue);
  if (v.boolValue !== undefined) return String(v.boolValue);
  if (v.doubleValue !== undefined) return String(v.doubleValue);
  if (v.bytesValue !== undefined && v.bytesValue.length > 0) return Buffer.from(v.bytesValue).toString('hex');
  if (v.arrayValue) {
    return (v.arrayValue.values ?? [])
      .map((x) => labelValue(x, str))
      .filter((x) => x !== null)
      .join(',');
  }
  if (v.kvlistValue) {
    return (v.kvlistValue.values ?? [])
      .map(
        (kv: OtlpKeyValue) =>
          `${kv.key ?? (kv.keyStrindex !== undefined ? str(kv.keyStrindex) : '')}=${labelValue(kv.value, str) ?? ''}`,
      )
      .join(',');
  }
  return null;
}

/** Sorts a payload's Profiles into groups by resource, start time and duration. */
function appendGroups(data: OtlpProfilesData, groups: Group[]): void {
  const dict = data.dictionary ?? {};
  const str = (i: number | undefined) => (i !== undefined && dict.stringTable?.[i]) || '';
  for (const rp of data.resourceProfiles ?? []) {
    const attrs = (rp.resource?.attributes ?? []).map(
      (kv) => `${kv.key || str(kv.keyStrindex)}=${labelValue(kv.value, str) ?? ''}`,
    );
    const resourceText = attrs.join(' ');
    const local: Group[] = [];
    for (const sp of rp.scopeProfiles ?? []) {
      const scope = [sp.scope?.name, sp.scope?.version].filter(Boolean).join(' ');
      for (const p of sp.profiles ?? []) {
        const time = big(p.timeUnixNano);
        const duration = big(p.durationNano);
        let g = local.find((x) => x.time === time && x.duration === duration);
        if (!g) {
          g = new Group(
            dict,
            resourceText,
            attrs.map((a) => `resource: ${a}`),
            time,
            duration,
          );
          local.push(g);
          groups.push(g);
        }
        g.members.push({ profile: p, scope });
      }
    }
  }
}

export { isGzip };

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
