/**
 * OTLP profiles as protocol release 1.7.0 laid them out on the wire — the layout async-profiler 4.2
 * (its agent's `otlp` output and its jfr-converter) writes. Field names and numbers are the protocol's
 * (opentelemetry-proto v1.7.0, `profiles/v1development`); only what a profile needs is declared.
 *
 * What differs from 1.10, and how a 1.7 payload is turned into the 1.10 objects the reader regroups:
 * - a Profile has several sample types (`sample_type` repeated, a value per type in each Sample): it
 *   becomes one 1.10 Profile per type, all of the same time and duration, so they regroup into one;
 * - a Sample's stack is a slice (`locations_start_index`, `locations_length`) of its Profile's
 *   `location_indices`: each distinct slice becomes an entry of a stack table (entry 0 the empty one);
 * - the dictionary's attributes are `KeyValue`s with the key as text, and their units a separate
 *   `attribute_units` table keyed by the key's string index: keys are interned into the string table;
 * - times are `time_nanos`/`duration_nanos`; Location's attributes are field 5 (4 was `is_folded`);
 * - a ValueType has an aggregation temporality, not used: async-profiler marks its types cumulative,
 *   which for it means since its recording started — the Profile's own window (its collapsed output
 *   of the same recording gives the same values, fixtures/otlp/java).
 *
 * A 1.7 payload is told from a later one by its first Profile's wire types (`detectRelease17`):
 * field 3 is `location_indices` (varint or packed) in 1.7 and the fixed64 `time_unix_nano` since 1.8;
 * field 5 is the varint `duration_nanos` in 1.7 and the message `period_type` since.
 */
import protobuf from 'protobufjs';
import { IngestError } from '../errors.ts';
import type { Int64, OtlpAnyValue, OtlpDictionary, OtlpProfile, OtlpProfilesData, OtlpSample } from './schema.ts';

const RELEASE_1_7_PROTO = `
syntax = "proto3";
package otlp17;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue {
  string key = 1;
  AnyValue value = 2;
}
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
}
message Resource {
  repeated KeyValue attributes = 1;
}

message ProfilesData {
  repeated ResourceProfiles resource_profiles = 1;
  ProfilesDictionary dictionary = 2;
}
message ProfilesDictionary {
  repeated Mapping mapping_table = 1;
  repeated Location location_table = 2;
  repeated Function function_table = 3;
  repeated Link link_table = 4;
  repeated string string_table = 5;
  repeated KeyValue attribute_table = 6;
  repeated AttributeUnit attribute_units = 7;
}
message ResourceProfiles {
  Resource resource = 1;
  repeated ScopeProfiles scope_profiles = 2;
  string schema_url = 3;
}
message ScopeProfiles {
  InstrumentationScope scope = 1;
  repeated Profile profiles = 2;
  string schema_url = 3;
}
message Profile {
  repeated ValueType sample_type = 1;
  repeated Sample sample = 2;
  repeated int32 location_indices = 3;
  int64 time_nanos = 4;
  int64 duration_nanos = 5;
  ValueType period_type = 6;
  int64 period = 7;
  repeated int32 comment_strindices = 8;
  int32 default_sample_type_index = 9;
  bytes profile_id = 10;
  uint32 dropped_attributes_count = 11;
  string original_payload_format = 12;
  repeated int32 attribute_indices = 14;
}
message AttributeUnit {
  int32 attribute_key_strindex = 1;
  int32 unit_strindex = 2;
}
message Link {
  bytes trace_id = 1;
  bytes span_id = 2;
}
message ValueType {
  int32 type_strindex = 1;
  int32 unit_strindex = 2;
  int32 aggregation_temporality = 3;
}
message Sample {
  int32 locations_start_index = 1;
  int32 locations_length = 2;
  repeated int64 value = 3;
  repeated int32 attribute_indices = 4;
  optional int32 link_index = 5;
  repeated uint64 timestamps_unix_nano = 6;
}
message Mapping {
  uint64 memory_start = 1;
  uint64 memory_limit = 2;
  uint64 file_offset = 3;
  int32 filename_strindex = 4;
  repeated int32 attribute_indices = 5;
}
message Location {
  optional int32 mapping_index = 1;
  uint64 address = 2;
  repeated Line line = 3;
  bool is_folded = 4;
  repeated int32 attribute_indices = 5;
}
message Line {
  int32 function_index = 1;
  int64 line = 2;
  int64 column = 3;
}
message Function {
  int32 name_strindex = 1;
  int32 system_name_strindex = 2;
  int32 filename_strindex = 3;
  int64 start_line = 4;
}
`;

interface ValueType17 {
  typeStrindex?: number;
  unitStrindex?: number;
}
interface Sample17 {
  locationsStartIndex?: number;
  locationsLength?: number;
  value?: Int64[];
  attributeIndices?: number[];
  linkIndex?: number | null;
  timestampsUnixNano?: Int64[];
}
interface Profile17 {
  sampleType?: ValueType17[];
  sample?: Sample17[];
  locationIndices?: number[];
  timeNanos?: Int64;
  durationNanos?: Int64;
  periodType?: ValueType17;
  period?: Int64;
  attributeIndices?: number[];
}
interface KeyValue17 {
  key?: string;
  value?: OtlpAnyValue;
}
interface ProfilesData17 {
  resourceProfiles?: {
    resource?: { attributes?: KeyValue17[] };
    scopeProfiles?: { scope?: { name?: string; version?: string }; profiles?: Profile17[] }[];
  }[];
  dictionary?: Omit<OtlpDictionary, 'attributeTable' | 'stackTable' | 'locationTable'> & {
    locationTable?: {
      mappingIndex?: number | null;
      address?: Int64;
      line?: NonNullable<NonNullable<OtlpDictionary['locationTable']>[number]['lines']>;
    }[];
    attributeTable?: KeyValue17[];
    attributeUnits?: { attributeKeyStrindex?: number; unitStrindex?: number }[];
  };
}

let release17: protobuf.Type | undefined;

/** The `ProfilesData` message type of release 1.7 (exported for tests that build such a payload). */
export function release17Type(): protobuf.Type {
  release17 ??= protobuf.parse(RELEASE_1_7_PROTO).root.lookupType('otlp17.ProfilesData');
  return release17;
}

/** The layouts a protobuf payload's first Profile can be told apart by. */
export type WireRelease = '1.7' | 'older' | 'later';

/**
 * Which release laid out a protobuf payload, from the wire types of its first Profile's fields (see
 * the module comment): '1.7' when it has a dictionary (ProfilesData field 2) and a 1.7 Profile;
 * 'older' for a 1.7-like Profile with no dictionary (releases before 1.7 kept the tables in the
 * Profile, where field 3 was the mapping table); 'later' otherwise (1.8 onwards, or no Profile).
 */
export function detectRelease17(raw: Uint8Array): WireRelease {
  try {
    let dictionary = false;
    let profile: Uint8Array | undefined;
    for (const [field, , body] of fields(raw)) {
      if (field === 2) dictionary = true;
      if (field === 1 && body && !profile) {
        for (const [f2, , scope] of fields(body)) {
          if (f2 !== 2 || !scope || profile) continue;
          for (const [f3, , p] of fields(scope)) {
            if (f3 === 2 && p) {
              profile = p;
              break;
            }
          }
        }
      }
    }
    if (!profile) return 'later';
    let like17 = false;
    for (const [field, wire] of fields(profile)) {
      if ((field === 3 && wire !== 1) || (field === 5 && wire === 0)) like17 = true;
    }
    if (!like17) return 'later';
    return dictionary ? '1.7' : 'older';
  } catch {
    return 'later';
  }
}

/** The top-level fields of one message: number, wire type and, for a length-delimited one, its bytes. */
function* fields(buf: Uint8Array): Generator<[number, number, Uint8Array | undefined]> {
  const r = protobuf.Reader.create(buf);
  while (r.pos < r.len) {
    const tag = r.uint32();
    const field = tag >>> 3;
    const wire = tag & 7;
    if (wire === 2) {
      const len = r.uint32();
      if (r.pos + len > r.len) throw new Error('truncated');
      yield [field, wire, buf.subarray(r.pos, r.pos + len)];
      r.pos += len;
    } else {
      r.skipType(wire);
      yield [field, wire, undefined];
    }
  }
}

/**
 * Decodes a release 1.7 protobuf payload into the 1.10 objects the reader regroups (module comment);
 * the locations its stacks reach in all are held to `maxDecompressedBytes`.
 */
export function readRelease17(raw: Uint8Array, maxDecompressedBytes: number): OtlpProfilesData {
  let data: ProfilesData17;
  try {
    data = release17Type().decode(raw) as unknown as ProfilesData17;
  } catch (e) {
    throw new IngestError('malformed', `not a valid OTLP profiles protobuf (release 1.7): ${(e as Error).message}`);
  }
  const d = data.dictionary ?? {};
  const strings = [...(d.stringTable ?? [])];
  if (strings.length === 0) strings.push('');
  const stringIds = new Map<string, number>();
  strings.forEach((s, i) => {
    if (!stringIds.has(s)) stringIds.set(s, i);
  });
  const intern = (s: string): number => {
    let id = stringIds.get(s);
    if (id === undefined) {
      id = strings.length;
      strings.push(s);
      stringIds.set(s, id);
    }
    return id;
  };
  const unitOfKey = new Map<number, number>();
  for (const u of d.attributeUnits ?? []) {
    if (u.attributeKeyStrindex !== undefined && u.unitStrindex) unitOfKey.set(u.attributeKeyStrindex, u.unitStrindex);
  }
  const attributeTable = (d.attributeTable ?? []).map((kv) => {
    const keyStrindex = intern(kv.key ?? '');
    return { keyStrindex, value: kv.value, unitStrindex: unitOfKey.get(keyStrindex) ?? 0 };
  });

  // A stack is a view of its Profile's location indices, one per distinct slice: slices may overlap,
  // so what they reach in all is held to MAX_DECOMPRESSED_BYTES, as the pprof they become is.
  const stackTable: { locationIndices: Int32Array }[] = [{ locationIndices: new Int32Array(0) }];
  const stackIds = new Map<string, number>();
  let reached = 0;
  const stackOf = (profileId: number, all: Int32Array, s: Sample17, where: string): number => {
    const start = s.locationsStartIndex ?? 0;
    const length = s.locationsLength ?? 0;
    if (start < 0 || length < 0 || start + length > all.length) {
      throw new IngestError(
        'malformed',
        `${where}a sample's locations ${start}…${start + length} lie outside its Profile's ${all.length} location indices (OTLP release 1.7 layout)`,
      );
    }
    if (length === 0) return 0;
    const key = `${profileId}:${start}:${length}`;
    let id = stackIds.get(key);
    if (id === undefined) {
      reached += length;
      if (reached > maxDecompressedBytes) {
        throw new IngestError(
          'too-large',
          `${where}the samples' stacks reach more than ${maxDecompressedBytes} locations in all, over MAX_DECOMPRESSED_BYTES for the profile they make; export a shorter window`,
        );
      }
      id = stackTable.length;
      stackTable.push({ locationIndices: all.subarray(start, start + length) });
      stackIds.set(key, id);
    }
    return id;
  };
  let profileCount = 0;

  const resourceProfiles = (data.resourceProfiles ?? []).map((rp, ri) => ({
    resource: { attributes: (rp.resource?.attributes ?? []).map((kv) => ({ key: kv.key, value: kv.value })) },
    scopeProfiles: (rp.scopeProfiles ?? []).map((sp) => {
      const profiles: OtlpProfile[] = [];
      for (const [pi, p] of (sp.profiles ?? []).entries()) {
        const where = `Profile ${pi + 1} of resource ${ri + 1}: `;
        const types = p.sampleType ?? [];
        const samples = p.sample ?? [];
        const all = Int32Array.from(p.locationIndices ?? []);
        const profileId = profileCount++;
        const stacks = samples.map((s) => stackOf(profileId, all, s, where));
        for (const s of samples) {
          const n = s.value?.length ?? 0;
          if (n !== 0 && n !== types.length) {
            throw new IngestError(
              'malformed',
              `${where}a sample has ${n} values for ${types.length} sample types: the format wants one value per type`,
            );
          }
        }
        types.forEach((type, ti) => {
          profiles.push({
            sampleType: { typeStrindex: type.typeStrindex, unitStrindex: type.unitStrindex },
            samples: samples.map(
              (s, si): OtlpSample => ({
                stackIndex: stacks[si],
                attributeIndices: s.attributeIndices,
                // proto3 `optional`: protobufjs gives null when the field is absent
                linkIndex: s.linkIndex ?? undefined,
                values: s.value && s.value.length > 0 ? [s.value[ti]!] : [],
                timestampsUnixNano: s.value && s.value.length > 0 ? [] : s.timestampsUnixNano,
              }),
            ),
            timeUnixNano: p.timeNanos,
            durationNano: p.durationNanos,
            periodType: p.periodType,
            period: p.period,
            attributeIndices: p.attributeIndices,
          });
        });
      }
      return { scope: sp.scope, profiles };
    }),
  }));

  return {
    resourceProfiles,
    dictionary: {
      mappingTable: d.mappingTable,
      locationTable: (d.locationTable ?? []).map((loc) => ({
        mappingIndex: loc.mappingIndex ?? undefined,
        address: loc.address,
        lines: loc.line,
      })),
      functionTable: d.functionTable,
      linkTable: d.linkTable,
      stringTable: strings,
      attributeTable,
      stackTable,
    },
  };
}
