/**
 * The OpenTelemetry profiles signal (`opentelemetry.proto.profiles.v1development`, as the OTLP
 * protocol releases 1.10 and 1.11 lay it out on the wire — the two are identical there), written for
 * stagediff from the protocol's field list: message names, field names, numbers and types are facts
 * of the format. Only what a profile needs is declared; anything else on the wire is skipped.
 *
 * protobufjs reads it at first use (`otlpTypes`): the schema of this signal still moves between
 * releases, and a declared schema is the one place a move is made. Field names are the protocol's,
 * turned to lowerCamelCase by protobufjs — the names OTLP JSON uses.
 */
import protobuf from 'protobufjs';

const PROFILES_PROTO = `
syntax = "proto3";
package otlp;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
    int32 string_value_strindex = 8;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue {
  string key = 1;
  AnyValue value = 2;
  int32 key_strindex = 3;
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
  repeated KeyValueAndUnit attribute_table = 6;
  repeated Stack stack_table = 7;
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
  ValueType sample_type = 1;
  repeated Sample samples = 2;
  fixed64 time_unix_nano = 3;
  uint64 duration_nano = 4;
  ValueType period_type = 5;
  int64 period = 6;
  bytes profile_id = 7;
  uint32 dropped_attributes_count = 8;
  string original_payload_format = 9;
  repeated int32 attribute_indices = 11;
}
message Link {
  bytes trace_id = 1;
  bytes span_id = 2;
}
message ValueType {
  int32 type_strindex = 1;
  int32 unit_strindex = 2;
}
message Sample {
  int32 stack_index = 1;
  repeated int32 attribute_indices = 2;
  int32 link_index = 3;
  repeated int64 values = 4;
  repeated fixed64 timestamps_unix_nano = 5;
}
message Mapping {
  uint64 memory_start = 1;
  uint64 memory_limit = 2;
  uint64 file_offset = 3;
  int32 filename_strindex = 4;
  repeated int32 attribute_indices = 5;
}
message Stack { repeated int32 location_indices = 1; }
message Location {
  int32 mapping_index = 1;
  uint64 address = 2;
  repeated Line lines = 3;
  repeated int32 attribute_indices = 4;
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
message KeyValueAndUnit {
  int32 key_strindex = 1;
  AnyValue value = 2;
  int32 unit_strindex = 3;
}
`;

/** A 64-bit integer as protobufjs hands it over: a Long (exact) or, from JSON, a number or a string. */
export type Int64 = protobuf.Long | number | string;

export interface OtlpAnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: Int64;
  doubleValue?: number;
  arrayValue?: { values?: OtlpAnyValue[] };
  kvlistValue?: { values?: OtlpKeyValue[] };
  bytesValue?: Uint8Array;
  stringValueStrindex?: number;
}
export interface OtlpKeyValue {
  key?: string;
  value?: OtlpAnyValue;
  keyStrindex?: number;
}
export interface OtlpValueType {
  typeStrindex?: number;
  unitStrindex?: number;
}
export interface OtlpSample {
  stackIndex?: number;
  attributeIndices?: number[];
  linkIndex?: number;
  values?: Int64[];
  timestampsUnixNano?: Int64[];
}
export interface OtlpProfile {
  sampleType?: OtlpValueType;
  samples?: OtlpSample[];
  timeUnixNano?: Int64;
  durationNano?: Int64;
  periodType?: OtlpValueType;
  period?: Int64;
  attributeIndices?: number[];
}
export interface OtlpDictionary {
  mappingTable?: { memoryStart?: Int64; memoryLimit?: Int64; fileOffset?: Int64; filenameStrindex?: number }[];
  locationTable?: {
    mappingIndex?: number;
    address?: Int64;
    lines?: { functionIndex?: number; line?: Int64; column?: Int64 }[];
  }[];
  functionTable?: {
    nameStrindex?: number;
    systemNameStrindex?: number;
    filenameStrindex?: number;
    startLine?: Int64;
  }[];
  linkTable?: { traceId?: Uint8Array; spanId?: Uint8Array }[];
  stringTable?: string[];
  attributeTable?: { keyStrindex?: number; value?: OtlpAnyValue; unitStrindex?: number }[];
  /** As decoded, an array; built from a release 1.7 Profile, a view of its location indices. */
  stackTable?: { locationIndices?: number[] | Int32Array }[];
}
export interface OtlpProfilesData {
  resourceProfiles?: {
    resource?: { attributes?: OtlpKeyValue[] };
    scopeProfiles?: { scope?: { name?: string; version?: string }; profiles?: OtlpProfile[] }[];
  }[];
  dictionary?: OtlpDictionary;
}

let profilesData: protobuf.Type | undefined;

/** The `ProfilesData` message type (an `ExportProfilesServiceRequest` has the same two fields). */
export function profilesDataType(): protobuf.Type {
  profilesData ??= protobuf.parse(PROFILES_PROTO).root.lookupType('otlp.ProfilesData');
  return profilesData;
}
