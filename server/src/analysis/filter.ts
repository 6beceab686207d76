import type { Profile } from '../model/profile.ts';
import type { GoRegexp } from './go-regexp.ts';
import { type TagFilters, filterProfileByTags, hasTagFilters } from './tag-filter.ts';

/**
 * pprof's sample filters, as `go tool pprof -focus/-ignore/-hide/-show` apply them. Each is a Go
 * regular expression matched anywhere in a frame's function name, its source file name, or the file
 * of the mapping (binary, shared library) the frame's code lies in.
 */
export interface FrameFilters extends TagFilters {
  /** Keep only samples with at least one matching frame. */
  focus?: GoRegexp;
  /** Drop samples with any matching frame (wins over focus). */
  ignore?: GoRegexp;
  /** Remove matching frames from stacks; a frame's own value moves to its caller. */
  hide?: GoRegexp;
  /** Keep only matching frames in stacks (frames without line information never match). */
  show?: GoRegexp;
}

export function hasFilters(f: FrameFilters): boolean {
  return !!(f.focus || f.ignore || f.hide || f.show) || hasTagFilters(f);
}

/**
 * The distinct strings a profile's frames can be matched on, and per frame which: its function name,
 * its file (both absent for a location without line information) and its mapping's file (absent when
 * the location has no mapping). Built once per profile.
 */
interface MatchIndex {
  strings: string[];
  /** frameStrings[3 * frame + k] = index into strings, or -1; k = 0 name, 1 file, 2 mapping. */
  frameStrings: Int32Array;
}

const indexes = new WeakMap<Profile, MatchIndex>();

function matchIndex(p: Profile): MatchIndex {
  let idx = indexes.get(p);
  if (idx) return idx;
  const ids = new Map<string, number>();
  const strings: string[] = [];
  const intern = (s: string): number => {
    let id = ids.get(s);
    if (id === undefined) {
      id = strings.length;
      strings.push(s);
      ids.set(s, id);
    }
    return id;
  };
  const frameStrings = new Int32Array(p.frames.length * 3).fill(-1);
  p.frames.forEach((f, i) => {
    if (f.standIn !== 'no-function') {
      frameStrings[3 * i] = intern(f.standIn === 'no-name' ? '' : f.name);
      frameStrings[3 * i + 1] = intern(f.file);
    }
    if (f.mapping !== undefined) frameStrings[3 * i + 2] = intern(f.mapping);
  });
  idx = { strings, frameStrings };
  indexes.set(p, idx);
  return idx;
}

/**
 * Per frame, 1 when `re` matches its function name, file name or mapping file (pprof's
 * Location.matchesName, line by line). The expression runs once per distinct string, never per sample.
 */
export function matchFrames(p: Profile, re: GoRegexp): Uint8Array {
  const { strings, frameStrings } = matchIndex(p);
  const hit = Uint8Array.from(strings, (s) => (re.test(s) ? 1 : 0));
  const out = new Uint8Array(p.frames.length);
  for (let i = 0; i < out.length; i++) {
    const a = frameStrings[3 * i]!;
    const b = frameStrings[3 * i + 1]!;
    const c = frameStrings[3 * i + 2]!;
    out[i] = (a >= 0 && hit[a]) || (b >= 0 && hit[b]) || (c >= 0 && hit[c]) ? 1 : 0;
  }
  return out;
}

/**
 * Applies focus, ignore, hide and show with pprof's rules (profile.FilterSamplesByName):
 * - a sample is kept when no frame matches ignore and, with focus, at least one frame matches
 *   focus; both look at the stack as it was, before hide and show edit it;
 * - hide removes matching frames, show removes the others (and frames without line information);
 *   a function's flat value thereby moves to the nearest remaining caller;
 * - a sample left with no frame at all is dropped, as is a sample that never had one.
 * Then the tag filters (tagfocus/tagignore/tagshow/taghide, see tag-filter.ts), as pprof applies them.
 * A profile without filters is returned as is.
 */
export function filterProfile(p: Profile, f: FrameFilters): Profile {
  if (!hasFilters(f)) return p;
  const named = f.focus || f.ignore || f.hide || f.show ? filterByName(p, f) : p;
  return filterProfileByTags(named, f);
}

function filterByName(p: Profile, f: FrameFilters): Profile {
  const focus = f.focus ? matchFrames(p, f.focus) : null;
  const ignore = f.ignore ? matchFrames(p, f.ignore) : null;
  const hidden = f.hide ? matchFrames(p, f.hide) : new Uint8Array(p.frames.length);
  if (f.show) {
    const shown = matchFrames(p, f.show);
    p.frames.forEach((fr, i) => {
      if (!shown[i] || fr.standIn === 'no-function') hidden[i] = 1;
    });
  }
  const numStacks = p.stackOffsets.length - 1;
  const keepStack = new Uint8Array(numStacks);
  const offsets = new Uint32Array(numStacks + 1);
  const frames: number[] = [];
  for (let st = 0; st < numStacks; st++) {
    const a = p.stackOffsets[st]!;
    const b = p.stackOffsets[st + 1]!;
    let focused = !focus && b > a;
    let ignored = false;
    for (let i = a; i < b; i++) {
      const fr = p.stackFrames[i]!;
      if (focus?.[fr]) focused = true;
      if (ignore?.[fr]) ignored = true;
    }
    if (focused && !ignored) {
      const before = frames.length;
      for (let i = a; i < b; i++) if (!hidden[p.stackFrames[i]!]) frames.push(p.stackFrames[i]!);
      keepStack[st] = frames.length > before ? 1 : 0;
    }
    offsets[st + 1] = frames.length;
  }
  const kept: number[] = [];
  for (let s = 0; s < p.sampleStack.length; s++) if (keepStack[p.sampleStack[s]!]) kept.push(s);
  const idx = Uint32Array.from(kept);
  return {
    ...p,
    stackOffsets: offsets,
    stackFrames: Uint32Array.from(frames),
    sampleStack: idx.map((s) => p.sampleStack[s]!),
    values: p.values.map((col) => Float64Array.from(idx, (s) => col[s]!)),
    sampleLabelSet: idx.map((s) => p.sampleLabelSet[s]!),
    stats: { ...p.stats, numSamples: kept.length },
  };
}
