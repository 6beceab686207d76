import type { Profile } from '../../model/profile.ts';
import { IngestError } from '../errors.ts';
import { type ContainerLimits, defaultContainerLimits, isGzip, unwrap } from './container.ts';
import { type DecodeLimits, decodeProfile, defaultDecodeLimits } from './decode.ts';

export type PprofLimits = ContainerLimits & DecodeLimits;
export const defaultPprofLimits: PprofLimits = { ...defaultContainerLimits, ...defaultDecodeLimits };

/**
 * Confidence that a file is a pprof profile, from its first bytes: gzip magic (pprof is gzip'd by
 * every Go writer), or a raw protobuf whose first field is a sample_type (field 1, length-delimited)
 * — what Go's encoder writes first.
 */
export function detect(head: Uint8Array, fileName?: string): number {
  const byName =
    fileName !== undefined &&
    /\.(pb\.gz|pprof|prof|pb)$|^(cpu|heap|allocs|mutex|block|goroutine|profile)(\.\w+)?$/i.test(basename(fileName));
  if (isGzip(head)) return byName ? 0.95 : 0.6;
  if (head.length >= 2 && head[0] === 0x0a && head[1]! < 0x80 && head[1]! > 0) return byName ? 0.9 : 0.5;
  return byName ? 0.05 : 0;
}

/** Parses a pprof file (gzip or raw protobuf) into the canonical Profile, or throws IngestError. */
export function parsePprof(bytes: Uint8Array, limits: Partial<PprofLimits> = {}): Profile {
  const l = { ...defaultPprofLimits, ...limits };
  const raw = unwrap(bytes, l);
  try {
    return decodeProfile(raw, l);
  } catch (e) {
    if (e instanceof IngestError) throw e;
    // A RangeError from a typed array or an unexpected shape is still bad input, not a crash.
    throw new IngestError('not-a-profile', `not a valid pprof profile: ${(e as Error).message}`);
  }
}

function basename(p: string): string {
  const i = p.lastIndexOf('/');
  return i >= 0 ? p.slice(i + 1) : p;
}
