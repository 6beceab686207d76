import protobuf from 'protobufjs';
import { repoRoot } from './paths.ts';

/** One location of a test profile: its lines innermost first, and its mapping's file if any. */
export interface LocationSpec {
  /** `line`: the line number in `file` (1 when not given). */
  lines: { fn: string; file?: string; line?: number }[];
  mapping?: string;
}

/** A profile to encode: samples are stacks of indices into `locations` (leaf first) and values. */
export interface ProfileSpec {
  sampleTypes: [string, string][];
  locations: LocationSpec[];
  samples: { stack: number[]; values: number[] }[];
  dropFrames?: string;
  keepFrames?: string;
}

const root = protobuf.loadSync(`${repoRoot}proto/profile.proto`);
const ProfileMessage = root.lookupType('Profile');

/**
 * Encodes a profile with the format's own schema (proto/profile.proto) through protobufjs, so tests
 * can build small, exact, hostile-if-need-be pprof files without going through our decoder's code.
 */
export function encodePprof(spec: ProfileSpec): Uint8Array {
  const strings = [''];
  const str = (s: string) => {
    let i = strings.indexOf(s);
    if (i < 0) i = strings.push(s) - 1;
    return i;
  };
  const functions = new Map<string, { id: number; name: number; filename: number }>();
  const fnId = (fn: string, file: string) => {
    const key = `${fn}\u0000${file}`;
    let f = functions.get(key);
    if (!f) {
      f = { id: functions.size + 1, name: str(fn), filename: str(file) };
      functions.set(key, f);
    }
    return f.id;
  };
  const mappings = new Map<string, number>();
  const locations = spec.locations.map((l, i) => {
    let mappingId = 0;
    if (l.mapping !== undefined) {
      mappingId = mappings.get(l.mapping) ?? mappings.size + 1;
      mappings.set(l.mapping, mappingId);
    }
    return {
      id: i + 1,
      mappingId,
      address: 0x1000 + i,
      line: l.lines.map((x) => ({ functionId: fnId(x.fn, x.file ?? ''), line: x.line ?? 1 })),
    };
  });
  const msg = {
    sampleType: spec.sampleTypes.map(([type, unit]) => ({ type: str(type), unit: str(unit) })),
    sample: spec.samples.map((s) => ({ locationId: s.stack.map((i) => i + 1), value: s.values })),
    mapping: [...mappings].map(([file, id]) => ({ id, memoryStart: 0, memoryLimit: 0, filename: str(file) })),
    location: locations,
    function: [...functions.values()],
    dropFrames: spec.dropFrames !== undefined ? str(spec.dropFrames) : 0,
    keepFrames: spec.keepFrames !== undefined ? str(spec.keepFrames) : 0,
    stringTable: strings,
  };
  return ProfileMessage.encode(ProfileMessage.fromObject(msg)).finish();
}
