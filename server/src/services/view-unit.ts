import type { Artifact, ComparisonTree } from '../store/index.ts';
import { maxOf, minOf } from '../analysis/extent.ts';
import { flatCum } from '../analysis/flat-cum.ts';
import { type Granularity, granularityKeys } from '../analysis/granularity.ts';
import { estimate } from '../analysis/significance.ts';
import type { Flamegraph, Sandwich, Trajectory, ViewModeParam, ViewPerRequest } from '../api/views.ts';
import type { ProfileKind } from '../model/profile.ts';
import type { AnalysisService } from './analysis.ts';
import { ServiceError } from './errors.ts';
import { describeDivisor } from './requests.ts';
import { findStage, profilesOfKind, summaryOf } from './stage-profiles.ts';

/*
 * One unit on every tab. A single stage's tree (flamegraph, sandwich) is computed as recorded, as go tool
 * pprof shows it; this module then reads it in the unit the page's one mode control asks for, with the
 * per-request divisor the diff uses (requests.ts): each profile divided by the requests of its own run,
 * a merged profile by their sum. `auto` is per request when every profile of the stage has its own run
 * (the diff's rule for each of its sides), else absolute.
 */

/** The unit fields every single-stage view carries (api/views.ts ViewUnitFields). */
export interface ViewUnit {
  mode: 'absolute' | 'per-request' | 'share';
  modeReason: string | null;
  perRequest: ViewPerRequest | null;
}

/** A view as computed, before its unit is chosen. */
export type Recorded<T> = Omit<T, keyof ViewUnit>;

const ABSOLUTE: ViewUnit = { mode: 'absolute', modeReason: null, perRequest: null };

/**
 * The unit a stage's view of `kind` reads in, and the divisor: `profiles` are the ids of the profiles
 * merged into it. A per-request view asked for where a profile has no requests is refused naming `mode`.
 */
export async function chooseUnit(
  svc: AnalysisService,
  tree: ComparisonTree,
  stageId: string,
  kind: ProfileKind,
  sampleType: string,
  profiles: readonly string[],
  asked: ViewModeParam,
): Promise<{ unit: ViewUnit; divisor: number }> {
  if (asked === 'absolute') return { unit: ABSOLUTE, divisor: 1 };
  if (asked === 'normalize')
    return {
      unit: {
        ...ABSOLUTE,
        modeReason: 'normalize scales one stage to another: a single stage reads as recorded',
      },
      divisor: 1,
    };
  if (asked === 'share') return { unit: { mode: 'share', modeReason: null, perRequest: null }, divisor: Number.NaN };
  const st = findStage(tree, stageId);
  const ids = new Set(profiles);
  const artifacts: Artifact[] = profilesOfKind(st, kind).filter((a) => ids.has(a.id));
  const d = await svc.perRequest(tree, st, artifacts);
  const perRequest: ViewPerRequest | null =
    d.requests !== null && d.requests > 0
      ? {
          requests: d.requests,
          method: describeDivisor(d),
          measured: d.measured,
          profiles: d.profiles.map((p, i) => {
            const totals = summaryOf(artifacts[i]!).totals ?? {};
            return { ...p, total: Object.hasOwn(totals, sampleType) ? totals[sampleType]! : null };
          }),
        }
      : null;
  if (asked === 'per-request') {
    if (!perRequest)
      throw new ServiceError(
        'no-requests',
        `per-request needs a load test in stage "${st.name}" and its profiles to have a window (${describeDivisor(d)})`,
        { param: 'mode' },
      );
    return { unit: { mode: 'per-request', modeReason: null, perRequest }, divisor: perRequest.requests };
  }
  if (perRequest && d.measured)
    return {
      unit: {
        mode: 'per-request',
        modeReason: 'every profile of the stage has its own load run: per request',
        perRequest,
      },
      divisor: perRequest.requests,
    };
  return {
    unit: {
      ...ABSOLUTE,
      modeReason: `not every profile of the stage has its own load run (${describeDivisor(d)}): absolute (as go tool pprof)`,
    },
    divisor: 1,
  };
}

/** The unit of values divided per request, as the diff names it. */
function unitIn(unit: string, mode: ViewUnit['mode']): string {
  return mode === 'per-request' ? `${unit}/request` : mode === 'share' ? 'fraction' : unit;
}

/** A tree's values divided by `d`, in place (iterative: trees can be deep). */
function divideTree(root: { value: number; children: { value: number; children: unknown[] }[] }, d: number): void {
  type N = { value: number; children: N[] };
  const stack: N[] = [root as N];
  while (stack.length > 0) {
    const n = stack.pop()!;
    n.value /= d;
    for (const c of n.children) stack.push(c);
  }
}

/** A stage's flamegraph in the unit asked for (the figures as recorded when absolute: bytes unchanged). */
export async function flamegraphInUnit(
  svc: AnalysisService,
  tree: ComparisonTree,
  f: Recorded<Flamegraph>,
  asked: ViewModeParam,
): Promise<Flamegraph> {
  const { unit, divisor } = await chooseUnit(svc, tree, f.stageId, f.kind, f.sampleType, f.profiles, asked);
  if (unit.mode === 'absolute') return { ...f, ...unit };
  const d = unit.mode === 'share' ? f.total : divisor;
  if (!(d !== 0)) return { ...f, ...ABSOLUTE, modeReason: 'the stage total is zero: no share' };
  divideTree(f.tree, d);
  return {
    ...f,
    ...unit,
    unit: unitIn(f.unit, unit.mode),
    total: f.total / d,
    trim: { ...f.trim, prunedValue: f.trim.prunedValue / d },
  };
}

/** A function's sandwich in the unit asked for. */
export async function sandwichInUnit(
  svc: AnalysisService,
  tree: ComparisonTree,
  s: Recorded<Sandwich>,
  asked: ViewModeParam,
): Promise<Sandwich> {
  const { unit, divisor } = await chooseUnit(svc, tree, s.stageId, s.kind, s.sampleType, s.profiles, asked);
  if (unit.mode === 'absolute') return { ...s, ...unit };
  const d = unit.mode === 'share' ? s.total : divisor;
  if (!(d !== 0)) return { ...s, ...ABSOLUTE, modeReason: 'the stage total is zero: no share' };
  divideTree(s.callers, d);
  divideTree(s.callees, d);
  return {
    ...s,
    ...unit,
    unit: unitIn(s.unit, unit.mode),
    total: s.total / d,
    flat: s.flat / d,
    cum: s.cum / d,
  };
}

/** The trajectory as computed: every stage's points as recorded. */
export type RecordedTrajectory = Omit<Trajectory, 'mode' | 'modeReason' | 'stages'> & {
  stages: { stageId: string; name: string }[];
};

/**
 * The trajectory in the unit asked for: each stage's points divided by that stage's requests (per
 * request), by its total (share), or as recorded. `auto` is per request when every stage holding the
 * kind has its own run for each of its profiles, else as recorded.
 */
export async function trajectoryInUnit(
  svc: AnalysisService,
  tree: ComparisonTree,
  t: RecordedTrajectory,
  asked: ViewModeParam,
  granularity: Granularity = 'functions',
): Promise<Trajectory> {
  const as = (mode: Trajectory['mode'], modeReason: string | null, requests: (number | null)[] | null) => ({
    ...t,
    mode,
    modeReason,
    stages: t.stages.map((s, i) => ({ ...s, requests: requests?.[i] ?? null })),
  });
  if (asked === 'absolute' || t.kind === null) return as('absolute', null, null);
  if (asked === 'normalize')
    return as('absolute', 'normalize scales one stage to another: each stage reads as recorded', null);
  const scale = (divisors: (number | null)[]) =>
    t.functions.forEach((f) => {
      f.points = f.points.map((p, i) => {
        const d = divisors[i] ?? null;
        return p && d ? { ...p, flat: p.flat / d, cum: p.cum / d, total: p.total / d } : p;
      });
    });
  if (asked === 'share') {
    const totals = t.stages.map((_, i) => t.functions.find((f) => f.points[i])?.points[i]?.total ?? null);
    scale(totals.map((x) => (x ? x : null)));
    return { ...as('share', null, null), unit: 'fraction' };
  }
  const kind = t.kind;
  const divisors: {
    name: string;
    requests: number | null;
    measured: boolean;
    held: boolean;
    why: string;
    profiles: { artifact: Artifact; requests: number | null }[];
  }[] = [];
  for (const ref of t.stages) {
    const st = findStage(tree, ref.stageId);
    const held = profilesOfKind(st, kind).length > 0;
    const artifacts = profilesOfKind(st, kind);
    const d = held ? await svc.perRequest(tree, st, artifacts) : null;
    divisors.push({
      name: st.name,
      requests: d?.requests ?? null,
      measured: d?.measured ?? false,
      held,
      why: d ? describeDivisor(d) : '',
      profiles: artifacts.map((artifact, i) => ({ artifact, requests: d?.profiles[i]?.requests ?? null })),
    });
  }
  const missing = divisors.find((d) => d.held && !(d.requests !== null && d.requests > 0));
  if (asked === 'per-request' && missing)
    throw new ServiceError(
      'no-requests',
      `per-request needs a load test in stage "${missing.name}" and its profiles to have a window (${missing.why})`,
      { param: 'mode' },
    );
  const estimated = divisors.find((d) => d.held && !d.measured);
  if (asked === 'auto' && (missing || estimated)) {
    const d = (missing ?? estimated)!;
    return as(
      'absolute',
      `not every profile of stage "${d.name}" has its own load run (${d.why}): absolute (as go tool pprof)`,
      null,
    );
  }
  const requests = divisors.map((d) => (d.held ? d.requests : null));
  scale(requests);
  // The spread across a stage's profiles, per request too: each profile's cum over its own requests.
  for (const [i, d] of divisors.entries()) {
    if (d.profiles.length < 2 || !t.functions.some((f) => f.points[i]?.spread)) continue;
    const perProfile: Map<string, number>[] = [];
    for (const { artifact, requests: r } of d.profiles) {
      const p = await svc.stages.profile(artifact);
      const idx = p.sampleTypes.findIndex((x) => x.type === t.sampleType);
      const rows = idx < 0 || !r ? [] : flatCum(p, idx, undefined, granularityKeys(p, granularity));
      perProfile.push(new Map(rows.map((row) => [row.name, row.cum / r!])));
    }
    for (const f of t.functions) {
      const point = f.points[i];
      if (!point?.spread) continue;
      const xs = perProfile.map((m) => m.get(f.name) ?? 0);
      const e = estimate(xs);
      point.spread = e ? { n: e.n, min: minOf(xs), max: maxOf(xs), median: e.median, lo: e.lo, hi: e.hi } : null;
    }
  }
  return {
    ...as(
      'per-request',
      asked === 'auto' ? 'every profile of every stage has its own load run: per request' : null,
      requests,
    ),
    unit: `${t.unit}/request`,
  };
}
