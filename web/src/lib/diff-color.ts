/**
 * Colours of the diff flamegraph: red = more in the target, blue = less, neutral grey below the noise
 * floor. Intensity grows with the frame's relative change (delta / larger side), so a frame that doubled
 * is saturated whatever its size, while the noise floor (a fraction of the larger profile total) keeps
 * tiny jitters grey. A frame whose change the runs tested and found inside their noise (p > α) is hatched
 * grey, so "too small to matter" and "tested: no change" never look alike.
 */

export interface DiffColorInput {
  base: number;
  target: number;
  delta: number;
}

export interface DiffColorOptions {
  /** Fraction of `reference` below which |delta| is neutral. */
  noiseFloor: number;
  /** The larger of the two profile totals, in the same unit as delta. */
  reference: number;
  dark?: boolean;
}

export type DiffClass = 'more' | 'less' | 'neutral' | 'new' | 'removed';

export function classifyDiff(d: DiffColorInput, opts: DiffColorOptions): { cls: DiffClass; intensity: number } {
  const floor = Math.abs(opts.reference) * opts.noiseFloor;
  if (Math.abs(d.delta) <= floor || d.delta === 0) return { cls: 'neutral', intensity: 0 };
  if (d.base === 0 && d.target !== 0) return { cls: 'new', intensity: 1 };
  if (d.target === 0 && d.base !== 0) return { cls: 'removed', intensity: 1 };
  const larger = Math.max(Math.abs(d.base), Math.abs(d.target));
  const rel = larger > 0 ? Math.abs(d.delta) / larger : 1;
  // sqrt so that a 10 % change is already clearly tinted, 100 % is saturated.
  const intensity = Math.min(1, 0.2 + 0.8 * Math.sqrt(rel));
  return { cls: d.delta > 0 ? 'more' : 'less', intensity };
}

function mix(a: [number, number, number], b: [number, number, number], t: number): string {
  const c = a.map((v, i) => Math.round(v + ((b[i] ?? 0) - v) * t));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

const RED: [number, number, number] = [214, 39, 40];
const BLUE: [number, number, number] = [31, 100, 200];

export function neutralColor(dark = false): string {
  return dark ? 'rgb(90, 94, 102)' : 'rgb(214, 214, 214)';
}

export function diffColor(d: DiffColorInput, opts: DiffColorOptions): string {
  const { cls, intensity } = classifyDiff(d, opts);
  const neutral: [number, number, number] = opts.dark ? [90, 94, 102] : [214, 214, 214];
  if (cls === 'neutral') return neutralColor(opts.dark);
  if (cls === 'more' || cls === 'new') return mix(neutral, RED, intensity);
  return mix(neutral, BLUE, intensity);
}

/** The hatch of frames whose change is within the run-to-run noise: stripes over a pale ground. */
export function hatchColors(dark = false): { ground: string; stripe: string } {
  return dark
    ? { ground: 'rgb(52, 55, 62)', stripe: 'rgb(120, 124, 132)' }
    : { ground: 'rgb(246, 246, 246)', stripe: 'rgb(170, 170, 170)' };
}

/** Legend stops for the colour scale (relative change → colour). */
export function legendStops(dark = false): { label: string; color: string }[] {
  const opts = { noiseFloor: 0, reference: 1, dark };
  return [
    { label: 'removed / −100 %', color: diffColor({ base: 1, target: 0.0000001, delta: -1 }, opts) },
    { label: '−25 %', color: diffColor({ base: 1, target: 0.75, delta: -0.25 }, opts) },
    { label: 'below noise floor', color: neutralColor(dark) },
    { label: '+25 %', color: diffColor({ base: 0.75, target: 1, delta: 0.25 }, opts) },
    { label: 'new / +100 %', color: diffColor({ base: 0.0000001, target: 1, delta: 1 }, opts) },
  ];
}
